package romm

import (
	"context"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// SearchQuery selects ROMs for GET /api/roms.
type SearchQuery struct {
	Term                string // RomM splits on | for OR; a hex digest also matches hashes
	PlatformIDs         []int
	CollectionID        int
	SmartCollectionID   int
	VirtualCollectionID string
	Offset              int
	Limit               int // 0 means DefaultLimit; at most MaxLimit
	WithFiles           bool
}

// Page sizes. RomM's own default is 50 and its maximum 10000; a model needs far fewer, and a page of
// 500 took 22.8 s on a real server (R-Shop#4).
const (
	DefaultLimit      = 20
	MaxLimit          = 100
	maxOffset         = 10_000_000
	maxTermRunes      = 200
	maxPlatformFilter = 50
)

// Page is one page of a search.
type Page struct {
	Items  []ROM
	Total  int // -1 when RomM did not say (5.2+ with with_total=false; a mock)
	Offset int
	Limit  int
}

// ROM is a RomM ROM projected to what the tools use, every text cleaned and capped.
type ROM struct {
	ID, PlatformID   int
	PlatformSlug     string
	PlatformFSSlug   string
	Name             string // the metadata name, else the file name without extension
	FSName           string // file or folder name in RomM's library
	FSSizeBytes      int64
	Year             int // 0 when unknown
	Genres           []string
	Summary          string // multi-line, at most 2000 runes
	Players          string // RomM's player_count text, such as "1-2"
	Developer        string
	Regions          []string
	CRC, MD5, SHA1   string // lowercase hex, "" when RomM did not hash (or sent junk)
	Files            []File // only from ROM, or SearchROMs with WithFiles
	HasMultipleFiles bool
	// CoverPath is RomM's path_cover_large, the big cover among RomM's own resources ("" when it
	// has none); Cover fetches it. url_cover (IGDB's copy) is never read: it is another host.
	CoverPath string
}

// File is one RomFile. Download and file routes take this id, not the ROM's.
type File struct {
	ID        int
	Name      string
	SizeBytes int64
	Category  string // game, dlc, manual, …; "game" for a top-level file without one
	// Dir is the file's folder inside a multi-file ROM's folder ("" at its top, and for a
	// single-file ROM); '/'-separated, untrusted like Name.
	Dir            string
	CRC, MD5, SHA1 string
	// ArchiveMembers are the entries of an archive RomM hashed by content (4.9+); the file's own
	// hashes are then over the decompressed entries, not the archive bytes (romm-api.md §5.2b).
	ArchiveMembers []ArchiveMember
}

// ArchiveMember is one entry of an archive file.
type ArchiveMember struct {
	Name           string
	SizeBytes      int64
	CRC, MD5, SHA1 string
}

// maxCoverPath bounds CoverPath; RomM's are about 70 bytes.
const maxCoverPath = 1024

// coverPath cleans path_cover_large: control and format characters out, "" when it is longer than
// maxCoverPath (a cut path names another file).
func coverPath(raw string) string {
	p := cleanLine(raw, 0)
	if len(p) > maxCoverPath {
		return ""
	}
	return p
}

// romsQuery builds the query for GET /api/roms on RomM v. It turns off the indexes RomM computes
// by default (char index 4.2+, filter values 4.6+, rom id index 5.1+: the last is ~600 KB on a 92k
// library, rommapp/romm#3770) only where v knows the flag, and asks for the total where 5.2+ made
// it optional. Unknown parameters are ignored by FastAPI, but the query stays exact per version so
// what is sent can be reasoned about.
func romsQuery(v Version, q SearchQuery) (url.Values, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	out := url.Values{}
	// The term is cleaned like any text (control and bidi characters out, spaces collapsed): RomM
	// matches words, so nothing a search needs is lost.
	if term := cleanLine(q.Term, 0); term != "" {
		out.Set("search_term", term)
	}
	switch {
	case len(q.PlatformIDs) == 0:
	case v.AtLeast(4, 6):
		for _, id := range q.PlatformIDs {
			out.Add("platform_ids", strconv.Itoa(id))
		}
	case len(q.PlatformIDs) == 1:
		out.Set("platform_id", strconv.Itoa(q.PlatformIDs[0]))
	default:
		return nil, newError(ErrUnsupported, nil, "RomM %s filters by one platform at a time (several came in 4.6): search each platform, or upgrade RomM", v)
	}
	if q.CollectionID > 0 {
		out.Set("collection_id", strconv.Itoa(q.CollectionID))
	}
	if q.SmartCollectionID > 0 {
		if !v.AtLeast(4, 1) {
			return nil, newError(ErrUnsupported, nil, "RomM %s has no smart collections (they came in 4.1): upgrade RomM", v)
		}
		out.Set("smart_collection_id", strconv.Itoa(q.SmartCollectionID))
	}
	if q.VirtualCollectionID != "" {
		out.Set("virtual_collection_id", q.VirtualCollectionID)
	}
	if q.WithFiles {
		if !v.AtLeast(4, 9) {
			return nil, newError(ErrUnsupported, nil, "RomM %s does not list files in search results (4.9 does): read each ROM for its files, or upgrade RomM", v)
		}
		out.Set("with_files", "true")
	}
	cheapFlags(v, out)
	out.Set("limit", strconv.Itoa(limit))
	out.Set("offset", strconv.Itoa(q.Offset))
	return out, nil
}

// cheapFlags sets the index switches v knows, unless the caller already chose them.
func cheapFlags(v Version, q url.Values) {
	set := func(key, val string) {
		if !q.Has(key) {
			q.Set(key, val)
		}
	}
	if v.AtLeast(4, 2) {
		set("with_char_index", "false")
	}
	if v.AtLeast(4, 6) {
		set("with_filter_values", "false")
	}
	if v.AtLeast(5, 1) {
		set("with_rom_id_index", "false")
	}
	if v.AtLeast(5, 2) {
		set("with_total", "true")
	}
}

func (q SearchQuery) check() error {
	switch {
	case q.Limit < 0 || q.Limit > MaxLimit:
		return newError(ErrInvalid, nil, "search limit %d is outside 1–%d: ask for a smaller page", q.Limit, MaxLimit)
	case q.Offset < 0 || q.Offset > maxOffset:
		return newError(ErrInvalid, nil, "search offset %d is outside 0–%d", q.Offset, maxOffset)
	case utf8.RuneCountInString(q.Term) > maxTermRunes:
		return newError(ErrInvalid, nil, "search term is longer than %d characters: shorten it", maxTermRunes)
	case len(q.PlatformIDs) > maxPlatformFilter:
		return newError(ErrInvalid, nil, "search names %d platforms, more than %d", len(q.PlatformIDs), maxPlatformFilter)
	case q.CollectionID < 0 || q.SmartCollectionID < 0:
		return newError(ErrInvalid, nil, "collection ids are positive numbers")
	}
	for _, id := range q.PlatformIDs {
		if id <= 0 {
			return newError(ErrInvalid, nil, "platform id %d is not a RomM platform id (they are positive numbers)", id)
		}
	}
	if q.VirtualCollectionID != "" && !virtualIDOK(q.VirtualCollectionID) {
		return newError(ErrInvalid, nil, "virtual collection id is not one RomM issues (urlsafe base64, at most %d characters): take it from the collection list", capCollection)
	}
	return nil
}

// virtualIDOK accepts what RomM's VirtualCollection ids are: urlsafe_b64 of a JSON object.
func virtualIDOK(s string) bool {
	if len(s) > capCollection {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '=') {
			return false
		}
	}
	return true
}

// SearchROMs searches RomM's library, one page at a time.
func (c *Client) SearchROMs(ctx context.Context, q SearchQuery) (Page, error) {
	if err := q.check(); err != nil {
		return Page{}, err
	}
	v, err := c.require(ctx, "ROM search", 4, 0)
	if err != nil {
		return Page{}, err
	}
	query, err := romsQuery(v, q)
	if err != nil {
		return Page{}, err
	}
	body, err := c.fetch(ctx, request{path: "/api/roms", query: query, max: maxJSON, scope: "roms.read", version: v})
	if err != nil {
		return Page{}, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	return decodePage(body, q.Offset, limit)
}

// ROM reads one ROM with its files: /api/roms/{id}/simple on 5.0+ (no per-user arrays), else the
// heavier /api/roms/{id}.
func (c *Client) ROM(ctx context.Context, id int) (ROM, error) {
	if id <= 0 || id > 1<<31-1 {
		return ROM{}, newError(ErrInvalid, nil, "ROM id %d is not a RomM ROM id (they are positive numbers): take it from a search", id)
	}
	v, err := c.require(ctx, "ROM details", 4, 0)
	if err != nil {
		return ROM{}, err
	}
	path := "/api/roms/" + strconv.Itoa(id)
	if v.AtLeast(5, 0) {
		path += "/simple"
	}
	body, err := c.fetch(ctx, request{path: path, max: maxJSON, scope: "roms.read", version: v,
		notFound: "RomM has no ROM " + strconv.Itoa(id) + " (or hides it from this token's user): search again for its id"})
	if err != nil {
		return ROM{}, err
	}
	return decodeROM(body)
}
