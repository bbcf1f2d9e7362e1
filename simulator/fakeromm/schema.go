package fakeromm

import (
	"path"
	"regexp"
	"strings"
	"sync"
	"time"
)

// The JSON shapes of RomM 5.3.1's OpenAPI components, field for field. A
// nil pointer is a JSON null; RomM sends every property the schema
// requires, null or not, and so does the fake.

type platformJSON struct {
	ID            int            `json:"id"`
	Slug          string         `json:"slug"`
	FSSlug        string         `json:"fs_slug"`
	ROMCount      int            `json:"rom_count"`
	Name          string         `json:"name"`
	IGDBSlug      *string        `json:"igdb_slug"`
	MobySlug      *string        `json:"moby_slug"`
	HLTBSlug      *string        `json:"hltb_slug"`
	LibretroSlug  *string        `json:"libretro_slug"`
	CustomName    *string        `json:"custom_name"`
	Description   *string        `json:"description"`
	IGDBID        *int           `json:"igdb_id"`
	SGDBID        *int           `json:"sgdb_id"`
	MobyID        *int           `json:"moby_id"`
	LaunchboxID   *int           `json:"launchbox_id"`
	SSID          *int           `json:"ss_id"`
	RAID          *int           `json:"ra_id"`
	HasheousID    *int           `json:"hasheous_id"`
	TGDBID        *int           `json:"tgdb_id"`
	FlashpointID  *int           `json:"flashpoint_id"`
	Category      *string        `json:"category"`
	Generation    *int           `json:"generation"`
	FamilyName    *string        `json:"family_name"`
	FamilySlug    *string        `json:"family_slug"`
	URL           *string        `json:"url"`
	URLLogo       *string        `json:"url_logo"`
	Firmware      []firmwareJSON `json:"firmware"`
	CreatedAt     string         `json:"created_at"`
	UpdatedAt     string         `json:"updated_at"`
	FSSizeBytes   int64          `json:"fs_size_bytes"`
	IsUnidentifed bool           `json:"is_unidentified"`
	IsIdentified  bool           `json:"is_identified"`
	MissingFromFS bool           `json:"missing_from_fs"`
	DisplayName   string         `json:"display_name"`
	FirmwareCount int            `json:"firmware_count"`
}

type firmwareJSON struct {
	ID             int    `json:"id"`
	PlatformID     int    `json:"platform_id"`
	FileName       string `json:"file_name"`
	FileNameNoTags string `json:"file_name_no_tags"`
	FileNameNoExt  string `json:"file_name_no_ext"`
	FileExtension  string `json:"file_extension"`
	FilePath       string `json:"file_path"`
	FileSizeBytes  int    `json:"file_size_bytes"`
	FullPath       string `json:"full_path"`
	IsVerified     bool   `json:"is_verified"`
	CRCHash        string `json:"crc_hash"`
	MD5Hash        string `json:"md5_hash"`
	SHA1Hash       string `json:"sha1_hash"`
	MissingFromFS  bool   `json:"missing_from_fs"`
	CreatedAt      string `json:"created_at"`
	UpdatedAt      string `json:"updated_at"`
}

type memberJSON struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	CRCHash  string `json:"crc_hash"`
	MD5Hash  string `json:"md5_hash"`
	SHA1Hash string `json:"sha1_hash"`
}

type romFileJSON struct {
	ID             int          `json:"id"`
	ROMID          int          `json:"rom_id"`
	FileName       string       `json:"file_name"`
	FilePath       string       `json:"file_path"`
	FileSizeBytes  int          `json:"file_size_bytes"`
	FullPath       string       `json:"full_path"`
	IsTopLevel     bool         `json:"is_top_level"`
	CreatedAt      string       `json:"created_at"`
	UpdatedAt      string       `json:"updated_at"`
	LastModified   *string      `json:"last_modified"`
	CRCHash        *string      `json:"crc_hash"`
	MD5Hash        *string      `json:"md5_hash"`
	SHA1Hash       *string      `json:"sha1_hash"`
	RAHash         *string      `json:"ra_hash"`
	CHDSHA1Hash    *string      `json:"chd_sha1_hash"`
	ArchiveMembers []memberJSON `json:"archive_members"` // nil: null
	Category       *string      `json:"category"`
}

type metadatumJSON struct {
	ROMID            int      `json:"rom_id"`
	Genres           []string `json:"genres"`
	Franchises       []string `json:"franchises"`
	Collections      []string `json:"collections"`
	Companies        []string `json:"companies"`
	Publishers       []string `json:"publishers"`
	Developers       []string `json:"developers"`
	GameModes        []string `json:"game_modes"`
	AgeRatings       []string `json:"age_ratings"`
	PlayerCount      string   `json:"player_count"`
	FirstReleaseDate *int64   `json:"first_release_date"`
	AverageRating    *float64 `json:"average_rating"`
}

type romUserJSON struct {
	ID            int     `json:"id"`
	UserID        int     `json:"user_id"`
	ROMID         int     `json:"rom_id"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
	LastPlayed    *string `json:"last_played"`
	IsMainSibling bool    `json:"is_main_sibling"`
	Backlogged    bool    `json:"backlogged"`
	NowPlaying    bool    `json:"now_playing"`
	Hidden        bool    `json:"hidden"`
	Rating        int     `json:"rating"`
	Difficulty    int     `json:"difficulty"`
	Completion    int     `json:"completion"`
	Status        *string `json:"status"`
}

// simpleROMJSON is SimpleRomSchema. The per-provider ids and metadata
// blobs are all null: the fixture has matched nothing but IGDB.
type simpleROMJSON struct {
	ID                  int           `json:"id"`
	IGDBID              *int          `json:"igdb_id"`
	SGDBID              *int          `json:"sgdb_id"`
	MobyID              *int          `json:"moby_id"`
	SSID                *int          `json:"ss_id"`
	RAID                *int          `json:"ra_id"`
	LaunchboxID         *int          `json:"launchbox_id"`
	HasheousID          *int          `json:"hasheous_id"`
	TGDBID              *int          `json:"tgdb_id"`
	FlashpointID        *string       `json:"flashpoint_id"`
	HLTBID              *int          `json:"hltb_id"`
	DemozooID           *int          `json:"demozoo_id"`
	PouetID             *int          `json:"pouet_id"`
	CSDBID              *int          `json:"csdb_id"`
	SteamID             *int          `json:"steam_id"`
	GamelistID          *string       `json:"gamelist_id"`
	LibretroID          *string       `json:"libretro_id"`
	PlatformID          int           `json:"platform_id"`
	PlatformSlug        string        `json:"platform_slug"`
	PlatformFSSlug      string        `json:"platform_fs_slug"`
	PlatformCustomName  *string       `json:"platform_custom_name"`
	PlatformDisplayName string        `json:"platform_display_name"`
	FSName              string        `json:"fs_name"`
	FSNameNoTags        string        `json:"fs_name_no_tags"`
	FSNameNoExt         string        `json:"fs_name_no_ext"`
	FSExtension         string        `json:"fs_extension"`
	FSPath              string        `json:"fs_path"`
	FSSizeBytes         int64         `json:"fs_size_bytes"`
	Name                *string       `json:"name"`
	NameSortKey         *string       `json:"name_sort_key"`
	Slug                *string       `json:"slug"`
	Summary             *string       `json:"summary"`
	AlternativeNames    []string      `json:"alternative_names"`
	YoutubeVideoID      *string       `json:"youtube_video_id"`
	Metadatum           metadatumJSON `json:"metadatum"`
	IGDBMetadata        any           `json:"igdb_metadata"`
	MobyMetadata        any           `json:"moby_metadata"`
	SSMetadata          any           `json:"ss_metadata"`
	LaunchboxMetadata   any           `json:"launchbox_metadata"`
	HasheousMetadata    any           `json:"hasheous_metadata"`
	FlashpointMetadata  any           `json:"flashpoint_metadata"`
	HLTBMetadata        any           `json:"hltb_metadata"`
	DemozooMetadata     any           `json:"demozoo_metadata"`
	PouetMetadata       any           `json:"pouet_metadata"`
	CSDBMetadata        any           `json:"csdb_metadata"`
	SteamMetadata       any           `json:"steam_metadata"`
	GamelistMetadata    any           `json:"gamelist_metadata"`
	ManualMetadata      any           `json:"manual_metadata"`
	PathCoverSmall      *string       `json:"path_cover_small"`
	PathCoverLarge      *string       `json:"path_cover_large"`
	URLCover            *string       `json:"url_cover"`
	HasManual           bool          `json:"has_manual"`
	HasSoundtrack       bool          `json:"has_soundtrack"`
	PathManual          *string       `json:"path_manual"`
	URLManual           *string       `json:"url_manual"`
	PathVideo           *string       `json:"path_video"`
	IsIdentifying       bool          `json:"is_identifying"`
	IsUnidentified      bool          `json:"is_unidentified"`
	IsIdentified        bool          `json:"is_identified"`
	Revision            *string       `json:"revision"`
	Regions             []string      `json:"regions"`
	Languages           []string      `json:"languages"`
	Tags                []string      `json:"tags"`
	CRCHash             *string       `json:"crc_hash"`
	MD5Hash             *string       `json:"md5_hash"`
	SHA1Hash            *string       `json:"sha1_hash"`
	RAHash              *string       `json:"ra_hash"`
	TitleID             *string       `json:"title_id"`
	SaveTarget          *string       `json:"save_target"`
	SaveTargetLayout    any           `json:"save_target_layout"`
	HasSimpleSingleFile bool          `json:"has_simple_single_file"`
	HasNestedSingleFile bool          `json:"has_nested_single_file"`
	HasMultipleFiles    bool          `json:"has_multiple_files"`
	FullPath            string        `json:"full_path"`
	CreatedAt           string        `json:"created_at"`
	UpdatedAt           string        `json:"updated_at"`
	MissingFromFS       bool          `json:"missing_from_fs"`
	IsPhysical          bool          `json:"is_physical"`
	HasFileOnDisk       bool          `json:"has_file_on_disk"`
	UPC                 *string       `json:"upc"`
	HasNotes            bool          `json:"has_notes"`
	ROMUser             romUserJSON   `json:"rom_user"`
	MergedScreenshots   []string      `json:"merged_screenshots"`
	MergedRAMetadata    any           `json:"merged_ra_metadata"`
	Files               []romFileJSON `json:"files"`
	SiblingROMs         []any         `json:"sibling_roms"`
}

type userCollectionJSON struct {
	ID      int    `json:"id"`
	Name    string `json:"name"`
	IsSmart bool   `json:"is_smart"`
}

// detailedROMJSON is DetailedRomSchema: Simple plus the caller's saves,
// states, screenshots, collections and notes (none but collections here).
type detailedROMJSON struct {
	simpleROMJSON
	UserSaves          []any                `json:"user_saves"`
	UserStates         []any                `json:"user_states"`
	AllUserSaves       []any                `json:"all_user_saves"`
	AllUserStates      []any                `json:"all_user_states"`
	UserScreenshots    []any                `json:"user_screenshots"`
	AllUserScreenshots []any                `json:"all_user_screenshots"`
	UserCollections    []userCollectionJSON `json:"user_collections"`
	AllUserNotes       []any                `json:"all_user_notes"`
}

// collectionBase is what CollectionSchema, SmartCollectionSchema and
// VirtualCollectionSchema share.
type collectionBase struct {
	Name            string   `json:"name"`
	Description     string   `json:"description"`
	ROMIDs          []int    `json:"rom_ids"`
	ROMCount        int      `json:"rom_count"`
	PathCoverSmall  *string  `json:"path_cover_small"`
	PathCoverLarge  *string  `json:"path_cover_large"`
	PathCoversSmall []string `json:"path_covers_small"`
	PathCoversLarge []string `json:"path_covers_large"`
	IsPublic        bool     `json:"is_public"`
	IsFavorite      bool     `json:"is_favorite"`
	IsVirtual       bool     `json:"is_virtual"`
	IsSmart         bool     `json:"is_smart"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

type collectionJSON struct {
	collectionBase
	ID            int     `json:"id"`
	URLCover      *string `json:"url_cover"`
	UserID        int     `json:"user_id"`
	OwnerUsername string  `json:"owner_username"`
}

type smartCollectionJSON struct {
	collectionBase
	ID             int            `json:"id"`
	FilterCriteria map[string]any `json:"filter_criteria"`
	FilterSummary  string         `json:"filter_summary"`
	UserID         int            `json:"user_id"`
	OwnerUsername  string         `json:"owner_username"`
}

type virtualCollectionJSON struct {
	collectionBase
	ID   string `json:"id"`
	Type string `json:"type"`
}

// The owner of every collection: RomM's first user.
const (
	ownerID   = 1
	ownerName = "admin"
)

// stamp is RomM's datetime serialisation (endpoints/responses/base.py:
// isoformat with the UTC offset).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.999999") + "+00:00" }

func strp(s string) *string { return &s }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func intp(i int) *int {
	if i == 0 {
		return nil
	}
	return &i
}

// emptyIfNil keeps a JSON array an array.
func emptyIfNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// tagRE is a "(...)" or "[...]" tag in a file name.
var tagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\s*[\(\[][^\)\]]*[\)\]]`) })

// noTags is fs_name_no_tags: the name without its extension and tags.
func noTags(fsName, ext string) string {
	base := strings.TrimSuffix(fsName, dotExt(ext))
	return strings.TrimSpace(tagRE().ReplaceAllString(base, ""))
}

func dotExt(ext string) string {
	if ext == "" {
		return ""
	}
	return "." + ext
}

func (s *Server) platformJSON(p Platform) platformJSON {
	now := stamp(s.lib.now)
	count, size := s.lib.platROMs[p.ID-1], s.lib.platSize[p.ID-1]
	fw := []firmwareJSON{}
	for _, f := range s.lib.firmware {
		if f.PlatformID == p.ID {
			fw = append(fw, s.firmwareJSON(f))
		}
	}
	return platformJSON{
		ID: p.ID, Slug: p.Slug, FSSlug: p.FSSlug, ROMCount: count, Name: p.Name,
		IGDBSlug: strp(p.Slug), CustomName: nonEmpty(p.CustomName), Category: nonEmpty(p.Category),
		Generation: intp(p.Generation), FamilyName: nonEmpty(p.FamilyName), FamilySlug: nonEmpty(p.FamilySlug),
		Firmware: fw, CreatedAt: now, UpdatedAt: now, FSSizeBytes: size,
		IsUnidentifed: false, IsIdentified: true, DisplayName: p.DisplayName(), FirmwareCount: len(fw),
	}
}

func (s *Server) firmwareJSON(f Firmware) firmwareJSON {
	now := stamp(s.lib.now)
	p, _ := s.lib.platform(f.PlatformID)
	ext := strings.TrimPrefix(path.Ext(f.FileName), ".")
	noExt := strings.TrimSuffix(f.FileName, dotExt(ext))
	dir := "bios/" + p.FSSlug
	return firmwareJSON{
		ID: f.ID, PlatformID: f.PlatformID, FileName: f.FileName, FileNameNoTags: noTags(f.FileName, ext),
		FileNameNoExt: noExt, FileExtension: ext, FilePath: dir, FileSizeBytes: len(f.Bytes),
		FullPath: dir + "/" + f.FileName, IsVerified: f.Verified, CRCHash: f.CRC, MD5Hash: f.MD5, SHA1Hash: f.SHA1,
		CreatedAt: now, UpdatedAt: now,
	}
}

func (s *Server) romFileJSON(f File) romFileJSON {
	now := stamp(s.lib.now)
	var members []memberJSON
	if f.ArchiveMembers != nil {
		members = make([]memberJSON, 0, len(f.ArchiveMembers))
		for _, m := range f.ArchiveMembers {
			members = append(members, memberJSON{Name: m.Name, Size: m.Size, CRCHash: m.CRC, MD5Hash: m.MD5, SHA1Hash: m.SHA1})
		}
	}
	var cat *string
	if f.Category != "" {
		cat = strp(f.Category)
	} else if f.TopLevel { // RomFileSchema.default_category_for_non_nested
		cat = strp("game")
	}
	return romFileJSON{
		ID: f.ID, ROMID: f.ROMID, FileName: f.FileName, FilePath: f.FilePath, FileSizeBytes: len(f.Bytes),
		FullPath: f.FullPath(), IsTopLevel: f.TopLevel, CreatedAt: now, UpdatedAt: now, LastModified: strp(now),
		CRCHash: strp(f.CRC), MD5Hash: strp(f.MD5), SHA1Hash: strp(f.SHA1), RAHash: strp(""), CHDSHA1Hash: strp(""),
		ArchiveMembers: members, Category: cat,
	}
}

// simpleROM renders SimpleRomSchema; files are included when withFiles.
func (s *Server) simpleROM(r ROM, withFiles bool) simpleROMJSON {
	now := stamp(s.lib.now)
	p, _ := s.lib.platform(r.PlatformID)
	ext := r.Extension()
	fsPath := "roms/" + p.FSSlug
	var release *int64
	if r.ReleaseMillis != 0 {
		release = &r.ReleaseMillis
	}
	var rating *float64
	if r.Rating != 0 {
		rating = &r.Rating
	}
	files := []romFileJSON{}
	if withFiles {
		for _, f := range r.Files {
			files = append(files, s.romFileJSON(f))
		}
	}
	identified := r.IGDBID != 0
	key := nameSortKey(r.Name)
	return simpleROMJSON{
		ID: r.ID, IGDBID: intp(r.IGDBID), PlatformID: r.PlatformID, PlatformSlug: p.Slug, PlatformFSSlug: p.FSSlug,
		PlatformCustomName: nonEmpty(p.CustomName), PlatformDisplayName: p.DisplayName(),
		FSName: r.FSName, FSNameNoTags: noTags(r.FSName, ext), FSNameNoExt: strings.TrimSuffix(r.FSName, dotExt(ext)),
		FSExtension: ext, FSPath: fsPath, FSSizeBytes: r.Size(), Name: strp(r.Name), NameSortKey: &key,
		Slug: nonEmpty(slugify(r.Name)), Summary: nonEmpty(r.Summary), AlternativeNames: []string{},
		Metadatum: metadatumJSON{ROMID: r.ID, Genres: emptyIfNil(r.Genres), Franchises: emptyIfNil(r.Franchises),
			Collections: emptyIfNil(r.Collections), Companies: emptyIfNil(r.Companies), Publishers: emptyIfNil(r.Companies),
			Developers: emptyIfNil(r.Companies), GameModes: emptyIfNil(r.GameModes), AgeRatings: []string{},
			PlayerCount: r.PlayerCount, FirstReleaseDate: release, AverageRating: rating},
		PathCoverSmall: strp(s.coverPath(r, "small")), PathCoverLarge: strp(s.coverPath(r, "big")),
		IsUnidentified: !identified, IsIdentified: identified, Revision: nonEmpty(r.Revision),
		Regions: emptyIfNil(r.Regions), Languages: emptyIfNil(r.Languages), Tags: emptyIfNil(r.Tags),
		CRCHash: strp(r.CRC), MD5Hash: strp(r.MD5), SHA1Hash: strp(r.SHA1), RAHash: strp(""),
		HasSimpleSingleFile: !r.Folder, HasMultipleFiles: r.Folder,
		FullPath: fsPath + "/" + r.FSName, CreatedAt: now, UpdatedAt: now, MissingFromFS: r.MissingFromFS,
		HasFileOnDisk: !r.MissingFromFS,
		ROMUser:       romUserJSON{ID: -1, UserID: -1, ROMID: -1, CreatedAt: now, UpdatedAt: now},
		// rom_user_schema_factory: the dummy RomM returns when the caller has no row.
		MergedScreenshots: []string{}, Files: files, SiblingROMs: []any{},
	}
}

func (s *Server) detailedROM(r ROM) detailedROMJSON {
	var uc []userCollectionJSON
	for _, c := range s.lib.colls {
		for _, id := range c.romIDs {
			if id == r.ID {
				uc = append(uc, userCollectionJSON{ID: c.id, Name: c.name})
			}
		}
	}
	return detailedROMJSON{
		simpleROMJSON: s.simpleROM(r, true), UserSaves: []any{}, UserStates: []any{}, AllUserSaves: []any{},
		AllUserStates: []any{}, UserScreenshots: []any{}, AllUserScreenshots: []any{},
		UserCollections: emptyIfNil(uc), AllUserNotes: []any{},
	}
}

// slugify is a lowercase, dash-separated slug of a name.
func slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
