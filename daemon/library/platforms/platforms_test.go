package platforms

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestFolder(t *testing.T) {
	es := map[string]bool{"snes": true, "megadrive": true, "mame": true, "fbneo": true, "pcengine": true,
		"psx": true, "gb": true, "model2": true, "megacd": true}
	over := Default().WithOverrides(map[string]string{"arcade": "fbneo", "sfam": "snes", "my-gb": "gb", "wonderswan": "wswan"})
	tests := []struct {
		name         string
		m            *Map
		slug, fsSlug string
		es           map[string]bool
		want         string
		wantOK       bool
	}{
		{"fs_slug is a Batocera folder", Default(), "genesis", "megadrive", es, "megadrive", true},
		{"fs_slug beats the slug's canonical folder", Default(), "arcade", "fbneo", es, "fbneo", true},
		{"slug inverted: genesis", Default(), "genesis", "genesis", es, "megadrive", true},
		{"slug inverted: tg16", Default(), "tg16", "tg16", es, "pcengine", true},
		{"slug inverted: arcade", Default(), "arcade", "arcade", es, "mame", true},
		{"slug inverted: psx", Default(), "psx", "playstation", es, "psx", true},
		{"slug inverted: segacd", Default(), "segacd", "sega-cd", es, "megacd", true},
		{"slug model2 goes to model2, not lindbergh", Default(), "model2", "sega-model-2", es, "model2", true},
		{"case and spaces", Default(), " Genesis ", "GENESIS", es, "megadrive", true},
		{"override on slug", over, "sfam", "sfam", es, "snes", true},
		{"override beats canonical", over, "arcade", "arcade", es, "fbneo", true},
		{"override on fs_slug", over, "gb", "my-gb", es, "gb", true},
		{"fs_slug still beats an override", over, "arcade", "mame", es, "mame", true},
		{"override target not listed by ES", over, "wonderswan", "wonderswan", es, "", false},
		{"fs_slug not listed by ES falls through to canonical", Default(), "genesis", "megadrive-msu", es, "megadrive", true},
		{"not listed by ES at all", Default(), "n64", "n64", es, "", false},
		{"nil ES list does not filter", Default(), "n64", "n64", nil, "n64", true},
		{"unmapped slug", Default(), "commodore-pet-unknown", "weird", es, "", false},
		{"empty", Default(), "", "", nil, "", false},
		{"unmapped with empty ES list", Default(), "snes", "snes", map[string]bool{}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.m.Folder(tt.slug, tt.fsSlug, tt.es)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Folder(%q, %q) = %q, %v; want %q, %v", tt.slug, tt.fsSlug, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestSlugs(t *testing.T) {
	over := Default().WithOverrides(map[string]string{"sfam": "snes", "arcade": "fbneo"})
	tests := []struct {
		m      *Map
		folder string
		want   []string
	}{
		{Default(), "megadrive", []string{"genesis"}},
		{Default(), "mame", []string{"arcade"}},
		{Default(), "pcengine", []string{"tg16"}},
		{Default(), "nothing", []string{}},
		{Default(), "", nil},
		{over, "snes", []string{"sfam", "snes"}},
		{over, "FBNeo", []string{"arcade"}},
	}
	for _, tt := range tests {
		got := tt.m.Slugs(tt.folder)
		if !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
			t.Errorf("Slugs(%q) = %#v, want %#v", tt.folder, got, tt.want)
		}
	}
}

func TestWithOverridesDoesNotChangeTheOriginal(t *testing.T) {
	base := Default()
	_ = base.WithOverrides(map[string]string{"arcade": "fbneo"})
	if got, _ := base.Folder("arcade", "arcade", nil); got != "mame" {
		t.Errorf("base map changed by WithOverrides: arcade → %q, want mame", got)
	}
	two := base.WithOverrides(map[string]string{"arcade": "fbneo"}).WithOverrides(map[string]string{"sfam": "snes"})
	if got, _ := two.Folder("arcade", "arcade", nil); got != "fbneo" {
		t.Errorf("chained overrides lost the first: arcade → %q, want fbneo", got)
	}
	if !two.Known("fbneo") || !two.Known("snes") || two.Known("nope") {
		t.Errorf("Known gives wrong answers")
	}
}

// TestDefaultHasNoAmbiguousSlug: every slug of the table has one canonical folder, and the folder
// maps back to a slug (so a new many-to-one entry cannot silently become unmapped).
func TestDefaultHasNoAmbiguousSlug(t *testing.T) {
	m := Default()
	slugs := map[string]bool{}
	for _, p := range batoceraToRomM {
		slugs[p[1]] = true
	}
	for s := range slugs {
		f, ok := m.canonical[s]
		if !ok {
			t.Errorf("slug %q has no canonical folder: add it to canonicalFolder", s)
			continue
		}
		if _, known := m.toSlug[f]; !known {
			t.Errorf("slug %q → folder %q, which is not a folder of the table", s, f)
		}
	}
	for s, f := range canonicalFolder {
		if !slugs[s] {
			t.Errorf("canonicalFolder has %q → %q, but no folder maps to slug %q", s, f, s)
		}
	}
}

// TestTableMatchesReference checks the Go table against the reference YAML it was written from.
func TestTableMatchesReference(t *testing.T) {
	const ref = "../../../../shared/reference/batocera-romm-platform-map.yml"
	data, err := os.ReadFile(ref)
	if err != nil {
		t.Skipf("reference file not beside the repository (%v): nothing to compare", err)
	}
	line := regexp.MustCompile(`^    ([^\s:]+): (\S+)$`)
	want := map[string]string{}
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if l == "  platforms:" {
			in = true
			continue
		}
		if in {
			mm := line.FindStringSubmatch(l)
			if mm == nil {
				break
			}
			want[mm[1]] = mm[2]
		}
	}
	if len(want) < 100 {
		t.Fatalf("read only %d pairs from %s: the parser is out of step with the file", len(want), ref)
	}
	got := Default().toSlug
	for f, s := range want {
		if got[f] != s {
			t.Errorf("folder %q: table says %q, reference says %q", f, got[f], s)
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("folder %q is in the table but not in the reference", f)
		}
	}
}

// FuzzFolder: whatever the slugs, a folder is only returned when ES lists it and the map knows it.
func FuzzFolder(f *testing.F) {
	for _, s := range [][2]string{{"genesis", "megadrive"}, {"arcade", "fbneo"}, {"tg16", "x"}, {"", ""}, {"SNES", " snes "}} {
		f.Add(s[0], s[1])
	}
	m := Default().WithOverrides(map[string]string{"sfam": "snes", "arcade": "fbneo"})
	es := map[string]bool{"snes": true, "megadrive": true, "fbneo": true, "mame": true}
	f.Fuzz(func(t *testing.T, slug, fsSlug string) {
		folder, ok := m.Folder(slug, fsSlug, es)
		if ok != (folder != "") {
			t.Fatalf("Folder(%q, %q) = %q, %v", slug, fsSlug, folder, ok)
		}
		if ok && (!es[folder] || !m.Known(folder)) {
			t.Fatalf("Folder(%q, %q) = %q, which ES does not list or the map does not know", slug, fsSlug, folder)
		}
		if all, okAll := m.Folder(slug, fsSlug, nil); ok && !okAll {
			t.Fatalf("filtering by ES found %q where no filter found nothing (%q)", folder, all)
		}
	})
}

func TestCandidates(t *testing.T) {
	m := Default().WithOverrides(map[string]string{"sfam": "snes"})
	listed := map[string]bool{"mame": true, "fbneo": true, "nes": true, "snes": true, "megadrive": true}
	tests := []struct {
		slug, fsSlug string
		want         []string
	}{
		{"arcade", "arcade", []string{"fbneo", "mame"}}, // several folders ES lists: the caller asks
		{"nes", "nes", []string{"nes"}},
		{"genesis", "genesis", []string{"megadrive"}},
		{"genesis", "megadrive", []string{"megadrive"}}, // RomM laid out with Batocera's names
		{"snes", "sfam", []string{"snes"}},              // an override
		{"psx", "psx", nil},                             // ES lists no psx
		{"ios", "ios", nil},                             // no Batocera folder
	}
	for _, tt := range tests {
		if got := m.Candidates(tt.slug, tt.fsSlug, listed); !slices.Equal(got, tt.want) {
			t.Errorf("Candidates(%q, %q) = %v, want %v", tt.slug, tt.fsSlug, got, tt.want)
		}
	}
}
