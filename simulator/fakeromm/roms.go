package fakeromm

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// romQuery is a parsed GET /api/roms (or the criteria of a collection).
type romQuery struct {
	search      []searchTerm
	platformIDs map[int]bool
	// scope is the id set of collection_id / smart_collection_id /
	// virtual_collection_id, intersected; nil: not scoped.
	scope map[int]bool
	bools map[string]bool // set boolean filters but missing: matched, ...
	// missing is the missing filter, kept apart because it needs no
	// name or metadata (ROMarr counts 50,000 ROMs with it).
	missing *bool
	lists   []listFilter
}

type listFilter struct {
	name   string
	values []string
	logic  string // any | all | none
}

// Boolean filters of get_roms, with the version that has each.
var boolFilters = []struct {
	name string
	has  func(version) bool
}{
	{"matched", always}, {"favorite", always}, {"duplicate", always}, {"last_played", always},
	{"playable", always}, {"missing", always}, {"has_ra", always}, {"verified", always},
	{"has_saves", func(v version) bool { return v.has5Filters }},
	{"has_states", func(v version) bool { return v.has5Filters }},
	{"has_soundtrack", func(v version) bool { return v.has5Filters }},
	{"physical", func(v version) bool { return v.has53Filters }},
}

// List filters of get_roms (each with <name>_logic).
var listFilters = []struct {
	name string
	has  func(version) bool
}{
	{"genres", always}, {"franchises", always}, {"collections", always}, {"companies", always},
	{"age_ratings", always}, {"statuses", always}, {"regions", always}, {"languages", always},
	{"player_counts", always},
	{"metadata_providers", func(v version) bool { return v.has5Filters }},
	{"tags", func(v version) bool { return v.has5Filters }},
	{"publishers", func(v version) bool { return v.has53Filters }},
	{"developers", func(v version) bool { return v.has53Filters }},
}

func always(version) bool { return true }

// playableSlugs are platforms EmulatorJS plays in the browser
// (roms_handler.py EJS_SUPPORTED_PLATFORMS, the ones the fake has).
var playableSlugs = []string{"nes", "snes", "genesis", "psx", "gb",
	"gbc", "gba", "n64", "sms", "gamegear", "segacd", "sega32",
	"tg16", "atari2600", "atari7800", "lynx", "nds", "arcade"}

// parseROMQuery reads the filters of get_roms that this version declares.
func (s *Server) parseROMQuery(p *params) romQuery {
	q := romQuery{bools: map[string]bool{}}
	if st, ok := p.str("search_term"); ok {
		q.search = parseSearch(st)
	}
	if ids := p.ints("platform_ids"); len(ids) > 0 {
		q.platformIDs = map[int]bool{}
		for _, id := range ids {
			q.platformIDs[id] = true
		}
	}
	if id, ok := p.integer("collection_id", 0, ptr(1), nil); ok {
		q.intersect(s.collectionROMs(id))
	}
	if id, ok := p.integer("smart_collection_id", 0, ptr(1), nil); ok {
		q.intersect(s.smartROMs(id))
	}
	if id, ok := p.str("virtual_collection_id"); ok {
		q.intersect(s.virtualROMs(id))
	}
	for _, f := range boolFilters {
		if !f.has(s.ver) {
			continue
		}
		if v, set := p.boolean(f.name, false); set {
			if f.name == "missing" {
				q.missing = &v
				continue
			}
			q.bools[f.name] = v
		}
	}
	for _, f := range listFilters {
		if !f.has(s.ver) {
			continue
		}
		vals := p.strs(f.name)
		logic, _ := p.str(f.name + "_logic")
		if len(vals) > 0 {
			q.lists = append(q.lists, listFilter{name: f.name, values: vals, logic: strings.ToLower(logic)})
		}
	}
	return q
}

func (q *romQuery) intersect(ids map[int]bool) {
	if q.scope == nil {
		q.scope = ids
		return
	}
	for id := range q.scope {
		if !ids[id] {
			delete(q.scope, id)
		}
	}
}

// scoped reports whether ROM id passes the cheap filters (platform,
// collection scope, missing), the ones that need no name or metadata.
func (s *Server) scoped(q *romQuery, id int) bool {
	if q.scope != nil && !q.scope[id] {
		return false
	}
	fixture := id <= len(s.lib.fixture)
	if q.platformIDs != nil {
		pid := 0
		if fixture {
			pid = s.lib.fixture[id-1].PlatformID
		} else {
			pid = s.lib.synth.platformOf(id)
		}
		if !q.platformIDs[pid] {
			return false
		}
	}
	if q.missing != nil {
		m := false
		if fixture {
			m = s.lib.fixture[id-1].MissingFromFS
		} else {
			m = s.lib.synth.missing(id)
		}
		if m != *q.missing {
			return false
		}
	}
	return true
}

// matchSearch applies search_term; hashes are computed only for a digest
// term that the name did not already match.
func (s *Server) matchSearch(q *romQuery, r ROM) bool {
	if len(q.search) == 0 {
		return true
	}
	for _, t := range q.search {
		if t.matchesName(r.Name, r.FSName) {
			return true
		}
	}
	for _, t := range q.search {
		if t.digest == "" {
			continue
		}
		full := r
		if len(r.Files) == 0 {
			full, _ = s.lib.rom(r.ID)
		}
		if t.matchesHash(full) {
			return true
		}
	}
	return false
}

// matchRow applies the boolean and list filters.
func (s *Server) matchRow(q *romQuery, r ROM) bool {
	for name, want := range q.bools {
		if s.boolOf(name, r) != want {
			return false
		}
	}
	for _, f := range q.lists {
		have := s.listOf(f.name, r)
		hits := 0
		for _, v := range f.values {
			for _, h := range have {
				if strings.EqualFold(h, v) {
					hits++
					break
				}
			}
		}
		switch f.logic {
		case "all":
			if hits != len(f.values) {
				return false
			}
		case "none":
			if hits != 0 {
				return false
			}
		default: // "any", RomM's default
			if hits == 0 {
				return false
			}
		}
	}
	return true
}

func (s *Server) boolOf(name string, r ROM) bool {
	switch name {
	case "missing":
		return r.MissingFromFS
	case "matched":
		return r.IGDBID != 0
	case "favorite":
		for _, c := range s.lib.colls {
			if c.favorite && containsInt(c.romIDs, r.ID) {
				return true
			}
		}
		return false
	case "playable":
		p, _ := s.lib.platform(r.PlatformID)
		return slices.Contains(playableSlugs, p.Slug)
	}
	// duplicate, last_played, has_ra, verified, has_saves, has_states,
	// has_soundtrack, physical: nothing in the fake's library is.
	return false
}

func (s *Server) listOf(name string, r ROM) []string {
	switch name {
	case "genres":
		return r.Genres
	case "franchises":
		return r.Franchises
	case "collections":
		return r.Collections
	case "companies", "publishers", "developers":
		return r.Companies
	case "regions":
		return r.Regions
	case "languages":
		return r.Languages
	case "tags":
		return r.Tags
	case "player_counts":
		if r.PlayerCount != "" {
			return []string{r.PlayerCount}
		}
	case "metadata_providers":
		if r.IGDBID != 0 {
			return []string{"igdb"}
		}
	}
	return nil // age_ratings, statuses: none in the library
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ordered returns the ids in order_by/order_dir order (RomM: any Rom
// column, anything else by name_sort_key).
func (s *Server) ordered(orderBy, dir string) []int32 {
	var ids []int32
	switch strings.ToLower(orderBy) {
	case "id", "created_at", "updated_at": // created in id order
		ids = make([]int32, s.lib.romCount())
		for i := range ids {
			ids[i] = int32(i + 1)
		}
	case "fs_size_bytes", "fs_name":
		ids = append([]int32(nil), s.lib.nameOrder...)
		key := func(id int32) (int64, string) {
			r, _ := s.lib.meta(int(id))
			if orderBy == "fs_name" {
				return 0, r.FSName
			}
			if r.ID <= len(s.lib.fixture) {
				return r.Size(), ""
			}
			return int64(s.lib.synth.size(r.ID)), ""
		}
		sort.SliceStable(ids, func(a, b int) bool {
			na, sa := key(ids[a])
			nb, sb := key(ids[b])
			if na != nb {
				return na < nb
			}
			return sa < sb
		})
	default:
		ids = s.lib.nameOrder
	}
	if strings.ToLower(dir) == "desc" {
		rev := make([]int32, len(ids))
		for i, id := range ids {
			rev[len(ids)-1-i] = id
		}
		ids = rev
	}
	return ids
}

// filter returns the matching ids in order; scopeOnly applies only the
// scope and search (what RomM's filter_values are computed over).
func (s *Server) filter(q *romQuery, order []int32, scopeOnly bool) []int32 {
	needRow := len(q.search) > 0 || (!scopeOnly && (len(q.bools) > 0 || len(q.lists) > 0))
	cheap := *q
	if scopeOnly {
		cheap.missing = nil
	}
	var out []int32
	for _, id32 := range order {
		id := int(id32)
		if !s.scoped(&cheap, id) {
			continue
		}
		if needRow {
			r, _ := s.lib.meta(id)
			if !s.matchSearch(q, r) || (!scopeOnly && !s.matchRow(q, r)) {
				continue
			}
		}
		out = append(out, id32)
	}
	return out
}

// decodeVirtualID reverses RomM's VirtualCollection.id:
// urlsafe_b64(json.dumps({"name": ..., "type": ...})).
func decodeVirtualID(id string) (name, typ string, ok bool) {
	raw, err := base64.URLEncoding.DecodeString(id)
	if err != nil {
		return "", "", false
	}
	var v struct{ Name, Type string }
	if json.Unmarshal(raw, &v) != nil || v.Name == "" {
		return "", "", false
	}
	return v.Name, v.Type, true
}

// virtualID is RomM's id for a virtual collection: Python's json.dumps
// (", " and ": " separators, non-ASCII escaped) in URL-safe base64.
func virtualID(name, typ string) string {
	return base64.URLEncoding.EncodeToString([]byte(`{"name": ` + pyJSONString(name) + `, "type": ` + pyJSONString(typ) + `}`))
}

// pyJSONString is a string as Python's json.dumps writes it (ensure_ascii).
func pyJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				b.WriteString(hex4(0xd800 + (r >> 10)))
				b.WriteString(hex4(0xdc00 + (r & 0x3ff)))
			} else {
				b.WriteString(hex4(r))
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func hex4(r rune) string {
	const digits = "0123456789abcdef"
	return `\u` + string([]byte{digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15]})
}
