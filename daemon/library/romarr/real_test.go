package romarr_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realromarr"
)

// folderLibrary makes a ROM folder in the layout ROMarr's folder library reads (platform/file)
// and returns the environment that points ROMarr at it.
func folderLibrary(t *testing.T, files ...string) []string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("rom"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"LIBRARY_KIND=folder", "LIBRARY_PATH=" + dir}
}

func client(t *testing.T, url, key string) *romarr.Client {
	t.Helper()
	c, err := romarr.New(romarr.Config{URL: url, APIKey: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRealROMarr drives the real ROMarr (no indexers, no download clients, a folder library)
// through the client, in the order a household would: look, ask for a game it cannot find,
// ask again, look again.
func TestRealROMarr(t *testing.T) {
	srv := realromarr.Start(t, realromarr.Options{Env: folderLibrary(t,
		"snes/Super Mario World (USA).sfc", "snes/Super Metroid (Japan, USA).sfc",
		"genesis-slash-megadrive/Sonic the Hedgehog (USA, Europe).md")})
	c := client(t, srv.URL(), srv.APIKey())
	ctx := context.Background()

	t.Run("status", func(t *testing.T) {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Version != "0.8.0" || st.Platforms != 73 || st.Indexers != 0 || st.IndexerError != "" || st.Prowlarr ||
			len(st.DownloadClients) != 0 || len(st.Libraries) != 1 || st.Libraries[0].Type != "folder" || !st.LibraryServerOK || st.RommOK {
			t.Fatalf("status = %+v", st)
		}
	})

	t.Run("empty backlog", func(t *testing.T) {
		w, err := c.Wanted(ctx, "", 0)
		if err != nil || len(w) != 0 {
			t.Fatalf("Wanted() = %v, %v; want nothing", w, err)
		}
		q, err := c.Queue(ctx)
		if err != nil || len(q) != 0 {
			t.Fatalf("Queue() = %v, %v; want nothing", q, err)
		}
	})

	var slugs map[string]bool
	t.Run("platforms", func(t *testing.T) {
		ps, err := c.Platforms(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slugs = map[string]bool{}
		for _, p := range ps {
			slugs[p.Slug] = true
		}
		for _, folder := range []string{"snes", "megadrive", "pcengine", "mastersystem", "mame", "dreamcast", "zxspectrum", "psx"} {
			slug, ok := romarr.PlatformFor(folder)
			if !ok || !slugs[slug] {
				t.Errorf("PlatformFor(%q) = %q, %v: not one of ROMarr's %d platforms", folder, slug, ok, len(ps))
			}
		}
	})

	before := time.Now().Add(-time.Minute)
	t.Run("request finds no release", func(t *testing.T) {
		res, err := c.RequestGame(ctx, "Chrono Trigger", "snes")
		if err != nil {
			t.Fatal(err)
		}
		if want := (romarr.RequestResult{Error: "no usable release among 0 result(s)"}); res != want {
			t.Fatalf("RequestGame() = %+v, want %+v", res, want)
		}
		w, err := c.Wanted(ctx, "snes", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != 1 || w[0].Title != "Chrono Trigger" || w[0].Attempts != 1 || w[0].LastError != res.Error || w[0].Added.Before(before) {
			t.Fatalf("wanted = %+v, want Chrono Trigger added now after 1 attempt", w)
		}
		if other, _ := c.Wanted(ctx, "n64", 10); len(other) != 0 {
			t.Fatalf("wanted for n64 = %+v", other)
		}
	})

	t.Run("second request is a retry", func(t *testing.T) {
		res, err := c.RequestGame(ctx, "chrono trigger", "Super Nintendo") // ROMarr folds case and resolves names
		if err != nil || res.OK || res.Error != "no usable release among 0 result(s)" {
			t.Fatalf("RequestGame() = %+v, %v", res, err)
		}
		w, err := c.Wanted(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != 1 || w[0].Attempts != 2 {
			t.Fatalf("wanted = %+v, want the one entry after 2 attempts", w)
		}
		q, err := c.Queue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(q) != 2 || q[0].Index != 1 || q[0].Title != "chrono trigger" || q[1].Index != 0 || q[0].State != "failed" || q[0].Detail != res.Error {
			t.Fatalf("queue = %+v, want two failed rows, newest first", q)
		}
	})

	t.Run("Batocera folder through its slug", func(t *testing.T) {
		slug, _ := romarr.PlatformFor("megadrive")
		res, err := c.RequestGame(ctx, "Streets of Rage 2", slug)
		if err != nil || res.Error != "no usable release among 0 result(s)" {
			t.Fatalf("RequestGame(%q) = %+v, %v; want ROMarr to know the platform", slug, res, err)
		}
		w, _ := c.Wanted(ctx, slug, 10)
		if len(w) != 1 || w[0].Platform != slug {
			t.Fatalf("wanted for %s = %+v", slug, w)
		}
	})

	t.Run("unknown platform", func(t *testing.T) {
		res, err := c.RequestGame(ctx, "Zelda", "pcengine") // a Batocera folder ROMarr does not resolve
		if err != nil || res.OK || res.Error != "unknown platform: 'pcengine'" {
			t.Fatalf("RequestGame() = %+v, %v", res, err)
		}
		w, _ := c.Wanted(ctx, "", 10)
		for _, e := range w {
			if e.Title == "Zelda" {
				t.Fatalf("an unknown platform was put on the Wanted list: %+v", e)
			}
		}
	})

	t.Run("search the library", func(t *testing.T) {
		var got []romarr.LibraryItem
		var err error
		cabinettest.Await(t, "ROMarr's library to load", nil, func() (bool, string) {
			got, err = c.Search(ctx, "super m", 10)
			return !errors.Is(err, romarr.ErrLibraryLoading), "still loading"
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Name != "Super Mario World (USA)" || got[0].Platform != "snes" || got[0].Extension != ".sfc" {
			t.Fatalf("Search() = %+v", got)
		}
		if got, err := c.Search(ctx, "sonic", 10); err != nil || len(got) != 1 || got[0].Platform != "genesis-slash-megadrive" {
			t.Fatalf("Search(sonic) = %+v, %v", got, err)
		}
	})

	t.Run("status counts the backlog", func(t *testing.T) {
		st, err := c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Queued counts active rows only; all three are failed.
		if st.Wanted != 2 || st.Queued != 0 || st.Games == nil || *st.Games != 3 {
			t.Fatalf("status = %+v, want 2 wanted, 0 queued, 3 games", st)
		}
	})

	t.Run("wrong key", func(t *testing.T) {
		const wrong = "not-the-key-9876543210"
		bad := client(t, srv.URL(), wrong)
		for name, call := range map[string]func() error{
			"status":  func() error { _, err := bad.Status(ctx); return err },
			"wanted":  func() error { _, err := bad.Wanted(ctx, "", 5); return err },
			"request": func() error { _, err := bad.RequestGame(ctx, "Zelda", "nes"); return err },
		} {
			err := call()
			if !errors.Is(err, romarr.ErrUnauthorized) || !strings.Contains(err.Error(), "cabinet.romarr.api_key") {
				t.Errorf("%s: error = %v, want ErrUnauthorized naming cabinet.romarr.api_key", name, err)
				continue
			}
			if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), srv.APIKey()) {
				t.Errorf("%s: error carries a key: %v", name, err)
			}
		}
		if w, _ := c.Wanted(ctx, "nes", 5); len(w) != 0 {
			t.Fatalf("a refused request reached the Wanted list: %+v", w)
		}
	})

	if out := srv.Outgoing(); len(out) > 0 {
		t.Errorf("ROMarr reached off the machine: %v", out)
	}
}

// TestRealROMarrWithoutLibrary: a ROMarr with no library says so, as ErrNoLibrary.
func TestRealROMarrWithoutLibrary(t *testing.T) {
	t.Parallel()
	srv := realromarr.Start(t, realromarr.Options{})
	c := client(t, srv.URL(), srv.APIKey())
	var err error
	cabinettest.Await(t, "ROMarr to be done loading", nil, func() (bool, string) {
		_, err = c.Search(context.Background(), "mario", 5)
		return !errors.Is(err, romarr.ErrLibraryLoading), "still loading"
	})
	if !errors.Is(err, romarr.ErrNoLibrary) {
		t.Fatalf("Search() error = %v, want ErrNoLibrary", err)
	}
}
