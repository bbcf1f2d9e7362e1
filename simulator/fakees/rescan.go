package fakees

import (
	"io/fs"
	"path"
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// maxFolderDepth bounds the walk below a system folder. ES has none (a
// symlink loop recurses until it crashes); the fake stops instead.
const maxFolderDepth = 16

// excludedFolders are the subfolders SystemData::populateFolder never
// looks into (SystemData.cpp, "excludedFolders", plus "artwork", reserved
// for MAME artwork): media folders, so uploaded covers never become games.
var excludedFolders = map[string]bool{
	"artwork": true, "media": true, "medias": true, "images": true, "manuals": true, "videos": true,
	"assets": true, "html_arrm": true, "bezels": true, "fonts": true, "logs": true, "screenshots": true,
}

// rescan is the disk half of GuiMenu::updateGameLists (ui held): every
// system's ROM folder read the way ES reads it, and the library made to
// match (library.Sync). Without a ROMs hook the library stays as it is.
func (s *Server) rescan() {
	if s.cfg.ROMs == nil {
		return
	}
	for _, sys := range s.lib.Systems() {
		fsys := s.cfg.ROMs(sys.Name)
		if fsys == nil {
			continue
		}
		// Sync only fails for an unknown system, and sys comes from the
		// library.
		s.lib.Sync(sys.Name, populateFolder(fsys, sys, ".", 0))
	}
}

// populateFolder is SystemData::populateFolder with ES's defaults
// (ShowHiddenFiles off, PreloadMedias off): the paths, relative to the
// system folder, of the entries ES makes games, depth first. A hidden entry
// (a name starting with ".") is skipped; an entry whose extension the
// system accepts is a game, a folder included ("folders *can* also match
// the extension", for higan); any other folder is a folder entry, which the
// API does not list, and its games are listed, unless ES never looks into
// it. A folder that cannot be read holds nothing, as when ES's opendir
// fails. Unlike ES, entries are taken in name order rather than readdir
// order, and MAME BIOS and device sets are not told apart (isArcadeAsset).
func populateFolder(fsys fs.FS, sys library.System, dir string, depth int) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if name == "" || name[0] == '.' {
			continue
		}
		rel := path.Join(dir, name)
		if sys.Accepts(name) {
			files = append(files, rel)
			continue
		}
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			// ES stats the target of a symlink.
			fi, err := fs.Stat(fsys, rel)
			isDir = err == nil && fi.IsDir()
		}
		if !isDir || depth >= maxFolderDepth || skipFolder(sys.Name, strings.ToLower(name)) {
			continue
		}
		files = append(files, populateFolder(fsys, sys, rel, depth+1)...)
	}
	return files
}

// skipFolder reports a subfolder (lowercased name) ES does not look into.
func skipFolder(system, fn string) bool {
	switch {
	case excludedFolders[fn], strings.HasPrefix(fn, "downloaded_"):
		return true
	case system == "wiiu" && (fn == "content" || fn == "meta"):
		return true
	case system == "vpinball" && fn == "roms":
		return true
	}
	return false
}
