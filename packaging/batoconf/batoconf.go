// Package batoconf reads and edits batocera.conf exactly as Batocera's own
// tools do, so `cabinet install` can save its settings and enable its
// service on a system where those tools are missing or cannot be run.
//
// Get is batocera-settings-get and Set is batocera-settings-set (without
// --validate), both from mini_settings 0.0.3, the version Batocera pins;
// EnableService and DisableService are what `batocera-services enable|disable`
// does to the file. The tests hold every one of them to the real programs
// byte for byte. The rules they share:
//   - a file is lines split on '\n'; a UTF-8 byte order mark at its start is
//     skipped (and Set drops it);
//   - whitespace is only ' ' and '\t';
//   - a key is what lies between the line's leading whitespace and the first
//     '=', less trailing whitespace; a line whose first non-blank byte is '#'
//     is a comment to Get, but Set still matches the key after the '#'
//     (and one more run of whitespace) and turns that line into the setting.
package batoconf

import (
	"bytes"
	"fmt"
	"strings"
)

// MaxSize bounds the batocera.conf this package accepts. The real file is
// tens of KiB; anything past 4 MiB is not a batocera.conf but a fault (a
// runaway writer, the wrong file), and refusing it keeps a bad file from
// being copied around in memory and written back.
const MaxSize = 4 << 20

// KV is one setting for Set.
type KV struct {
	Key, Value string
}

// Get returns the value of key the way batocera-settings-get does: the first
// uncommented line whose key is key wins; the value is the rest of the line
// after '=' with leading whitespace skipped and one trailing '\r' removed,
// quotes and trailing spaces kept. ok is false when no line sets key (the
// tool's non-zero exit). data should be at most MaxSize (ReadFile ensures
// it); Get itself has no limit.
func Get(data []byte, key string) (value string, ok bool) {
	for rest := skipBOM(data); len(rest) > 0; {
		var line []byte
		line, rest = nextLine(rest)
		k, v, ok := setting(line)
		if !ok || string(k) != key {
			continue
		}
		v = skipLeadingWhitespace(v)
		if n := len(v); n > 0 && v[n-1] == '\r' {
			v = v[:n-1]
		}
		return string(v), true
	}
	return "", false
}

// Set returns data with each kv set the way batocera-settings-set sets it:
//   - every line, commented or not, whose key is a kv's key is rewritten in
//     place as "key=value" (its indentation, comment mark, spacing around
//     '=' and '\r' go);
//   - kvs whose key no line has are appended in argument order;
//   - the byte order mark is dropped and every line, the last one included,
//     ends with '\n';
//   - everything else is kept byte for byte.
//
// Like the tool, a key given twice takes the first value for the lines that
// have it and appends "key=second". Missing or empty data is an empty file.
//
// Set refuses data larger than MaxSize, and keys and values the tool would
// write but batocera-settings-get would not read back as given (see
// ValidKey and ValidValue), so a setting Set writes is the setting Batocera
// reads.
func Set(data []byte, kvs ...KV) ([]byte, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("set batocera.conf: %d bytes is more than the %d a batocera.conf can be: check that this is the right file", len(data), MaxSize)
	}
	for _, kv := range kvs {
		if err := ValidKey(kv.Key); err != nil {
			return nil, fmt.Errorf("set batocera.conf: %w", err)
		}
		if err := ValidValue(kv.Value); err != nil {
			return nil, fmt.Errorf("set batocera.conf: key %q: %w", kv.Key, err)
		}
	}
	return set(data, kvs), nil
}

// ValidKey says why batocera-settings-get would not find key after Set
// wrote it, or returns nil. A key must be non-empty; must not contain
// '\n', '\0' or '=' (the line would split or read as another key) nor
// '\r' (which editors and Windows tools take for a line end);
// must not start or end with a space or tab (the readers trim them) nor
// start with '#' (a comment).
func ValidKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("empty key: name the setting")
	case strings.ContainsAny(key, "\n\r\x00="):
		return fmt.Errorf("key %q contains a newline, carriage return, NUL or '=': batocera.conf keys cannot", key)
	case isWhitespace(key[0]) || isWhitespace(key[len(key)-1]):
		return fmt.Errorf("key %q starts or ends with a space or tab, which batocera.conf readers drop: trim it", key)
	case key[0] == '#':
		return fmt.Errorf("key %q starts with '#', which makes the line a comment: rename it", key)
	}
	return nil
}

// ValidValue says why batocera-settings-get would not return value as given
// after Set wrote it, or returns nil: a value must not contain '\n' or '\0'
// (one line, one C string), start with a space or tab (skipped on reading)
// or end with '\r' (stripped on reading).
func ValidValue(value string) error {
	switch {
	case strings.ContainsAny(value, "\n\x00"):
		return fmt.Errorf("value %q contains a newline or NUL: a batocera.conf value is one line of text", value)
	case value != "" && isWhitespace(value[0]):
		return fmt.Errorf("value %q starts with a space or tab, which batocera-settings-get skips: trim it", value)
	case strings.HasSuffix(value, "\r"):
		return fmt.Errorf("value %q ends with a carriage return, which batocera-settings-get strips: remove it", value)
	}
	return nil
}

// set is mini_settings_set_sized without validation, line for line. The
// service edits call it directly: the list they write back may end in '\r'
// (a word of the old list), which the tool writes without complaint.
func set(data []byte, kvs []KV) []byte {
	size := len(data)
	for _, kv := range kvs {
		size += len(kv.Key) + len(kv.Value) + 2
	}
	out := make([]byte, 0, size)
	written := make([]bool, len(kvs))
	for rest := skipBOM(data); len(rest) > 0; {
		var line []byte
		line, rest = nextLine(rest)
		i := match(line, kvs)
		if i < 0 {
			out = append(append(out, line...), '\n')
			continue
		}
		out = appendKV(out, kvs[i])
		written[i] = true
	}
	for i, kv := range kvs {
		if !written[i] {
			out = appendKV(out, kv)
		}
	}
	return out
}

// match is the index of the first kv whose key is line's, counting a
// commented-out "#key=" line, or -1.
func match(line []byte, kvs []KV) int {
	key := skipLeadingWhitespace(line)
	if len(key) > 0 && key[0] == '#' {
		key = skipLeadingWhitespace(key[1:])
	}
	eq := bytes.IndexByte(key, '=')
	if eq < 0 {
		return -1
	}
	key = skipTrailingWhitespace(key[:eq])
	for i, kv := range kvs {
		if string(key) == kv.Key {
			return i
		}
	}
	return -1
}

func appendKV(out []byte, kv KV) []byte {
	out = append(out, kv.Key...)
	out = append(out, '=')
	out = append(out, kv.Value...)
	return append(out, '\n')
}

// setting splits an uncommented "key=value" line into its trimmed key and
// the raw bytes after '='; ok is false for blank lines, comments and lines
// without '='.
func setting(line []byte) (key, value []byte, ok bool) {
	rest := skipLeadingWhitespace(line)
	if len(rest) == 0 || rest[0] == '#' {
		return nil, nil, false
	}
	key, value, ok = bytes.Cut(rest, []byte{'='})
	if !ok {
		return nil, nil, false
	}
	return skipTrailingWhitespace(key), value, true
}

// nextLine splits data at its first '\n'; a last line without one is a
// line too (the tools' loop, which stops only at the end of the data).
func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// The helpers of mini_settings_ascii.h.

func isWhitespace(c byte) bool { return c == ' ' || c == '\t' }

func skipLeadingWhitespace(b []byte) []byte {
	for len(b) > 0 && isWhitespace(b[0]) {
		b = b[1:]
	}
	return b
}

func skipTrailingWhitespace(b []byte) []byte {
	for len(b) > 0 && isWhitespace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func skipBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
}
