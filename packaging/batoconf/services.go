package batoconf

import "strings"

// ServicesKey is the setting that lists the enabled services, separated by
// spaces, which S99userservices reads at boot and shutdown.
const ServicesKey = "system.services"

// ValidServiceName reports whether name is a name batocera-services and
// S99userservices accept: ^[_[:alpha:]][_[:alpha:][:digit:]]*$ in the C
// locale, so ASCII letters, digits and '_', not starting with a digit.
func ValidServiceName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// EnableService returns data edited as `batocera-services enable name`
// edits it, and whether it changed: nothing happens for an invalid name or
// a name already in the list; otherwise the name is added after the current
// value (kept as it is, odd spacing included) with one space, or becomes the
// value when there is none, through Set's rules (so every system.services
// line, a commented one too, is rewritten). Unchanged data is returned as
// is. data should be at most MaxSize (ReadFile ensures it).
func EnableService(data []byte, name string) ([]byte, bool) {
	if !ValidServiceName(name) {
		return data, false
	}
	current := enabledServices(data)
	for _, s := range serviceWords(current) {
		if s == name {
			return data, false
		}
	}
	value := name
	if current != "" {
		value = current + " " + name
	}
	return set(data, []KV{{ServicesKey, value}}), true
}

// DisableService returns data edited as `batocera-services disable name`
// edits it, and whether it changed: when name is one of the list's words,
// system.services is set to the other words joined by single spaces
// (possibly "system.services="); otherwise nothing happens. Like the
// script, it does not check the name. Unchanged data is returned as is.
// data should be at most MaxSize (ReadFile ensures it).
func DisableService(data []byte, name string) ([]byte, bool) {
	var kept []string
	found := false
	for _, s := range serviceWords(enabledServices(data)) {
		if s == name {
			found = true
		} else {
			kept = append(kept, s)
		}
	}
	if !found {
		return data, false
	}
	return set(data, []KV{{ServicesKey, strings.Join(kept, " ")}}), true
}

// enabledServices is the script's
// enabled_services="$(/usr/bin/batocera-settings-get system.services)":
// the value, or "" when the key is absent; the command substitution also
// drops NUL bytes (bash warns and ignores them). It would strip trailing
// newlines too, but a value has none.
func enabledServices(data []byte) string {
	v, _ := Get(data, ServicesKey)
	return strings.ReplaceAll(v, "\x00", "")
}

// serviceWords is bash's word splitting of the unquoted ${enabled_services}
// with the default IFS: fields separated by runs of spaces, tabs and
// newlines. Bash would then expand glob characters against the working
// directory; a word with '*', '?' or '[' is no valid service name, so it is
// kept literally here (what bash does when nothing matches).
func serviceWords(list string) []string {
	return strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
}

// RemoveKeys returns data without the uncommented lines that set a key for
// which remove returns true (the key as Get reads it: leading whitespace
// and the space before '=' trimmed), each with its '\n'. Every other byte,
// the byte order mark, comments (a commented "#cabinet.x=" line included),
// '\r's and a missing final newline, is kept. It is how `cabinet uninstall
// --purge` takes its cabinet.* settings out. data should be at most MaxSize
// (ReadFile ensures it).
func RemoveKeys(data []byte, remove func(key string) bool) []byte {
	out := make([]byte, 0, len(data))
	rest := data
	if bom := skipBOM(data); len(bom) != len(data) {
		out = append(out, data[:len(data)-len(bom)]...)
		rest = bom
	}
	for len(rest) > 0 {
		line, next := nextLine(rest)
		whole := rest[:len(rest)-len(next)] // the line with its '\n', if any
		rest = next
		if key, _, ok := setting(line); ok && remove(string(key)) {
			continue
		}
		out = append(out, whole...)
	}
	return out
}
