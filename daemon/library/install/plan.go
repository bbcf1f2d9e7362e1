package install

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/install/stage"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// maxFiles bounds the files of one install (a multi-disc game has a few dozen at most).
const maxFiles = 500

// plannedFile is one RomM file and where it goes.
type plannedFile struct {
	file  romm.File
	rel   string // the stage's relative path: inside the folder for a multi-file game
	final string // path relative to the system folder once installed
}

// plan is what an install writes.
type plan struct {
	files    []plannedFile
	folder   string // the folder a multi-file game gets, "" for one file
	playlist *stage.Playlist
	gamePath string // relative to the system folder: what ES lists and launches
	bytes    int64
}

func (p plan) rels() []string {
	out := make([]string, len(p.files))
	for i, f := range p.files {
		out[i] = f.rel
	}
	return out
}

// discExts are the files a playlist lists, in the order a game's entry point is preferred.
var discExts = []string{".m3u", ".cue", ".gdi", ".ccd", ".chd", ".iso", ".cso", ".pbp"}

// planFiles picks the ROM's game files (RomM's category "game": manuals, soundtracks, screenshots
// and the like stay in RomM) and names them for the cabinet. One file goes into the system
// folder under its cleaned name; several keep RomM's layout in a folder named after the ROM, and
// a multi-disc game without its own playlist gets one (<folder>.m3u in the system folder, listing
// the discs), which is what ES lists and launches.
//
// Everything is decided before a byte is downloaded: sizes must add up without overflowing, the
// names written at the top of the system folder must not be ES's own (stage.CleanTopName), and
// what ES is to list (the file, the playlist, a disc, or a folder named like a game) must end in
// one of the system's extensions, else ES would never list the game.
func planFiles(rom romm.ROM, extensions []string) (plan, error) {
	var files []romm.File
	for _, f := range rom.Files {
		if f.Category == "" || f.Category == "game" {
			files = append(files, f)
		}
	}
	name := untrusted.Clean(rom.Name, 100)
	switch {
	case len(files) == 0:
		return plan{}, fmt.Errorf("RomM lists no game file for %s (only manuals or extras, or the ROM is missing from RomM's disk): nothing to install", name)
	case len(files) > maxFiles:
		return plan{}, fmt.Errorf("%s has %d files, more than the %d an install takes", name, len(files), maxFiles)
	}
	var p plan
	for _, f := range files {
		if f.SizeBytes < 0 {
			return plan{}, fmt.Errorf("RomM lists a negative size for a file of %s", name)
		}
		if f.SizeBytes > math.MaxInt64-p.bytes {
			return plan{}, fmt.Errorf("RomM lists sizes for the files of %s that add up to more than any disk holds: its record in RomM is broken; rescan the platform in RomM and search again", name)
		}
		p.bytes += f.SizeBytes
	}
	exts := strings.Join(extensions, " ")
	if len(files) == 1 && !rom.HasMultipleFiles {
		final, err := stage.CleanTopName(files[0].Name)
		if err != nil {
			return plan{}, fmt.Errorf("RomM's file name for %s cannot be used on the cabinet: %w", name, err)
		}
		if !stage.Listable(final, extensions) {
			return plan{}, fmt.Errorf("RomM's file %s of %s does not end in an extension this system takes (%s): EmulationStation would never list it, so it is not installed; ask the RomM admin to rename the file",
				untrusted.Clean(final, 100), name, exts)
		}
		p.files = []plannedFile{{file: files[0], rel: final, final: final}}
		p.gamePath = final
		return p, nil
	}
	folder, err := stage.CleanTopName(rom.FSName)
	if err != nil {
		return plan{}, fmt.Errorf("RomM's folder name for %s cannot be used on the cabinet: %w", name, err)
	}
	p.folder = folder
	seen := map[string]bool{}
	for _, f := range files {
		inner, err := stage.CleanRelPath(path.Join(f.Dir, f.Name))
		if err != nil {
			return plan{}, fmt.Errorf("RomM's file name %q in %s cannot be used on the cabinet: %w", untrusted.Clean(f.Name, 100), name, err)
		}
		if seen[strings.ToLower(inner)] { // exFAT folds case
			return plan{}, fmt.Errorf("two files of %s have the name %s on the cabinet", name, inner)
		}
		seen[strings.ToLower(inner)] = true
		p.files = append(p.files, plannedFile{file: f, rel: inner, final: folder + "/" + inner})
	}
	sort.Slice(p.files, func(i, j int) bool { return p.files[i].rel < p.files[j].rel })
	if stage.Listable(folder, extensions) {
		// ES lists a folder named with one of the system's extensions as one game (a .ps3 or
		// .pc folder) and does not look inside.
		p.gamePath = folder
		return p, nil
	}
	// The entry point: RomM's own playlist, else the discs of the first kind found (the .cue
	// files, not their .bin tracks), in name order; several get a playlist. Only kinds the
	// system lists count.
	var discs []string
	kind := ""
	for _, ext := range discExts {
		if !stage.Listable(ext, extensions) {
			continue
		}
		for _, f := range p.files {
			if strings.EqualFold(path.Ext(f.final), ext) && path.Dir(f.final) == folder {
				discs = append(discs, f.final)
			}
		}
		if len(discs) > 0 {
			kind = ext
			break
		}
	}
	pl := folder + ".m3u"
	switch {
	case kind == ".m3u":
		p.gamePath = discs[0]
	case len(discs) > 1 && stage.Listable(pl, extensions):
		p.playlist = &stage.Playlist{Name: pl, Lines: discs}
		p.gamePath = pl
	case len(discs) > 0:
		p.gamePath = discs[0]
	default:
		p.gamePath = firstListable(p.files, folder, extensions)
	}
	if p.gamePath == "" {
		return plan{}, fmt.Errorf("no file of %s ends in an extension this system takes (%s): EmulationStation would never list the game, so it is not installed; check the ROM's platform in RomM",
			name, exts)
	}
	return p, nil
}

// firstListable is the first file ES lists, in name order: one at the top of the game's folder,
// else one in a sub-folder ES looks into.
func firstListable(files []plannedFile, folder string, extensions []string) string {
	nested := ""
	for _, f := range files {
		if !stage.Listable(f.final, extensions) {
			continue
		}
		if path.Dir(f.final) == folder {
			return f.final
		}
		if nested == "" && esLooksInto(strings.TrimPrefix(path.Dir(f.final), folder+"/")) {
			nested = f.final
		}
	}
	return nested
}

// esLooksInto reports whether ES descends into every folder of dir (a path inside a game's
// folder): none is hidden or one of its media folders.
func esLooksInto(dir string) bool {
	for _, d := range strings.Split(dir, "/") {
		if stage.SkippedFolder(d) {
			return false
		}
	}
	return true
}
