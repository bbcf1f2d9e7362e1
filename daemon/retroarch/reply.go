package retroarch

import (
	"fmt"
	"strconv"
	"strings"
)

// State is what GET_STATUS says RetroArch is doing. The values are the ones
// Cabinet reports (MCP batocera_get_status, retroarch.state).
type State string

// States GET_STATUS can report.
const (
	StatePlaying     State = "playing"
	StatePaused      State = "paused"
	StateContentless State = "contentless"
)

// Status is a parsed GET_STATUS reply. System and Game come from file and core
// names on the cabinet: untrusted text, clean it before showing it anywhere.
type Status struct {
	State State
	// System is the core info systemid ("nes", "super_nes"), or the core's
	// library name ("Nestopia") when RetroArch could not find the core info.
	System string
	// Game is the content file name without directory and extension.
	Game string
	// CRC32 is the content CRC; 0 when RetroArch did not compute it (large or
	// fullpath content).
	CRC32 uint32
}

const (
	statusPrefix = "GET_STATUS "
	configPrefix = "GET_CONFIG_PARAM "
	crcMarker    = ",crc32="
	unsupported  = "unsupported"
	maxVersion   = 32
)

// parseStatus parses a GET_STATUS reply:
//
//	GET_STATUS PLAYING <sysid>,<basename>,crc32=<hex>\n
//	GET_STATUS PAUSED <sysid>,<basename>,crc32=<hex>\n
//	GET_STATUS CONTENTLESS            (no newline)
//
// The basename may contain commas, so the system ends at the first comma and
// the CRC starts at the last ",crc32=". A missing or extra newline is accepted.
func parseStatus(b []byte) (Status, error) {
	s := strings.TrimRight(string(b), "\n")
	rest, ok := strings.CutPrefix(s, statusPrefix)
	if !ok {
		return Status{}, fmt.Errorf("%w: GET_STATUS reply without its prefix", errBadReply)
	}
	if rest == "CONTENTLESS" {
		return Status{State: StateContentless}, nil
	}
	word, payload, _ := strings.Cut(rest, " ")
	var st Status
	switch word {
	case "PLAYING":
		st.State = StatePlaying
	case "PAUSED":
		st.State = StatePaused
	default:
		return Status{}, fmt.Errorf("%w: unknown GET_STATUS state %q", errBadReply, truncate(word))
	}
	sys, tail, ok := strings.Cut(payload, ",")
	if !ok {
		return Status{}, fmt.Errorf("%w: GET_STATUS without system and game", errBadReply)
	}
	i := strings.LastIndex(tail, crcMarker)
	if i < 0 {
		return Status{}, fmt.Errorf("%w: GET_STATUS without crc32", errBadReply)
	}
	crc, err := parseCRC(tail[i+len(crcMarker):])
	if err != nil {
		return Status{}, err
	}
	st.System, st.Game, st.CRC32 = sys, tail[:i], crc
	return st, nil
}

// parseCRC accepts RetroArch's %x: 1–8 hex digits, lower-case in practice.
func parseCRC(h string) (uint32, error) {
	if len(h) == 0 || len(h) > 8 {
		return 0, fmt.Errorf("%w: GET_STATUS crc32 %q", errBadReply, truncate(h))
	}
	for i := 0; i < len(h); i++ {
		if !isHex(h[i]) {
			return 0, fmt.Errorf("%w: GET_STATUS crc32 %q", errBadReply, truncate(h))
		}
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%w: GET_STATUS crc32 %q", errBadReply, truncate(h))
	}
	return uint32(v), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// formatStatus renders st as RetroArch does; the fuzz test uses it to check
// that parsing keeps every field.
func formatStatus(st Status) string {
	switch st.State {
	case StatePlaying, StatePaused:
		return fmt.Sprintf("%s%s %s,%s,crc32=%x\n", statusPrefix, strings.ToUpper(string(st.State)), st.System, st.Game, st.CRC32)
	}
	return statusPrefix + "CONTENTLESS"
}

// configReplyPrefix is what a reply to GET_CONFIG_PARAM <name> starts with.
func configReplyPrefix(name string) string { return configPrefix + name + " " }

// parseConfigParam parses "GET_CONFIG_PARAM <name> <value>" (no newline in
// 1.14; one is tolerated). The value may be empty. "unsupported" wraps
// ErrUnsupported.
func parseConfigParam(b []byte, name string) (string, error) {
	s := strings.TrimSuffix(string(b), "\n")
	v, ok := strings.CutPrefix(s, configReplyPrefix(name))
	if !ok {
		return "", fmt.Errorf("%w: not a GET_CONFIG_PARAM %s reply", errBadReply, name)
	}
	if v == unsupported {
		return "", ErrUnsupported
	}
	return v, nil
}

// parseVersion parses the VERSION reply, e.g. "1.14.0\n". It has no prefix,
// so the shape is checked instead: it starts with a digit and uses only
// characters of a version string, which rules out stale replies to other
// commands.
func parseVersion(b []byte) (string, error) {
	s := strings.TrimRight(string(b), "\n")
	if s == "" || len(s) > maxVersion || s[0] < '0' || s[0] > '9' {
		return "", fmt.Errorf("%w: VERSION reply %q", errBadReply, truncate(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			c == '.' || c == '-' || c == '+' || c == '_'
		if !ok {
			return "", fmt.Errorf("%w: VERSION reply %q", errBadReply, truncate(s))
		}
	}
	return s, nil
}

// truncate bounds reply text quoted in errors.
func truncate(s string) string {
	const limit = 40
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}
