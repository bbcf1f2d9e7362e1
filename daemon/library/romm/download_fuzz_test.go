package romm

import (
	"path"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseContentRange: whatever a server sends, an accepted Content-Range is a range that can
// be: a start at or after 0 and a total past it (or unknown).
func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-99/100", "bytes 100-199/*", "bytes */100", "bytes 5-4/10", "bytes -1-3/4",
		"bytes 0-9/5", "bytes 9223372036854775807-9223372036854775807/9223372036854775807", " bytes 1-2/3 ", "items 0-1/2", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start, total, ok := parseContentRange(s)
		if !ok {
			return
		}
		if start < 0 || total < -1 || (total >= 0 && total <= start) {
			t.Fatalf("parseContentRange(%q) = %d, %d", s, start, total)
		}
		if !strings.Contains(s, strconv.FormatInt(start, 10)) {
			t.Fatalf("parseContentRange(%q): start %d is not in it", s, start)
		}
	})
}

// FuzzResourceRel: an accepted cover path stays below RomM's resources on RomM's own origin.
func FuzzResourceRel(f *testing.F) {
	for _, s := range []string{"roms/1/2/cover/big.png?ts=2024-01-01 10:00:00", "/assets/romm/resources/roms/1/2/cover/big.png?ts=x",
		"assets/romm/resources/roms/1/2/cover/small.png", "https://images.igdb.com/x.png", "//evil/x", "/api/roms",
		"roms/../../x", "roms//x", "./x", "roms/%2e%2e/x", "roms\\..\\x", "?ts=1", "#x", "roms/1/2/cover/big.png#frag"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rel, ok := resourceRel(s)
		if !ok {
			return
		}
		full := resourcesPath + rel
		if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "?#%\\") || strings.Contains(rel, "://") ||
			path.Clean(full) != full || !strings.HasPrefix(path.Clean(full), resourcesPath) {
			t.Fatalf("resourceRel(%q) = %q, which leaves RomM's resources", s, rel)
		}
	})
}
