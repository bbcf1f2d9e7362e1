package fakeromm

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// Tests add ROMs and platforms of their own after New: a hostile file name,
// an arcade set, a ROM whose recorded hash is wrong. They are appended after
// the fixture (new ids, new RomFile ids), so the fixture's ids and counts
// stay what tests rely on, and served like fixture ROMs: GET /api/roms/{id},
// searches, downloads, hashes computed by the scanner's rule (scanFiles).

// ROMSpec describes a ROM for AddROM.
type ROMSpec struct {
	PlatformID int
	// Name is the ROM's name (RomM's, from its metadata); "" means FSName.
	Name string
	// FSName is fs_name: the file of a single-file ROM ("" means its file's
	// Name), the folder of a Folder ROM (required).
	FSName string
	// Folder makes a multi-file ROM (has_multiple_files) of Files.
	Folder bool
	// Files are the ROM's files with their bytes: exactly one unless Folder.
	Files []FileSpec
	// NoHashes leaves every hash empty, as a server with hashing off does.
	NoHashes bool
	// Hashes, when set, is recorded as the ROM's hashes and as each of its
	// files' (archive members then none) instead of what RomM would compute;
	// the bytes are not read, so a zip that expands without end costs
	// nothing to add. For a test of a mismatch.
	Hashes *Hashes
	// Summary and Genres are metadata ES is given on an install.
	Summary string
	Genres  []string
}

// FileSpec is one file of a ROMSpec.
type FileSpec struct {
	// Name is file_name, verbatim: a hostile "../../x" or a name with '/'
	// or control characters is served as it is.
	Name string
	// Dir is the file's folder below a Folder ROM's folder (file_path gets
	// it, is_top_level is false), "" for its top; verbatim too.
	Dir string
	// Category is RomM's RomFileCategory ("manual", "dlc", ...); "" is
	// RomM's default: "game" for a top-level file, null below.
	Category string
	Data     []byte
}

// romFileCategories is RomM 5.3.1's RomFileCategory enum.
const romFileCategories = " game dlc hack manual walkthrough patch update mod demo translation prototype cheat soundtrack screenshot "

// AddPlatform adds p (its ID is assigned: the next after every platform) and
// returns it as stored. Slug and FSSlug are required; FSSlug must be new,
// as RomM keeps one platform per library folder. Name defaults to Slug.
func (s *Server) AddPlatform(p Platform) (Platform, error) {
	s.init()
	if s.err != nil {
		return Platform{}, s.err
	}
	if p.Slug == "" || p.FSSlug == "" || strings.ContainsAny(p.FSSlug, "/\\") {
		return Platform{}, fmt.Errorf("fakeromm: add platform: Slug and FSSlug are required and FSSlug is one folder name, got %q and %q", p.Slug, p.FSSlug)
	}
	if p.Name == "" {
		p.Name = p.Slug
	}
	s.libMu.Lock()
	defer s.libMu.Unlock()
	l := s.lib
	for _, q := range l.platforms {
		if q.FSSlug == p.FSSlug {
			return Platform{}, fmt.Errorf("fakeromm: add platform: platform %d has fs_slug %q already", q.ID, p.FSSlug)
		}
	}
	p.ID = len(l.platforms) + 1
	l.platforms = append(l.platforms, p)
	l.platROMs = append(l.platROMs, 0)
	l.platSize = append(l.platSize, 0)
	return p, nil
}

// AddROM adds a ROM of spec and returns it as served, with its ids. It is
// refused on a server with synthetic ROMs (Options.Generate), whose ids
// follow the fixture's.
func (s *Server) AddROM(spec ROMSpec) (ROM, error) {
	s.init()
	if s.err != nil {
		return ROM{}, s.err
	}
	if err := spec.check(); err != nil {
		return ROM{}, fmt.Errorf("fakeromm: add ROM: %w", err)
	}
	s.libMu.Lock()
	defer s.libMu.Unlock()
	l := s.lib
	if l.synth.n > 0 {
		return ROM{}, errors.New("fakeromm: add ROM: the server has synthetic ROMs (Options.Generate), whose ids follow the fixture's; add ROMs to a server without them")
	}
	p, ok := l.platform(spec.PlatformID)
	if !ok {
		return ROM{}, fmt.Errorf("fakeromm: add ROM: no platform %d (add it with AddPlatform)", spec.PlatformID)
	}
	r := ROM{ID: len(l.fixture) + 1, PlatformID: p.ID, Name: spec.Name, FSName: spec.FSName, Folder: spec.Folder,
		Summary: spec.Summary, Genres: append([]string(nil), spec.Genres...)}
	if r.FSName == "" {
		r.FSName = spec.Files[0].Name
	}
	if r.Name == "" {
		r.Name = r.FSName
	}
	// The scanner sees each file under its path below the ROM's folder; the
	// order it gives files ids in is that of sortedEntries, which the
	// stable sort of idx reproduces to map the files back to their specs.
	entries := make([]zipEntry, len(spec.Files))
	idx := make([]int, len(spec.Files))
	for i, f := range spec.Files {
		name := f.Name
		if f.Dir != "" {
			name = f.Dir + "/" + f.Name
		}
		entries[i] = zipEntry{name, append([]byte(nil), f.Data...)}
		idx[i] = i
	}
	if r.Folder {
		sort.SliceStable(idx, func(a, b int) bool { return entries[idx[a]].name < entries[idx[b]].name })
	}
	scan := p
	if spec.NoHashes || spec.Hashes != nil {
		scan.Hashable = false // nothing is hashed
	}
	nextID := 0
	for id := range l.fileIndex {
		nextID = max(nextID, id)
	}
	r.Files, r.Hashes = scanFiles(r, scan, entries, &nextID)
	for j := range r.Files {
		f, fs := &r.Files[j], spec.Files[idx[j]]
		if spec.Hashes != nil {
			f.Hashes, f.ArchiveMembers = *spec.Hashes, nil
		}
		if fs.Dir != "" {
			f.FileName, f.FilePath, f.TopLevel = fs.Name, f.FilePath+"/"+fs.Dir, false
		}
		f.Category = fs.Category
	}
	if spec.Hashes != nil {
		r.Hashes = *spec.Hashes
	}
	l.fixture = append(l.fixture, r)
	for j, f := range r.Files {
		l.fileIndex[f.ID] = [2]int{len(l.fixture) - 1, j}
	}
	l.platROMs[p.ID-1]++
	l.platSize[p.ID-1] += r.Size()
	l.insertByName(r)
	return cloneROM(r), nil
}

func (spec ROMSpec) check() error {
	switch {
	case len(spec.Files) == 0:
		return errors.New("no files")
	case !spec.Folder && len(spec.Files) != 1:
		return fmt.Errorf("%d files: a ROM with several files is a Folder ROM", len(spec.Files))
	case spec.Folder && spec.FSName == "":
		return errors.New("a Folder ROM needs FSName, its folder")
	}
	for _, f := range spec.Files {
		switch {
		case f.Name == "":
			return errors.New("a file has no name")
		case f.Dir != "" && !spec.Folder:
			return fmt.Errorf("file %q has a Dir: only files of a Folder ROM have one", f.Name)
		case f.Category != "" && !strings.Contains(romFileCategories, " "+f.Category+" "):
			return fmt.Errorf("file %q: category %q is not one of RomM's (%s)", f.Name, f.Category, strings.TrimSpace(romFileCategories))
		}
	}
	return nil
}

// insertByName puts r's id into nameOrder where RomM's default order has
// it: after every ROM of a lower or equal sort key (its id is the highest).
// It builds a new slice, as handlers may hold the old one.
func (l *library) insertByName(r ROM) {
	key := nameSortKey(r.Name)
	at := sort.Search(len(l.nameOrder), func(i int) bool {
		m, _ := l.meta(int(l.nameOrder[i]))
		return nameSortKey(m.Name) > key
	})
	order := make([]int32, 0, len(l.nameOrder)+1)
	order = append(order, l.nameOrder[:at]...)
	order = append(order, int32(r.ID))
	l.nameOrder = append(order, l.nameOrder[at:]...)
}

// lockedHandler serves under the library's read lock, so that AddROM and
// AddPlatform never change what a request is reading. Faults that wait
// (Latency, LatencyAfter's hold) wait outside it.
type lockedHandler struct {
	s *Server
	h http.Handler
}

func (h lockedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.s.libMu.RLock()
	defer h.s.libMu.RUnlock()
	h.h.ServeHTTP(w, r)
}
