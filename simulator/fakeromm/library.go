package fakeromm

import (
	"path"
	"sort"
	"strings"
	"time"
)

// Platform is one RomM platform row.
type Platform struct {
	ID         int
	Slug       string // RomM's canonical slug (UniversalPlatformSlug)
	FSSlug     string // the folder under library/roms/
	Name       string
	CustomName string
	Category   string
	Generation int
	FamilyName string
	FamilySlug string
	// Hashable is false for the platforms RomM does not hash
	// (NON_HASHABLE_PLATFORMS: ios, switch, ps3...): their hashes are "".
	Hashable bool
	ext      string // file extension of synthetic ROMs
}

// DisplayName is custom_name or name, as RomM computes display_name.
func (p Platform) DisplayName() string {
	if p.CustomName != "" {
		return p.CustomName
	}
	return p.Name
}

// File is one RomFile: what a download of it serves, and how RomM hashed it.
type File struct {
	ID       int
	ROMID    int
	FileName string // file_name
	FilePath string // file_path, e.g. "roms/psx/Echo Chamber (USA)"
	// Bytes are the file's contents (a copy); for a ROM missing from the
	// filesystem they are what was there when RomM last scanned it, and
	// downloads answer 404.
	Bytes []byte
	Hashes
	// ArchiveMembers is archive_members: per-member hashes of an archive
	// RomM could read, nil otherwise.
	ArchiveMembers []Member
	TopLevel       bool
	// Category is the file's RomFileCategory; "" is RomM's default ("game"
	// for a top-level file, null below).
	Category string
}

// FullPath is full_path: file_path/file_name.
func (f File) FullPath() string { return f.FilePath + "/" + f.FileName }

// ROM is one RomM ROM with its files.
type ROM struct {
	ID         int
	PlatformID int
	Name       string
	FSName     string // a file name, or the folder of a multi-file ROM
	Files      []File
	Hashes     // the ROM-level hashes
	// Folder: a multi-file ROM (has_multiple_files).
	Folder        bool
	MissingFromFS bool
	IGDBID        int // 0: not identified
	Summary       string
	Revision      string
	Regions       []string
	Languages     []string
	Tags          []string
	Genres        []string
	Franchises    []string
	Companies     []string
	GameModes     []string
	Collections   []string // metadata collections (the "collection" virtual type)
	PlayerCount   string
	ReleaseMillis int64 // first_release_date, epoch milliseconds; 0: unknown
	Rating        float64
}

// Extension is fs_extension: the extension of fs_name without the dot, ""
// for a folder.
func (r ROM) Extension() string {
	if r.Folder {
		return ""
	}
	return strings.TrimPrefix(path.Ext(r.FSName), ".")
}

// Size is fs_size_bytes: the sum of the files.
func (r ROM) Size() int64 {
	var n int64
	for _, f := range r.Files {
		n += int64(len(f.Bytes))
	}
	return n
}

// Firmware is one BIOS file.
type Firmware struct {
	ID         int
	PlatformID int
	FileName   string
	Bytes      []byte
	Hashes
	Verified bool
}

// collection is a regular (user) collection.
type collection struct {
	id       int
	name     string
	desc     string
	romIDs   []int
	public   bool
	favorite bool
}

// smartCollection is a saved filter; its rom_ids are evaluated on request.
type smartCollection struct {
	id       int
	name     string
	desc     string
	criteria map[string]any
	summary  string
	// platformIDs is the criteria the fake evaluates.
	platformIDs []int
}

// library is everything the server serves. Fixture ROMs are materialised;
// synthetic ones are computed from their id (synthetic.go).
type library struct {
	now       time.Time
	platforms []Platform // by id-1
	fixture   []ROM      // by id-1
	firmware  []Firmware
	colls     []collection
	smart     []smartCollection
	synth     synthetic
	// nameOrder is every ROM id in RomM's default order (name_sort_key,
	// then id), the only per-ROM state kept for synthetic ROMs.
	nameOrder []int32
	// fileIndex maps a fixture RomFile id to its ROM and position.
	fileIndex map[int][2]int
	// platROMs and platSize are rom_count and fs_size_bytes by platform
	// id-1, counted once: /api/platforms must not walk 50,000 ROMs.
	platROMs []int
	platSize []int64
}

func buildLibrary(now time.Time, scale Scale) (*library, error) {
	l := &library{now: now, fileIndex: map[int][2]int{}}
	if err := l.addFixture(); err != nil {
		return nil, err
	}
	l.addSynthetic(scale)
	l.platROMs = make([]int, len(l.platforms))
	l.platSize = make([]int64, len(l.platforms))
	for _, r := range l.fixture {
		l.platROMs[r.PlatformID-1]++
		l.platSize[r.PlatformID-1] += r.Size()
	}
	for i := 0; i < l.synth.n; i++ {
		id := l.synth.firstID + i
		l.platROMs[l.synth.platformOf(id)-1]++
		l.platSize[l.synth.platformOf(id)-1] += int64(l.synth.size(id))
	}
	l.nameOrder = make([]int32, 0, l.romCount())
	keys := make(map[int32]string, len(l.fixture))
	for i := range l.fixture {
		l.nameOrder = append(l.nameOrder, int32(l.fixture[i].ID))
		keys[int32(l.fixture[i].ID)] = nameSortKey(l.fixture[i].Name)
	}
	for i := 0; i < l.synth.n; i++ {
		id := int32(l.synth.firstID + i)
		l.nameOrder = append(l.nameOrder, id)
	}
	key := func(id int32) string {
		if k, ok := keys[id]; ok {
			return k
		}
		return nameSortKey(l.synth.name(int(id)))
	}
	// The sort keys live only for the sort: afterwards the order is all
	// that is kept (4 bytes a ROM).
	sortKeys := make([]string, len(l.nameOrder))
	for i, id := range l.nameOrder {
		sortKeys[i] = key(id)
	}
	idx := make([]int, len(l.nameOrder))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if sortKeys[idx[a]] != sortKeys[idx[b]] {
			return sortKeys[idx[a]] < sortKeys[idx[b]]
		}
		return l.nameOrder[idx[a]] < l.nameOrder[idx[b]]
	})
	ordered := make([]int32, len(idx))
	for i, j := range idx {
		ordered[i] = l.nameOrder[j]
	}
	l.nameOrder = ordered
	return l, nil
}

func (l *library) romCount() int { return len(l.fixture) + l.synth.n }

// meta returns ROM id without synthetic bytes and hashes (fixture ROMs
// are whole either way).
func (l *library) meta(id int) (ROM, bool) {
	if id >= 1 && id <= len(l.fixture) {
		return l.fixture[id-1], true
	}
	if l.synth.has(id) {
		return l.synth.meta(id), true
	}
	return ROM{}, false
}

// rom returns ROM id, materialising a synthetic one.
func (l *library) rom(id int) (ROM, bool) {
	if id >= 1 && id <= len(l.fixture) {
		return l.fixture[id-1], true
	}
	if l.synth.has(id) {
		return l.synth.rom(id), true
	}
	return ROM{}, false
}

// file returns RomFile id and its ROM.
func (l *library) file(id int) (File, ROM, bool) {
	if at, ok := l.fileIndex[id]; ok {
		r := l.fixture[at[0]]
		return r.Files[at[1]], r, true
	}
	if romID, ok := l.synth.fileROM(id); ok {
		r := l.synth.rom(romID)
		return r.Files[0], r, true
	}
	return File{}, ROM{}, false
}

func (l *library) platform(id int) (Platform, bool) {
	if id < 1 || id > len(l.platforms) {
		return Platform{}, false
	}
	return l.platforms[id-1], true
}

// Articles RomM drops from the front of a name for sorting
// (models/rom.py ARTICLES).
var sortArticles = []string{"the", "a", "an", "le", "la", "les", "el", "los", "las", "il", "lo", "gli", "der", "die", "das", "het"}

// nameSortKey is RomM's compute_name_sort_key: lowercase, a leading article
// and the spaces after it dropped, digit runs zero-padded to 12 so "2"
// sorts before "10".
func nameSortKey(name string) string {
	v := strings.ToLower(name)
	for _, a := range sortArticles {
		if rest, ok := strings.CutPrefix(v, a); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			v = strings.TrimSpace(rest)
			break
		}
	}
	v = strings.TrimSpace(v)
	var b strings.Builder
	for i := 0; i < len(v); {
		if v[i] >= '0' && v[i] <= '9' {
			j := i
			for j < len(v) && v[j] >= '0' && v[j] <= '9' {
				j++
			}
			for k := j - i; k < 12; k++ {
				b.WriteByte('0')
			}
			b.WriteString(v[i:j])
			i = j
			continue
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String()
}
