package romarr

import (
	"sort"
	"testing"
)

func TestPlatformFor(t *testing.T) {
	tests := []struct {
		folder, slug string
		ok           bool
	}{
		{"snes", "snes", true},
		{"megadrive", "genesis-slash-megadrive", true}, // RomM says "genesis"; ROMarr keeps IGDB's slug
		{"pcengine", "turbografx16--1", true},          // ROMarr's resolve() does not know "pcengine"
		{"pcenginecd", "turbografx-16-slash-pc-engine-cd", true},
		{"mastersystem", "sms", true},
		{"mame", "arcade", true},
		{"fbneo", "arcade", true},
		{"dreamcast", "dc", true},
		{"gamecube", "ngc", true},
		{"zxspectrum", "zxs", true},
		{"amiga1200", "amiga", true},
		{"windows", "win", true},
		{"naomi", "", false},     // ROMarr's arcade is MAME romsets; a NAOMI game filed there would not run
		{"snes-msu1", "", false}, // packaging, not a platform
		{"switch", "", false},    // ROMarr 0.8 has no Switch
		{"MegaDrive", "", false}, // folders are matched as Batocera spells them
		{"", "", false},
		{"genesis-slash-megadrive", "", false}, // a ROMarr slug is not a Batocera folder
	}
	for _, tt := range tests {
		t.Run(tt.folder, func(t *testing.T) {
			slug, ok := PlatformFor(tt.folder)
			if slug != tt.slug || ok != tt.ok {
				t.Fatalf("PlatformFor(%q) = %q, %v; want %q, %v", tt.folder, slug, ok, tt.slug, tt.ok)
			}
		})
	}
}

// Every slug the table names is one ROMarr 0.8 has (its /api/platforms, captured). The test
// against the real ROMarr checks the same on the live answer.
func TestPlatformForSlugsExist(t *testing.T) {
	platforms, err := testClient(t).decodePlatforms(testdata(t, "platforms.json"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, p := range platforms {
		known[p.Slug] = true
	}
	var folders []string
	for f := range batoceraToROMarr() {
		folders = append(folders, f)
	}
	sort.Strings(folders)
	for _, f := range folders {
		if slug, _ := PlatformFor(f); !known[slug] {
			t.Errorf("PlatformFor(%q) = %q, which ROMarr does not have", f, slug)
		}
	}
}
