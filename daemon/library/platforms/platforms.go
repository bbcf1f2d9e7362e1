// Package platforms maps RomM platforms to Batocera system folders and back. It is pure: the
// table comes from RomM's own Batocera config (see table.go), the overrides from
// cabinet.romm.platform_map, and the list of systems this cabinet has from ES.
package platforms

import (
	"sort"
	"strings"
)

// Map is an immutable mapping; WithOverrides returns a new one.
type Map struct {
	toSlug    map[string]string // Batocera folder → RomM slug (the table)
	canonical map[string]string // RomM slug → one Batocera folder (the inverse)
	overrides map[string]string // RomM slug (or fs_slug) → Batocera folder, from the config
}

// Default is the table of RomM's Batocera config with one canonical folder per slug.
func Default() *Map {
	m := &Map{
		toSlug:    make(map[string]string, len(batoceraToRomM)),
		canonical: make(map[string]string),
	}
	byslug := map[string][]string{}
	for _, p := range batoceraToRomM {
		m.toSlug[p[0]] = p[1]
		byslug[p[1]] = append(byslug[p[1]], p[0])
	}
	for slug, folders := range byslug {
		if f, ok := canonicalFolder[slug]; ok {
			m.canonical[slug] = f
			continue
		}
		if _, ok := m.toSlug[slug]; ok {
			m.canonical[slug] = slug // the folder named like the slug: psx, gb, snes, wii
			continue
		}
		if len(folders) == 1 {
			m.canonical[slug] = folders[0]
		}
		// Several folders and no pick: left out, so the slug is unmapped rather than guessed.
		// TestDefaultHasNoAmbiguousSlug keeps this branch empty.
	}
	return m
}

// WithOverrides returns a copy of m with cabinet.romm.platform_map applied: RomM slug → Batocera
// folder. Keys and values are lowercased; empty ones are ignored.
func (m *Map) WithOverrides(over map[string]string) *Map {
	n := &Map{toSlug: m.toSlug, canonical: m.canonical, overrides: make(map[string]string, len(m.overrides)+len(over))}
	for k, v := range m.overrides {
		n.overrides[k] = v
	}
	for k, v := range over {
		k, v = norm(k), norm(v)
		if k != "" && v != "" {
			n.overrides[k] = v
		}
	}
	return n
}

// Folder maps a RomM platform to a Batocera system folder, first match wins:
//
//  1. fs_slug, when it is a Batocera folder of the table (RomM libraries laid out with RomM's
//     Batocera config use the Batocera folder names on disk);
//  2. an override keyed by fs_slug, then one keyed by slug;
//  3. the canonical folder of slug.
//
// Otherwise ok is false: unmapped, never guessed. esSystems are the folders ES lists (/systems); a
// candidate counts only when ES lists it, and the next rule is tried when it does not. A nil
// esSystems does not filter.
func (m *Map) Folder(slug, fsSlug string, esSystems map[string]bool) (folder string, ok bool) {
	slug, fsSlug = norm(slug), norm(fsSlug)
	listed := func(f string) bool { return f != "" && (esSystems == nil || esSystems[f]) }
	if _, known := m.toSlug[fsSlug]; known && listed(fsSlug) {
		return fsSlug, true
	}
	for _, key := range []string{fsSlug, slug} {
		if f, ok := m.overrides[key]; ok && key != "" && listed(f) {
			return f, true
		}
	}
	if f, ok := m.canonical[slug]; ok && listed(f) {
		return f, true
	}
	return "", false
}

// Candidates are the Batocera folders a RomM platform's games may be put in, for an install:
// the fs_slug when it is a Batocera folder of the table, else an override's folder, else every
// folder of the table for the slug (arcade: fbneo, mame, naomi, …), sorted. Only those ES lists
// count (nil esSystems does not filter). One candidate is the folder to use; several make the
// caller ask which.
func (m *Map) Candidates(slug, fsSlug string, esSystems map[string]bool) []string {
	slug, fsSlug = norm(slug), norm(fsSlug)
	listed := func(f string) bool { return f != "" && (esSystems == nil || esSystems[f]) }
	if _, known := m.toSlug[fsSlug]; known && listed(fsSlug) {
		return []string{fsSlug}
	}
	for _, key := range []string{fsSlug, slug} {
		if f, ok := m.overrides[key]; ok && key != "" && listed(f) {
			return []string{f}
		}
	}
	var out []string
	for folder, s := range m.toSlug {
		if s == slug && listed(folder) {
			out = append(out, folder)
		}
	}
	sort.Strings(out)
	return out
}

// Slugs are the RomM slugs that map to a Batocera folder (to filter a search by a folder): the
// table's slug for it and every override naming it, sorted. A caller matching platforms should
// also take a platform whose fs_slug is the folder itself.
func (m *Map) Slugs(folder string) []string {
	folder = norm(folder)
	if folder == "" {
		return nil
	}
	set := map[string]bool{}
	if s, ok := m.toSlug[folder]; ok {
		set[s] = true
	}
	for k, v := range m.overrides {
		if v == folder {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Known reports whether folder is a Batocera folder of the table or an override's target.
func (m *Map) Known(folder string) bool {
	folder = norm(folder)
	if _, ok := m.toSlug[folder]; ok {
		return true
	}
	for _, v := range m.overrides {
		if v == folder {
			return true
		}
	}
	return false
}

func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
