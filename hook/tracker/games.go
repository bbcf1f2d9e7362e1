package tracker

import (
	"hash/fnv"
	"path"
	"strings"
	"time"
)

// gameKey identifies a game by its ROM path for matching reports of one launch. Backslashes are
// dropped so a path ES escaped (es-events.md §4) still matches the true one if the hook could not
// undo it.
func gameKey(p string) string {
	if p == "" {
		return ""
	}
	if strings.Contains(p, `\`) {
		p = strings.ReplaceAll(p, `\`, "")
	}
	return path.Clean(p)
}

// eventName is the best name an event gives: the display name, else the file stem, else the ROM file
// name without its extension.
func eventName(ev Event) string {
	if n := strings.TrimSpace(ev.Name); n != "" {
		return n
	}
	if n := strings.TrimSpace(ev.Stem); n != "" {
		return n
	}
	if ev.Path == "" {
		return ""
	}
	base := path.Base(gameKey(ev.Path))
	if base == "." || base == "/" {
		return ""
	}
	return strings.TrimSuffix(base, path.Ext(base))
}

// systemFromPath is the roms folder a ROM lives in (/userdata/roms/<system>/…), "" when the path is
// not under a roms folder.
func systemFromPath(p string) string {
	p = gameKey(p)
	i := strings.Index(p, "/roms/")
	if i < 0 {
		return ""
	}
	rest := p[i+len("/roms/"):]
	j := strings.IndexByte(rest, '/')
	if j <= 0 {
		return ""
	}
	return rest[:j]
}

// sessionID is unique, sortable and deterministic: the UTC start to the millisecond, then a hash of
// the system and game, e.g. "20260102T190000.123Z-1c2d3e4f". Replays of the same events give the same
// id, so a session is never logged twice under two ids.
func sessionID(started time.Time, system, key, name string) string {
	h := fnv.New32a()
	h.Write([]byte(system))
	h.Write([]byte{0})
	if key != "" {
		h.Write([]byte(key))
	} else {
		h.Write([]byte(name))
	}
	const hexdigits = "0123456789abcdef"
	sum := h.Sum32()
	var suffix [8]byte
	for i := 7; i >= 0; i-- {
		suffix[i] = hexdigits[sum&0xf]
		sum >>= 4
	}
	return started.UTC().Format("20060102T150405.000Z") + "-" + string(suffix[:])
}

// EntryExtension marks Cabinet's own entries in ES (package packaging): files ES "launches" to run
// `cabinet entry`, which are no games.
const EntryExtension = ".cabinet"

// IsEntry says whether a launch is one of Cabinet's entries: never a session, never counted,
// never ended or warned about by the household's rules.
func IsEntry(p string) bool {
	return strings.HasSuffix(strings.ToLower(strings.TrimRight(p, `"' `)), EntryExtension)
}
