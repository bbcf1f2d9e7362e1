package fakeromm

import (
	"sort"
)

// Virtual collection types (the roms_metadata view behind
// VirtualCollection) and the metadata list each is built from.
var virtualTypes = []string{"collection", "company", "franchise", "genre", "mode"}

func virtualField(typ string, r ROM) []string {
	switch typ {
	case "collection":
		return r.Collections
	case "company":
		return r.Companies
	case "franchise":
		return r.Franchises
	case "genre":
		return r.Genres
	case "mode":
		return r.GameModes
	}
	return nil
}

type virtualColl struct {
	name, typ string
	romIDs    []int
}

// virtuals are the virtual collections of the fixture library, sorted by
// name as RomM sorts them (synthetic ROMs join none: RomM builds them from
// provider metadata, which synthetic ROMs do not have).
func (s *Server) virtuals(typ string) []virtualColl {
	var out []virtualColl
	for _, t := range virtualTypes {
		if typ != "all" && typ != t {
			continue
		}
		byName := map[string][]int{}
		for _, r := range s.lib.fixture {
			for _, n := range virtualField(t, r) {
				byName[n] = append(byName[n], r.ID)
			}
		}
		for n, ids := range byName {
			out = append(out, virtualColl{name: n, typ: t, romIDs: ids})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].name != out[j].name {
			return out[i].name < out[j].name
		}
		return out[i].typ < out[j].typ
	})
	return out
}

func (s *Server) collectionROMs(id int) map[int]bool {
	out := map[int]bool{}
	for _, c := range s.lib.colls {
		if c.id == id {
			for _, r := range c.romIDs {
				out[r] = true
			}
		}
	}
	return out
}

func (s *Server) smartROMs(id int) map[int]bool {
	out := map[int]bool{}
	for _, c := range s.lib.smart {
		if c.id == id {
			for _, r := range s.smartIDs(c) {
				out[r] = true
			}
		}
	}
	return out
}

// smartIDs evaluates a smart collection's criteria over the library.
func (s *Server) smartIDs(c smartCollection) []int {
	q := romQuery{platformIDs: map[int]bool{}}
	for _, p := range c.platformIDs {
		q.platformIDs[p] = true
	}
	var ids []int
	for _, id := range s.filter(&q, s.ordered("id", "asc"), false) {
		ids = append(ids, int(id))
	}
	return ids
}

func (s *Server) virtualROMs(id string) map[int]bool {
	out := map[int]bool{}
	name, typ, ok := decodeVirtualID(id)
	if !ok {
		return out
	}
	for _, v := range s.virtuals(typ) {
		if v.name == name && v.typ == typ {
			for _, r := range v.romIDs {
				out[r] = true
			}
		}
	}
	return out
}

func (s *Server) base(name, desc string, ids []int) collectionBase {
	now := stamp(s.lib.now)
	ids = append([]int{}, ids...)
	sort.Ints(ids)
	return collectionBase{Name: name, Description: desc, ROMIDs: ids, ROMCount: len(ids),
		PathCoversSmall: []string{}, PathCoversLarge: []string{}, CreatedAt: now, UpdatedAt: now}
}

func (s *Server) collectionJSON(c collection) collectionJSON {
	b := s.base(c.name, c.desc, c.romIDs)
	b.IsPublic, b.IsFavorite = c.public, c.favorite
	return collectionJSON{collectionBase: b, ID: c.id, UserID: ownerID, OwnerUsername: ownerName}
}

func (s *Server) smartJSON(c smartCollection) smartCollectionJSON {
	b := s.base(c.name, c.desc, s.smartIDs(c))
	b.IsSmart = true
	return smartCollectionJSON{collectionBase: b, ID: c.id, FilterCriteria: c.criteria, FilterSummary: c.summary,
		UserID: ownerID, OwnerUsername: ownerName}
}

func (s *Server) virtualJSON(v virtualColl) virtualCollectionJSON {
	b := s.base(v.name, "", v.romIDs)
	b.IsVirtual = true
	return virtualCollectionJSON{collectionBase: b, ID: virtualID(v.name, v.typ), Type: v.typ}
}
