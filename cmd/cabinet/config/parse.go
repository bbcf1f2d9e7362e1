package config

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what the parser accepts. batocera.conf is a few tens of KiB;
// anything far larger is the wrong file.
const (
	maxFileBytes = 4 << 20
	maxLineBytes = 64 << 10
)

// Entry is one cabinet.* assignment found in a file.
type Entry struct {
	Key, Value string
	Line       int
}

// ParseFile reads batocera.conf-format text the way batocera-settings-get
// does: one key=value per line, lines whose first non-blank character is #
// are comments, blanks around the key and after = are skipped, a trailing CR
// is dropped, a UTF-8 BOM is skipped, the value is otherwise kept as written
// (quotes included) and the FIRST occurrence of a key wins. Only cabinet.*
// keys are returned; problems with other lines are not ours to report, except
// lines that cannot be read at all. It never fails: every problem is a
// warning naming the line.
func ParseFile(data []byte, name string) (entries []Entry, warnings []string) {
	if len(data) > maxFileBytes {
		return nil, []string{fmt.Sprintf("%s: larger than %d MiB, not read; is it the right file?", name, maxFileBytes>>20)}
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	seen := map[string]int{}
	lineNo := 0
	for len(data) > 0 {
		lineNo++
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > maxLineBytes {
			if bytes.HasPrefix(bytes.TrimLeft(line, " \t"), []byte("cabinet.")) {
				warnings = append(warnings, fmt.Sprintf("%s line %d: longer than %d KiB, ignored", name, lineNo, maxLineBytes>>10))
			}
			continue
		}
		text := strings.TrimLeft(string(line), " \t")
		if text == "" || text[0] == '#' {
			continue
		}
		eq := strings.IndexByte(text, '=')
		if eq < 0 {
			if strings.HasPrefix(text, "cabinet.") {
				warnings = append(warnings, fmt.Sprintf("%s line %d: %q is not key=value, ignored", name, lineNo, clip(text)))
			}
			continue
		}
		k := strings.TrimRight(text[:eq], " \t")
		if !strings.HasPrefix(k, "cabinet.") {
			continue
		}
		if !utf8.ValidString(k) || strings.ContainsAny(k, "\x00 \t") {
			warnings = append(warnings, fmt.Sprintf("%s line %d: key %q is not a valid key name, ignored", name, lineNo, clip(k)))
			continue
		}
		v := strings.TrimLeft(text[eq+1:], " \t")
		if first, dup := seen[k]; dup {
			warnings = append(warnings, fmt.Sprintf("%s line %d: %s repeated; line %d wins (as batocera-settings-get; EmulationStation would keep the last)", name, lineNo, k, first))
			continue
		}
		seen[k] = lineNo
		entries = append(entries, Entry{Key: k, Value: v, Line: lineNo})
	}
	return entries, warnings
}

// clip shortens text quoted in messages.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	i := 80
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
