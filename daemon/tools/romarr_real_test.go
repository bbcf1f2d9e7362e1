package tools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realromarr"
)

// realROMarrKey is the API key the real ROMarr is started with; no answer
// may carry it.
const realROMarrKey = "cabinet-tools-test-key-0123456789"

// TestROMarrToolsAgainstRealROMarr drives the romarr_* tools and
// library_search through the real ROMarr (no indexers, no download
// client, a folder library holding a copy of Alpha Quest), with the fake
// RomM beside it, as a household with both would. ROMarr starts in about
// half a second, so -short runs it too; without the peer it is skipped.
func TestROMarrToolsAgainstRealROMarr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []string{"nes/Alpha Quest (USA).nes", "snes/Super Mario World (USA).sfc"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("rom"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := realromarr.Start(t, realromarr.Options{APIKey: realROMarrKey, Env: []string{"LIBRARY_KIND=folder", "LIBRARY_PATH=" + dir}})
	rc, err := romarr.New(romarr.Config{URL: srv.URL(), APIKey: srv.APIKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mc, err := romm.New(romm.Config{URL: fakeRommAt(t, fr), Token: fakeromm.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigConfig{deps: func(d *Deps) {
		d.Library = Library{RomM: mc, ROMarr: rc, Platforms: platforms.Default(), AllowWrites: true}
	}})
	// noKey checks that nothing the tools said carries ROMarr's key.
	noKey := func(name string, v any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if strings.Contains(string(b), realROMarrKey) {
			t.Errorf("%s: the API key is in the answer: %s", name, b)
		}
	}

	t.Run("status", func(t *testing.T) {
		var st romarrStatusResult
		res := r.ok("romarr_status", nil, &st)
		noKey("romarr_status", res)
		if !st.Reachable || st.Version != "0.8.0" || st.Indexers != 0 || len(st.DownloadClients) != 0 || !st.LibraryOK || st.RommLinked {
			t.Fatalf("romarr_status: %+v", st)
		}
		if w := strings.Join(st.Warnings, " "); !strings.Contains(w, "no indexers") || !strings.Contains(w, "no download client") {
			t.Errorf("warnings %q, want no indexers and no download client", st.Warnings)
		}
		var ls libraryStatusResult
		r.ok("library_status", nil, &ls)
		if ls.ROMarr == nil || !ls.ROMarr.Reachable || ls.ROMarr.Version != "0.8.0" || ls.RomM == nil || !ls.RomM.Reachable {
			t.Errorf("library_status: RomM %+v, ROMarr %+v", ls.RomM, ls.ROMarr)
		}
	})

	t.Run("empty backlog", func(t *testing.T) {
		var w romarrWantedResult
		r.ok("romarr_wanted", nil, &w)
		var q romarrQueueResult
		r.ok("romarr_queue", nil, &q)
		if len(w.Wanted) != 0 || len(q.Queue) != 0 {
			t.Fatalf("wanted %+v, queue %+v; want both empty", w.Wanted, q.Queue)
		}
	})

	t.Run("request finds no release", func(t *testing.T) {
		a := r.action("romarr_request_game", map[string]any{"game": "Chrono Trigger", "platform": "snes"})
		noKey("romarr_request_game", a)
		// ROMarr's own words, as an action done: the request is recorded.
		if a.Outcome != outcomeDone || !strings.Contains(a.Detail, "found no release of Chrono Trigger") ||
			!strings.Contains(a.Detail, "no usable release among 0 result(s)") || !strings.Contains(a.Detail, "wanted list") {
			t.Fatalf("romarr_request_game: %+v", a)
		}
		var w romarrWantedResult
		r.ok("romarr_wanted", map[string]any{"platform": "snes"}, &w)
		if len(w.Wanted) != 1 || w.Wanted[0].Title != "Chrono Trigger" || w.Wanted[0].Attempts != 1 ||
			w.Wanted[0].LastError != "no usable release among 0 result(s)" || w.Wanted[0].Added == "" {
			t.Fatalf("romarr_wanted: %+v, want Chrono Trigger after one search", w.Wanted)
		}
		r.ok("romarr_wanted", map[string]any{"platform": "n64"}, &w)
		if len(w.Wanted) != 0 {
			t.Errorf("romarr_wanted for n64: %+v", w.Wanted)
		}
		var q romarrQueueResult
		r.ok("romarr_queue", nil, &q)
		if len(q.Queue) != 1 || q.Queue[0].Title != "Chrono Trigger" || q.Queue[0].State != "failed" {
			t.Errorf("romarr_queue: %+v, want the failed search", q.Queue)
		}
	})

	t.Run("request by Batocera folder", func(t *testing.T) {
		a := r.action("romarr_request_game", map[string]any{"game": "Streets of Rage 2", "platform": "megadrive"})
		slug, _ := romarr.PlatformFor("megadrive")
		if a.Outcome != outcomeDone || !slices.ContainsFunc(a.Warnings, func(w string) bool { return strings.Contains(w, slug) }) {
			t.Fatalf("romarr_request_game megadrive: %+v, want a note that it is ROMarr's %s", a, slug)
		}
		var w romarrWantedResult
		r.ok("romarr_wanted", map[string]any{"platform": "megadrive"}, &w)
		if len(w.Wanted) != 1 || w.Wanted[0].Title != "Streets of Rage 2" || w.Wanted[0].Platform != slug {
			t.Errorf("romarr_wanted megadrive: %+v", w.Wanted)
		}
	})

	t.Run("library_search has both servers' hits", func(t *testing.T) {
		var res librarySearchResult
		// ROMarr reads its folder library after it starts: until then the
		// search says so in a warning.
		cabinettest.Await(t, "ROMarr's library to answer", nil, func() bool {
			res = librarySearchResult{}
			r.ok("library_search", map[string]any{"query": "alpha"}, &res)
			return len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, " "), "still reading")
		})
		noKey("library_search", res)
		if len(res.Warnings) != 0 {
			t.Fatalf("warnings %q", res.Warnings)
		}
		var fromRomM, fromROMarr []libraryHit
		for _, h := range res.Hits {
			switch h.Source {
			case "romm":
				fromRomM = append(fromRomM, h)
			case "romarr":
				fromROMarr = append(fromROMarr, h)
			}
		}
		if len(fromRomM) != 1 || fromRomM[0].ROMID == nil || *fromRomM[0].ROMID != fakeromm.ROMAlphaQuest {
			t.Errorf("RomM's hits %+v, want Alpha Quest", fromRomM)
		}
		if len(fromROMarr) != 1 || fromROMarr[0].Name != "Alpha Quest (USA)" || fromROMarr[0].Platform != "nes" || fromROMarr[0].ROMID != nil {
			t.Errorf("ROMarr's hits %+v, want its Alpha Quest (USA) on nes, without a RomM id", fromROMarr)
		}
		if i := slices.IndexFunc(res.Hits, func(h libraryHit) bool { return h.Source == "romarr" }); i < len(fromRomM) {
			t.Errorf("a ROMarr hit at %d, before RomM's: %+v", i, res.Hits)
		}
		// A later page and on_cabinet=yes are RomM's alone.
		r.ok("library_search", map[string]any{"query": "alpha", "on_cabinet": "yes"}, &res)
		for _, h := range res.Hits {
			if h.Source == "romarr" {
				t.Errorf("on_cabinet=yes kept ROMarr's %s", h.Name)
			}
		}
	})

	t.Run("no write tool without allow_writes", func(t *testing.T) {
		ro := newRig(t, rigConfig{deps: func(d *Deps) { d.Library = Library{ROMarr: rc} }})
		if slices.Contains(ro.srv.ToolNames(), "romarr_request_game") {
			t.Fatal("romarr_request_game registered without allow_writes")
		}
		if !slices.Contains(ro.srv.ToolNames(), "romarr_wanted") {
			t.Fatalf("tools %v, want the ROMarr reads", ro.srv.ToolNames())
		}
	})

	if out := srv.Outgoing(); len(out) > 0 {
		t.Errorf("ROMarr reached off the machine: %v", out)
	}
}
