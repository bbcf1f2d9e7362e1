package savesync

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestAutoState: with States on, RetroArch's auto state goes in its own slot beside the save.
func TestAutoState(t *testing.T) {
	r := newRig(t)
	r.sy.States = true
	g := r.game()
	r.write(g, []byte("battery"), r.tm(0))
	state := r.sy.Layout.Path(g, AutoState)
	os.WriteFile(state, []byte("state v1"), 0o644)
	os.Chtimes(state, r.tm(0), r.tm(0))
	r.at(time.Minute)
	if res := r.sync(g); res.Count(Uploaded) != 2 {
		t.Fatalf("uploaded %+v", res.Items)
	}
	slots := map[string]bool{}
	for _, sv := range r.fake.Saves(g.ROMID) {
		slots[sv.Slot] = true
	}
	if !slots[Battery.Slot] || !slots[AutoState.Slot] {
		t.Fatalf("RomM's slots: %v", slots)
	}
	// Without States, the state is not the sync's business.
	r.sy.States = false
	os.WriteFile(state, []byte("state v2"), 0o644)
	r.at(2 * time.Minute)
	if res := r.sync(g); res.Count(Uploaded) != 0 {
		t.Fatalf("with states off: %+v", res.Items)
	}
}

// TestAutoLoadHides: a downloaded save of a game whose auto state Batocera loads says so.
func TestAutoLoadHides(t *testing.T) {
	r := newRig(t)
	r.sy.AutoLoads = func(system, rom string) bool { return true }
	g := r.game()
	os.MkdirAll(filepath.Dir(r.srm(g)), 0o755)
	os.WriteFile(r.sy.Layout.Path(g, AutoState), []byte("state"), 0o644)
	r.fromHandheld(g, "Alpha Quest.srm", []byte("handheld"))
	r.at(time.Minute)
	if it := item(t, r.sync(g), Downloaded); it.Hidden != r.sy.Layout.Path(g, AutoState) {
		t.Fatalf("hidden by %q", it.Hidden)
	}
}

func TestServerNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"Alpha Quest [2026-12-06_10-00-00].srm", true},
		{"alpha.SAV", true},
		{"../x.srm", false},
		{"a/b.srm", false},
		{`a\b.srm`, false},
		{"x\x00.srm", false},
		{strings.Repeat("a", 300) + ".srm", false},
		{"..", false},
		{"x.state", false},
		{"", false},
	} {
		if err := checkServerName(tc.name, Battery); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.name, err)
		}
	}
}

// FuzzServerName: whatever RomM names a save, an accepted name is one plain element, and the
// refusal's text is one clean line.
func FuzzServerName(f *testing.F) {
	for _, s := range []string{"x.srm", "../x.srm", "a/b.sav", "x\x00.srm", "\u202ex.srm", strings.Repeat("é", 200) + ".srm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := checkServerName(name, Battery)
		if err == nil {
			if strings.ContainsAny(name, "/\\\x00") || name == "." || name == ".." || len(name) > maxName {
				t.Fatalf("accepted %q", name)
			}
			if filepath.Base(name) != name {
				t.Fatalf("accepted %q, which is not its own base", name)
			}
			return
		}
		msg := err.Error()
		if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\x00\n\r\u202e") {
			t.Fatalf("refusal %q", msg)
		}
	})
}

// FuzzParseCopy: a backup folder's names never parse into a path outside it.
func FuzzParseCopy(f *testing.F) {
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	f.Add("x.srm." + at.Format(stampLayout))
	f.Add("x.srm.romm-" + at.Format(stampLayout))
	f.Add(".romm-" + at.Format(stampLayout))
	f.Fuzz(func(t *testing.T, name string) {
		c, ok := parseCopy(name)
		if !ok {
			return
		}
		if c.Save == "" || !strings.HasPrefix(name, c.Save) || c.MadeAt.IsZero() {
			t.Fatalf("%q parsed as %+v", name, c)
		}
		if !bytes.Equal([]byte(name[len(c.Save):len(c.Save)+1]), []byte(".")) {
			t.Fatalf("%q: no dot after the save's name", name)
		}
	})
}
