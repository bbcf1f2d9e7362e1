package stage

import (
	"fmt"
	"path"
	"strings"
	"unicode"
)

// The names below are EmulationStation's and Batocera's own in a system folder
// (/userdata/roms/<system>/), read in batocera-linux/batocera-emulationstation
// at commit 71dd88b9:
//
//   - gamelist.xml: the system's game list, read first from the system folder
//     (es-app/src/SystemData.cpp, getGamelistPath, line 1385). A game list from a
//     server would rename, hide or point ES's games anywhere.
//   - Folders ES never looks into (populateFolder, lines 359-387): "artwork"
//     (MAME's), the scrapers' media folders "media", "medias", "images",
//     "manuals", "videos", "downloaded_*", and "assets", "html_arrm", "bezels",
//     "fonts", "logs", "screenshots". A game installed there is never listed, and
//     a file of that name blocks the scraper's folder.
//   - Names starting with '.': hidden, so never listed (populateFolder skips
//     hidden entries, lines 331-333, and dot folders always, line 386).
//   - "<game>.keys", "padto.keys" and "<game>.p2k.cfg": a game's pad-to-keyboard
//     mapping, which ES and evmapy load beside the game (es-app/src/FileData.cpp,
//     getKeyboardMappingFilePath and hasP2kFile, lines 1660-1700).
//   - es_*.cfg (es_systems.cfg, es_systems_<name>.cfg, es_features.cfg,
//     es_settings.cfg, es_input.cfg): ES's configuration files
//     (SystemData.cpp lines 794-797 and 1314-1322, CustomFeatures.cpp line 100).
//     They live in ES's own folders, not here, but no game is called that and
//     a copy in the wrong place only misleads.
//   - _info.txt: Batocera puts one in every system folder, listing the
//     extensions the system takes (Batocera's wiki, "Add games/BIOS files").
var esFolders = map[string]bool{
	"artwork": true, "media": true, "medias": true, "images": true, "manuals": true, "videos": true,
	"assets": true, "html_arrm": true, "bezels": true, "fonts": true, "logs": true, "screenshots": true,
}

// ReservedReason says why name cannot be written at the top of a system folder,
// "" when it can. name is one path element as CleanName leaves it; the
// comparison ignores case (exFAT folds it, and ES lowercases folder names
// before comparing).
func ReservedReason(name string) string {
	n := strings.ToLower(name)
	switch {
	case strings.HasPrefix(n, "."):
		return "a name starting with '.' is hidden: EmulationStation never lists it"
	case n == "gamelist.xml":
		return "gamelist.xml is the system's game list, which EmulationStation reads"
	case SkippedFolder(n):
		return n + " is a folder EmulationStation keeps for pictures, videos, manuals or assets and never lists games in"
	case strings.HasSuffix(n, ".keys"), strings.HasSuffix(n, ".p2k.cfg"):
		return "a .keys or .p2k.cfg file is a game's pad-to-keyboard mapping, which EmulationStation loads beside the game"
	case strings.HasPrefix(n, "es_") && strings.HasSuffix(n, ".cfg"):
		return n + " is the name of one of EmulationStation's configuration files"
	case n == "_info.txt":
		return "_info.txt is Batocera's note on what goes in the system folder"
	}
	return ""
}

// SkippedFolder reports whether EmulationStation never looks into a folder of
// this name, wherever it is below a system folder.
func SkippedFolder(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, ".") || esFolders[n] || strings.HasPrefix(n, "downloaded_")
}

// CleanTopName is CleanName for a name written at the top of a system folder
// (a game's file, its folder or its playlist): it refuses, rather than renames,
// a name that starts with '.' once invisible characters and surrounding space
// are gone, and any name ReservedReason gives a reason for.
func CleanTopName(raw string) (string, error) {
	visible := strings.TrimLeftFunc(strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return r
	}, raw), unicode.IsSpace)
	switch {
	case visible == ".." || strings.HasPrefix(visible, "../") || strings.HasPrefix(visible, `..\`):
		return "", fmt.Errorf("clean name %q: it climbs out of the system folder with \"..\"; ask the RomM admin to rename the file: %w", raw, errBadName)
	case strings.HasPrefix(visible, "."):
		return "", fmt.Errorf("clean name %q: a name starting with '.' is hidden: EmulationStation never lists it; ask the RomM admin to rename the file: %w", raw, errBadName)
	}
	name, err := CleanName(raw)
	if err != nil {
		return "", err
	}
	if why := ReservedReason(name); why != "" {
		return "", fmt.Errorf("clean name %q: %s, so Cabinet never writes it into a system folder: %w", raw, why, errBadName)
	}
	return name, nil
}

// Listable reports whether EmulationStation lists a file of this name for a
// system of these extensions: the text from the name's last '.' on, lowercased,
// is one of them (ES lowercases both: SystemData.cpp lines 1124-1130 and 337,
// isValidExtension in SystemData.h). A folder is listed as a game by the same
// rule (populateFolder, lines 337-353).
func Listable(name string, extensions []string) bool {
	ext := strings.ToLower(path.Ext(name))
	if ext == "" {
		return false
	}
	for _, e := range extensions {
		if strings.ToLower(e) == ext {
			return true
		}
	}
	return false
}
