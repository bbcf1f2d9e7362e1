package romm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// rawROM is the part of SimpleRomSchema / DetailedRomSchema the cabinet reads. Everything else
// (provider metadata blobs, rom_user, sibling lists) is skipped by the decoder unread.
type rawROM struct {
	ID               int64     `json:"id"`
	PlatformID       int64     `json:"platform_id"`
	PlatformSlug     string    `json:"platform_slug"`
	PlatformFSSlug   string    `json:"platform_fs_slug"`
	Name             *string   `json:"name"`
	FSName           string    `json:"fs_name"`
	FSNameNoExt      string    `json:"fs_name_no_ext"`
	FSSizeBytes      int64     `json:"fs_size_bytes"`
	FSPath           string    `json:"fs_path"`
	Summary          *string   `json:"summary"`
	Metadatum        *rawMeta  `json:"metadatum"`
	Regions          []string  `json:"regions"`
	CRC              *string   `json:"crc_hash"`
	MD5              *string   `json:"md5_hash"`
	SHA1             *string   `json:"sha1_hash"`
	HasMultipleFiles *bool     `json:"has_multiple_files"`
	Multi            *bool     `json:"multi"` // before 4.4
	Files            []rawFile `json:"files"`
	PathCoverLarge   *string   `json:"path_cover_large"`
}

type rawMeta struct {
	Genres      []string `json:"genres"`
	Companies   []string `json:"companies"`
	Developers  []string `json:"developers"` // 5.3+
	PlayerCount *string  `json:"player_count"`
	// FirstReleaseDate is epoch milliseconds: RomM's roms_metadata view multiplies the providers'
	// seconds by 1000.
	FirstReleaseDate *int64 `json:"first_release_date"`
}

type rawFile struct {
	ID             int64       `json:"id"`
	FileName       string      `json:"file_name"`
	FileSizeBytes  int64       `json:"file_size_bytes"`
	FilePath       string      `json:"file_path"`
	IsTopLevel     bool        `json:"is_top_level"`
	Category       *string     `json:"category"`
	CRC            *string     `json:"crc_hash"`
	MD5            *string     `json:"md5_hash"`
	SHA1           *string     `json:"sha1_hash"`
	ArchiveMembers []rawMember `json:"archive_members"`
}

type rawMember struct {
	Name string  `json:"name"`
	Size int64   `json:"size"`
	CRC  *string `json:"crc_hash"`
	MD5  *string `json:"md5_hash"`
	SHA1 *string `json:"sha1_hash"`
}

type rawPage struct {
	Items  *[]rawROM `json:"items"`
	Total  *int64    `json:"total"`
	Limit  *int64    `json:"limit"`
	Offset *int64    `json:"offset"`
}

// decodePage decodes GET /api/roms. offset and limit are what was asked: they stand in when RomM
// does not echo them, and a page longer than limit is cut (a server that ignored the limit).
func decodePage(body []byte, offset, limit int) (Page, error) {
	var raw rawPage
	if err := json.Unmarshal(body, &raw); err != nil {
		return Page{}, newError(ErrBadData, nil, "read RomM's ROM list: %s", jsonProblem(err))
	}
	if raw.Items == nil {
		return Page{}, newError(ErrBadData, nil, "RomM's ROM list has no items: is cabinet.romm.url the RomM address (4.0 or newer)?")
	}
	p := Page{Total: -1, Offset: offset, Limit: limit}
	if raw.Total != nil {
		n, ok := asCount(*raw.Total)
		if !ok {
			return Page{}, newError(ErrBadData, nil, "RomM's ROM list has an impossible total")
		}
		p.Total = n
	}
	if raw.Offset != nil {
		if n, ok := asCount(*raw.Offset); ok {
			p.Offset = n
		}
	}
	if raw.Limit != nil {
		if n, ok := asCount(*raw.Limit); ok && n > 0 && n <= limit {
			p.Limit = n
		}
	}
	items := *raw.Items
	if len(items) > limit {
		items = items[:limit]
	}
	p.Items = make([]ROM, 0, len(items))
	for i := range items {
		r, err := items[i].project()
		if err != nil {
			return Page{}, newError(ErrBadData, nil, "RomM's ROM list, item %d: %s", i, err.Error())
		}
		p.Items = append(p.Items, r)
	}
	return p, nil
}

// decodeROM decodes GET /api/roms/{id}[/simple].
func decodeROM(body []byte) (ROM, error) {
	var raw rawROM
	if err := json.Unmarshal(body, &raw); err != nil {
		return ROM{}, newError(ErrBadData, nil, "read RomM's ROM: %s", jsonProblem(err))
	}
	if string(bytes.TrimSpace(body)) == "null" {
		return ROM{}, newError(ErrBadData, nil, "RomM answered null for the ROM: search again for its id")
	}
	r, err := raw.project()
	if err != nil {
		return ROM{}, newError(ErrBadData, nil, "RomM's ROM: %s", err.Error())
	}
	return r, nil
}

type dataError string

func (e dataError) Error() string { return string(e) }

// project checks the numbers and cleans every text.
func (r *rawROM) project() (ROM, error) {
	id, ok1 := asID(r.ID)
	pid, ok2 := asID(r.PlatformID)
	if !ok1 || !ok2 {
		return ROM{}, dataError("impossible id or platform_id")
	}
	if r.FSSizeBytes < 0 {
		return ROM{}, dataError("negative fs_size_bytes")
	}
	if len(r.Files) > maxFiles {
		return ROM{}, dataError("more than 10000 files")
	}
	out := ROM{
		ID:             id,
		PlatformID:     pid,
		PlatformSlug:   cleanLine(r.PlatformSlug, capSlug),
		PlatformFSSlug: cleanLine(r.PlatformFSSlug, capSlug),
		FSName:         cleanLine(r.FSName, capFileName),
		FSSizeBytes:    r.FSSizeBytes,
		Regions:        cleanList(r.Regions),
		CRC:            crc(deref(r.CRC)),
		MD5:            md5(deref(r.MD5)),
		SHA1:           sha1(deref(r.SHA1)),
		Summary:        cleanText(deref(r.Summary), capSummary),
		CoverPath:      coverPath(deref(r.PathCoverLarge)),
	}
	out.Name = cleanLine(deref(r.Name), capName)
	if out.Name == "" {
		out.Name = cleanLine(r.FSNameNoExt, capName)
	}
	if out.Name == "" {
		out.Name = cleanLine(r.FSName, capName)
	}
	switch {
	case r.HasMultipleFiles != nil:
		out.HasMultipleFiles = *r.HasMultipleFiles
	case r.Multi != nil:
		out.HasMultipleFiles = *r.Multi
	}
	if m := r.Metadatum; m != nil {
		out.Genres = cleanList(m.Genres)
		out.Players = cleanLine(deref(m.PlayerCount), capPlayers)
		devs := m.Developers
		if len(devs) == 0 {
			devs = m.Companies // before 5.3 developers and publishers were one list
		}
		if d := cleanList(devs); len(d) > 0 {
			out.Developer = cleanLine(strings.Join(d[:min(len(d), 3)], ", "), capName)
		}
		out.Year = releaseYear(m.FirstReleaseDate)
	}
	for i := range r.Files {
		f, err := r.Files[i].project(r.FSPath + "/" + r.FSName)
		if err != nil {
			return ROM{}, dataError("file " + strconv.Itoa(i) + ": " + err.Error())
		}
		out.Files = append(out.Files, f)
	}
	return out, nil
}

// project decodes one RomFile; folder is the ROM's folder in RomM's library (fs_path/fs_name),
// of which a multi-file ROM's file_path is a subfolder.
func (f *rawFile) project(folder string) (File, error) {
	id, ok := asID(f.ID)
	if !ok || f.FileSizeBytes < 0 {
		return File{}, dataError("impossible id or file_size_bytes")
	}
	if len(f.ArchiveMembers) > maxMembers {
		return File{}, dataError("more than 10000 archive members")
	}
	out := File{
		ID:        id,
		Name:      cleanLine(f.FileName, capFileName),
		SizeBytes: f.FileSizeBytes,
		Category:  strings.ToLower(cleanLine(deref(f.Category), capCategory)),
		CRC:       crc(deref(f.CRC)),
		MD5:       md5(deref(f.MD5)),
		SHA1:      sha1(deref(f.SHA1)),
	}
	if rest, ok := strings.CutPrefix(f.FilePath, folder); ok && (rest == "" || rest[0] == '/') {
		out.Dir = cleanLine(strings.Trim(rest, "/"), capFileName)
	}
	if out.Category == "" && f.IsTopLevel {
		out.Category = "game" // RomM's own reading of a top-level file without a category
	}
	for _, m := range f.ArchiveMembers {
		if m.Size < 0 {
			return File{}, dataError("negative archive member size")
		}
		out.ArchiveMembers = append(out.ArchiveMembers, ArchiveMember{
			Name:      cleanLine(m.Name, capFileName),
			SizeBytes: m.Size,
			CRC:       crc(deref(m.CRC)),
			MD5:       md5(deref(m.MD5)),
			SHA1:      sha1(deref(m.SHA1)),
		})
	}
	return out, nil
}

// releaseYear turns epoch milliseconds into a year, 0 when missing or outside 1950–2100 (a mock's
// 0, a provider's placeholder).
func releaseYear(ms *int64) int {
	if ms == nil || *ms <= 0 || *ms > 5e12 {
		return 0
	}
	y := time.UnixMilli(*ms).UTC().Year()
	if y < 1950 || y > 2100 {
		return 0
	}
	return y
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
