package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const boolExpect = "a boolean: 1/0, true/false, yes/no or on/off"

// ParseBool accepts the spellings Batocera users write: 1/0, true/false,
// yes/no, on/off (any case).
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, strconv.ErrSyntax
}

func isBool(v string) bool { _, err := ParseBool(v); return err == nil }

func boolText(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func intRange(lo, hi int) func(string) bool {
	return func(v string) bool {
		n, err := strconv.Atoi(v)
		return err == nil && n >= lo && n <= hi
	}
}

func oneOf(v string, options ...string) bool {
	for _, o := range options {
		if v == o {
			return true
		}
	}
	return false
}

// printable: valid UTF-8, no control or format characters, rune count in range.
func printable(v string, lo, hi int) bool {
	if !utf8.ValidString(v) {
		return false
	}
	n := 0
	for _, r := range v {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
		n++
	}
	return n >= lo && n <= hi
}

func secretText(v string) bool {
	if !utf8.ValidString(v) || len(v) > 1024 {
		return false
	}
	return !strings.ContainsAny(v, "\x00\r\n")
}

// IsCabinetID reports whether v is a valid cabinet id: 1 to 48 of [a-z0-9_].
// The id builds HA unique_ids and MQTT topics, so it is deliberately narrow.
func IsCabinetID(v string) bool {
	if len(v) == 0 || len(v) > 48 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func clientID(v string) bool {
	if len(v) == 0 || len(v) > 64 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func absPath(v string) bool {
	return utf8.ValidString(v) && len(v) <= 4096 && path.IsAbs(v) && !strings.ContainsAny(v, "\x00\r\n")
}

func hostPort(v string) bool {
	host, port, err := net.SplitHostPort(v)
	if err != nil || strings.ContainsAny(host, "/ \x00") {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

func httpURL(v string) bool {
	u, err := url.Parse(v)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil
}

func brokerURL(v string) bool {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.User != nil {
		return false
	}
	switch u.Scheme {
	case "tcp", "mqtt", "ssl", "tls", "mqtts", "ws", "wss":
	default:
		return false
	}
	return u.Port() != "" || u.Hostname() != ""
}

// topicPrefix: one or more MQTT topic levels, no wildcards, no empty level.
func topicPrefix(v string) bool {
	if v == "" || len(v) > 128 || !utf8.ValidString(v) || strings.ContainsAny(v, "+#\x00 ") {
		return false
	}
	for _, level := range strings.Split(v, "/") {
		if level == "" {
			return false
		}
	}
	return true
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// splitWords splits a list separated by commas or blanks.
func splitWords(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// teamDomain: a bare host name with at least one dot, "https://" and a
// trailing "/" allowed (the verifier drops them).
func teamDomain(v string) bool {
	d := strings.TrimRight(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(v)), "https://"), "/")
	if d == "" || len(d) > 253 || !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// hexDigits: exactly n hex digits, either case.
func hexDigits(v string, n int) bool {
	if len(v) != n {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// emailList: addresses (me@example.com) and domains (@example.com), one
// "@" each, something after it.
func emailList(v string) bool {
	for _, e := range splitWords(v) {
		at := strings.IndexByte(e, '@')
		if at < 0 || at == len(e)-1 || strings.Count(e, "@") != 1 || len(e) > 320 || !printable(e, 1, 320) {
			return false
		}
	}
	return true
}

func hostList(v string) bool {
	for _, h := range splitList(v) {
		if len(h) > 253 || strings.ContainsAny(h, "/ \x00@") || !utf8.ValidString(h) {
			return false
		}
	}
	return true
}

func originList(v string) bool {
	for _, o := range splitList(v) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return false
		}
	}
	return true
}

// platformSlug is what a RomM slug or a Batocera system folder looks like.
func platformSlug(v string) bool {
	if v == "" || len(v) > 64 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == '+') { // msx2+ is a Batocera folder
			return false
		}
	}
	return true
}

// platformMap checks cabinet.romm.platform_map: slug:folder pairs, each
// slug once.
func platformMap(v string) bool {
	seen := map[string]bool{}
	for _, pair := range splitList(v) {
		slug, folder, ok := strings.Cut(pair, ":")
		if !ok || !platformSlug(slug) || !platformSlug(folder) || seen[slug] {
			return false
		}
		seen[slug] = true
	}
	return true
}

func parsePlatformMap(v string) map[string]string {
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for _, pair := range splitList(v) {
		if slug, folder, ok := strings.Cut(pair, ":"); ok {
			m[slug] = folder
		}
	}
	return m
}

func platformMapText(m map[string]string) string {
	pairs := make([]string, 0, len(m))
	for slug, folder := range m {
		pairs = append(pairs, slug+":"+folder)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// ParseSize reads a size: a whole number of bytes, or one followed by K, M, G
// or T (powers of 1024; "KiB", "MB" and the like are read the same way).
func ParseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	num := strings.TrimRightFunc(s, unicode.IsLetter)
	unit := strings.ToUpper(strings.TrimSpace(s[len(num):]))
	num = strings.TrimSpace(num)
	shift := 0
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I") {
	case "":
		if unit != "" && unit != "B" {
			return 0, fmt.Errorf("size %q: unknown unit", v)
		}
	case "K":
		shift = 10
	case "M":
		shift = 20
	case "G":
		shift = 30
	case "T":
		shift = 40
	default:
		return 0, fmt.Errorf("size %q: unknown unit", v)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: not a whole number", v)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q: too large", v)
	}
	return n << shift, nil
}

// SizeText writes n the way ParseSize reads it, in the largest unit it is a
// whole number of.
func SizeText(n int64) string {
	for _, u := range []struct {
		shift  int
		suffix string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// systemList: Batocera system folders (the platform slugs' alphabet), separated by commas.
func systemList(v string) bool {
	for _, s := range splitList(v) {
		if !platformSlug(s) {
			return false
		}
	}
	return true
}
