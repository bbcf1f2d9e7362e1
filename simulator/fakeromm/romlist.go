package fakeromm

import (
	"net/http"
	"sort"
	"strings"
)

// pageJSON is CustomLimitOffsetPage[SimpleRomSchema]. Every sidecar is
// always present: RomM sends an empty one for a with_* flag that is off.
type pageJSON struct {
	Items        []simpleROMJSON `json:"items"`
	Total        *int            `json:"total"`
	Limit        int             `json:"limit"`
	Offset       int             `json:"offset"`
	CharIndex    map[string]int  `json:"char_index"`
	ROMIDIndex   []int32         `json:"rom_id_index"`
	FilterValues filterValues    `json:"filter_values"`
}

type filterValues struct {
	Genres       []string `json:"genres"`
	Franchises   []string `json:"franchises"`
	Collections  []string `json:"collections"`
	Companies    []string `json:"companies"`
	Publishers   []string `json:"publishers"`
	Developers   []string `json:"developers"`
	GameModes    []string `json:"game_modes"`
	AgeRatings   []string `json:"age_ratings"`
	PlayerCounts []string `json:"player_counts"`
	Regions      []string `json:"regions"`
	Languages    []string `json:"languages"`
	Tags         []string `json:"tags"`
	Platforms    []int    `json:"platforms"`
}

// RomM's pagination bounds (CustomLimitOffsetParams).
const (
	defaultLimit = 50
	maxLimit     = 10_000
)

// listROMs is GET /api/roms (endpoints/roms/__init__.py get_roms).
func (s *Server) listROMs(c *call) {
	p := c.p
	limit, _ := p.integer("limit", defaultLimit, ptr(1), ptr(maxLimit))
	offset, _ := p.integer("offset", 0, ptr(0), nil)
	withChar, _ := p.boolean("with_char_index", true)
	withFilters, _ := p.boolean("with_filter_values", true)
	withIndex := true
	if s.ver.withRomIDIndex {
		withIndex, _ = p.boolean("with_rom_id_index", true)
	}
	withTotal := true
	if s.ver.withTotal {
		withTotal, _ = p.boolean("with_total", true)
	}
	withFiles := true // before 4.9 list items always carried their files
	if s.ver.withFiles {
		withFiles, _ = p.boolean("with_files", false)
	}
	orderBy, _ := p.str("order_by")
	orderDir, _ := p.str("order_dir")
	p.str("updated_after")
	q := s.parseROMQuery(p)
	if !c.ready(ScopeRomsRead) {
		return
	}

	order := s.ordered(orderBy, orderDir)
	ids := s.filter(&q, order, false)
	page := pageJSON{Items: []simpleROMJSON{}, Limit: limit, Offset: offset, CharIndex: map[string]int{},
		ROMIDIndex: []int32{}, FilterValues: emptyFilterValues()}
	if offset < len(ids) {
		for _, id := range ids[offset:min(len(ids), offset+limit)] {
			r, _ := s.lib.rom(int(id))
			page.Items = append(page.Items, s.simpleROM(r, withFiles))
		}
	}
	n := len(ids)
	switch {
	case withIndex:
		page.ROMIDIndex = ids
		page.Total = &n
	case withTotal:
		page.Total = &n
	}
	if withChar {
		page.CharIndex = s.charIndex(ids)
	}
	if withFilters {
		// Computed over the scope and search only, so that choosing a
		// filter does not empty the menu it was chosen from.
		page.FilterValues = s.filterValues(s.filter(&q, order, true))
	}
	writeJSON(c.w, http.StatusOK, page)
}

// charIndex maps the first character of each name (as sorted) to the
// position of the first ROM starting with it.
func (s *Server) charIndex(ids []int32) map[string]int {
	out := map[string]int{}
	for i, id := range ids {
		r, _ := s.lib.meta(int(id))
		key := nameSortKey(r.Name)
		if key == "" {
			continue
		}
		ch := strings.ToUpper(string([]rune(key)[0]))
		if _, ok := out[ch]; !ok {
			out[ch] = i
		}
	}
	return out
}

func emptyFilterValues() filterValues {
	return filterValues{Genres: []string{}, Franchises: []string{}, Collections: []string{}, Companies: []string{},
		Publishers: []string{}, Developers: []string{}, GameModes: []string{}, AgeRatings: []string{},
		PlayerCounts: []string{}, Regions: []string{}, Languages: []string{}, Tags: []string{}, Platforms: []int{}}
}

func (s *Server) filterValues(ids []int32) filterValues {
	sets := map[string]map[string]bool{}
	add := func(k string, vs ...string) {
		if sets[k] == nil {
			sets[k] = map[string]bool{}
		}
		for _, v := range vs {
			if v != "" {
				sets[k][v] = true
			}
		}
	}
	platforms := map[int]bool{}
	for _, id := range ids {
		r, _ := s.lib.meta(int(id))
		add("genres", r.Genres...)
		add("franchises", r.Franchises...)
		add("collections", r.Collections...)
		add("companies", r.Companies...)
		add("game_modes", r.GameModes...)
		add("player_counts", r.PlayerCount)
		add("regions", r.Regions...)
		add("languages", r.Languages...)
		add("tags", r.Tags...)
		platforms[r.PlatformID] = true
	}
	list := func(k string) []string {
		out := []string{}
		for v := range sets[k] {
			out = append(out, v)
		}
		sort.Strings(out)
		return out
	}
	fv := emptyFilterValues()
	fv.Genres, fv.Franchises, fv.Collections = list("genres"), list("franchises"), list("collections")
	fv.Companies, fv.Publishers, fv.Developers = list("companies"), list("companies"), list("companies")
	fv.GameModes, fv.PlayerCounts = list("game_modes"), list("player_counts")
	fv.Regions, fv.Languages, fv.Tags = list("regions"), list("languages"), list("tags")
	for id := range platforms {
		fv.Platforms = append(fv.Platforms, id)
	}
	sort.Ints(fv.Platforms)
	return fv
}
