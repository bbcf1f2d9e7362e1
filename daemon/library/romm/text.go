package romm

import (
	"strings"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Caps, in runes, on text from RomM. Names fit a list line; a summary fits a paragraph or two.
const (
	capName        = 200
	capFileName    = 255 // a file name on ext4 is at most 255 bytes anyway
	capSummary     = 2000
	capDescription = 2000
	capSlug        = 64
	capListItem    = 60 // a genre or region
	capListLen     = 20 // genres or regions per ROM
	capPlayers     = 20
	capCategory    = 20
	capCollection  = 512 // a virtual collection id is urlsafe base64 of a small JSON object
)

// Bounds on list lengths: far above real libraries, low enough that a hostile answer inside the
// 16 MiB body bound cannot make the tools build huge results.
const (
	maxPlatforms   = 2000
	maxCollections = 5000
	maxFiles       = 10000
	maxMembers     = 10000
)

func cleanLine(s string, max int) string { return untrusted.Clean(s, max) }
func cleanText(s string, max int) string { return untrusted.CleanText(s, max) }

// cleanList cleans each item, drops empty and repeated ones, and keeps at most capListLen.
func cleanList(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(in), capListLen))
	seen := make(map[string]bool, len(in))
	for _, s := range in {
		if len(out) == capListLen {
			break
		}
		s = cleanLine(s, capListItem)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hexHash returns h lowercased when it is n hex digits, else "". RomM sends "" or null when it
// skips hashing, and a schema mock sends "string": a hash that cannot be checked is no hash.
func hexHash(h string, n int) string {
	if len(h) != n {
		return ""
	}
	for i := 0; i < n; i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return ""
		}
	}
	return strings.ToLower(h)
}

func crc(h string) string  { return hexHash(h, 8) }
func md5(h string) string  { return hexHash(h, 32) }
func sha1(h string) string { return hexHash(h, 40) }
