package tools

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	store "github.com/batocera-cabinet/cabinet/hook/store"
)

// requestROMarr answers POST /api/request as ROMarr 0.8 does, with the body the test set; a
// nil body holds the request until the client gives up (ROMarr searching its indexers).
type requestROMarr struct {
	mu    sync.Mutex
	body  string
	asked []string
}

func (f *requestROMarr) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.asked = append(f.asked, r.Method+" "+r.URL.Path+" "+string(b))
	body := f.body
	f.mu.Unlock()
	if body == "" {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, body)
}

func (f *requestROMarr) set(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.body = body
}

func (f *requestROMarr) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

// anInstaller is an Installer the request tools only check for.
type anInstaller struct{}

func (anInstaller) Plan(context.Context, install.Request) (install.Result, error) {
	return install.Result{}, nil
}
func (anInstaller) Install(context.Context, install.Request, func(install.Progress)) (install.Result, error) {
	return install.Result{}, nil
}
func (anInstaller) Uninstall(context.Context, install.Game, string, string) (install.UninstallResult, error) {
	return install.UninstallResult{}, nil
}

type aDaemon struct{}

func (aDaemon) DaemonHealth(context.Context) (DaemonHealth, error) { return DaemonHealth{}, nil }

type requestRig struct {
	*rig
	romarr *requestROMarr
	store  requests.Kept
}

const grabbed = `{"ok": true, "release": "Streets of Rage 2 (USA)", "seeders": 12}`

func newRequestRig(t *testing.T, opts Options, mod func(*Deps)) *requestRig {
	t.Helper()
	fr := &requestROMarr{body: grabbed}
	srv := httptest.NewServer(fr)
	t.Cleanup(srv.Close)
	rc, err := romarr.New(romarr.Config{URL: srv.URL, APIKey: "k-0123456789", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := newRig(t, rigConfig{opts: opts, deps: func(d *Deps) {
		d.Library = Library{ROMarr: rc, Platforms: platforms.Default(), AllowWrites: true, Installer: anInstaller{}}
		d.Requests, d.Daemon = requests.Kept{DB: st}, aDaemon{}
		if mod != nil {
			mod(d)
		}
	}})
	return &requestRig{rig: r, romarr: fr, store: requests.Kept{DB: st}}
}

func (r *requestRig) request(args map[string]any) LibraryRequestResult {
	r.t.Helper()
	var out LibraryRequestResult
	r.ok("library_request", args, &out)
	return out
}

func (r *requestRig) listed() libraryRequestsResult {
	r.t.Helper()
	var out libraryRequestsResult
	r.ok("library_requests", nil, &out)
	return out
}

func TestLibraryRequestRecordsAndLists(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	a := r.request(map[string]any{"game": "Streets of Rage 2", "platform": "megadrive", "install": true})
	wantSent := `POST /api/request game="Streets of Rage 2" platform="genesis-slash-megadrive"`
	if a.Outcome != outcomeDone || a.RequestID == nil || a.State == nil || *a.State != requests.StateDownloading ||
		!strings.Contains(a.Detail, "Streets of Rage 2 (USA)") || !strings.Contains(a.Detail, "then installs it") ||
		len(a.Sent) != 1 || a.Sent[0] != wantSent {
		t.Fatalf("library_request: %+v", a)
	}
	if w := strings.Join(a.Warnings, " "); !strings.Contains(w, "ROMarr's platform genesis-slash-megadrive") || !strings.Contains(w, "cabinet.romm.url") {
		t.Errorf("warnings %q: want the slug and the missing RomM said", a.Warnings)
	}
	if got := r.romarr.calls(); len(got) != 1 || !strings.Contains(got[0], `"platform":"genesis-slash-megadrive"`) {
		t.Fatalf("ROMarr was asked %q", got)
	}
	all, _ := r.store.Requests()
	if len(all) != 1 {
		t.Fatalf("recorded %+v", all)
	}
	rec := all[0]
	if rec.ID != *a.RequestID || rec.Game != "Streets of Rage 2" || rec.Platform != "genesis-slash-megadrive" || rec.System != "megadrive" ||
		!rec.Install || rec.Release != "Streets of Rage 2 (USA)" || !rec.CreatedAt.Equal(r.clock.Now()) || !rec.NextCheck.Equal(r.clock.Now()) {
		t.Fatalf("record %+v", rec)
	}
	l := r.listed()
	if l.Open != 1 || len(l.Requests) != 1 {
		t.Fatalf("library_requests: %+v", l)
	}
	it := l.Requests[0]
	if it.RequestID != rec.ID || it.State != requests.StateDownloading || !it.Install || it.ROMID != nil || !it.Followed ||
		it.Created != "2025-05-01T12:00:00Z" || !strings.Contains(it.Detail, "download client") {
		t.Fatalf("listed %+v", it)
	}
}

func TestLibraryRequestNoReleaseIsSearching(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	r.romarr.set(`{"ok": false, "error": "no usable release among 0 result(s)"}`)
	a := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	if a.Outcome != outcomeDone || *a.State != requests.StateSearching || !strings.Contains(a.Detail, "no usable release among 0 result(s)") {
		t.Fatalf("library_request: %+v", a)
	}
	r.romarr.set(`{"ok": false, "error": "unknown platform: 'gamecom'"}`)
	msg := r.refused("library_request", map[string]any{"game": "Chrono Trigger", "platform": "gamecom"})
	if !strings.Contains(msg, "does not know the platform") || !strings.Contains(msg, "Nothing was recorded") {
		t.Fatalf("unknown platform: %s", msg)
	}
	if all, _ := r.store.Requests(); len(all) != 1 {
		t.Fatalf("recorded %d requests, want only the first", len(all))
	}
}

func TestLibraryRequestAgain(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	first := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	again := r.request(map[string]any{"game": "chrono  TRIGGER", "platform": "snes"})
	if again.Outcome != outcomeUnchanged || *again.RequestID != *first.RequestID || len(again.Sent) != 0 {
		t.Fatalf("asked again: %+v", again)
	}
	withInstall := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes", "install": true})
	if withInstall.Outcome != outcomeDone || *withInstall.RequestID != *first.RequestID || !strings.Contains(withInstall.Detail, "installs it") {
		t.Fatalf("asked again with install: %+v", withInstall)
	}
	if got := r.romarr.calls(); len(got) != 1 {
		t.Fatalf("ROMarr asked %d times, want once", len(got))
	}
	all, _ := r.store.Requests()
	if len(all) != 1 || !all[0].Install {
		t.Fatalf("records %+v, want one, to install", all)
	}
}

func TestLibraryRequestInstallNeedsAllowInstall(t *testing.T) {
	r := newRequestRig(t, Options{}, func(d *Deps) { d.Library.Installer = nil })
	msg := r.refused("library_request", map[string]any{"game": "Chrono Trigger", "platform": "snes", "install": true})
	if !strings.Contains(msg, "cabinet.library.allow_install") {
		t.Fatalf("refusal %q does not name cabinet.library.allow_install", msg)
	}
	if len(r.romarr.calls()) != 0 {
		t.Fatal("ROMarr was asked")
	}
	if a := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"}); a.Outcome != outcomeDone {
		t.Fatalf("without install: %+v", a)
	}
}

func TestLibraryRequestDryRun(t *testing.T) {
	r := newRequestRig(t, Options{DryRun: true}, nil)
	a := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes", "install": true})
	if a.Outcome != outcomeDryRun || a.RequestID != nil || a.State != nil || len(a.Sent) != 1 || !strings.Contains(a.Detail, "Would ask ROMarr") {
		t.Fatalf("dry run: %+v", a)
	}
	if len(r.romarr.calls()) != 0 {
		t.Fatal("a dry run asked ROMarr")
	}
	if all, _ := r.store.Requests(); len(all) != 0 {
		t.Fatalf("a dry run recorded %+v", all)
	}
}

func TestLibraryRequestROMarrTimeoutIsPending(t *testing.T) {
	r := newRequestRig(t, Options{}, func(d *Deps) { d.Daemon = nil })
	r.romarr.set("")
	a := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	if a.Outcome != outcomeDone || *a.State != requests.StatePending {
		t.Fatalf("timed out: %+v", a)
	}
	if w := strings.Join(a.Warnings, " "); !strings.Contains(w, "did not answer in time") || !strings.Contains(w, "cabinet serve is not running") {
		t.Errorf("warnings %q", a.Warnings)
	}
}

func TestLibraryRequestBounded(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	now := r.clock.Now()
	for i := range requests.MaxOpen {
		rec := requests.Request{ID: requests.NewID(now.Add(time.Duration(i) * time.Millisecond)), Game: "Game", Platform: "snes",
			State: requests.StateSearching, CreatedAt: now, UpdatedAt: now, NextCheck: now}
		rec.Game += rec.ID
		if err := r.store.PutRequest(rec); err != nil {
			t.Fatal(err)
		}
	}
	msg := r.refused("library_request", map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	if !strings.Contains(msg, "200 library requests already") {
		t.Fatalf("refusal %q", msg)
	}
	if len(r.romarr.calls()) != 0 {
		t.Fatal("ROMarr was asked beyond the bound")
	}
	var l libraryRequestsResult
	r.ok("library_requests", map[string]any{"limit": 5}, &l)
	if l.Open != requests.MaxOpen || len(l.Requests) != 5 {
		t.Fatalf("limited list: %d open, %d listed", l.Open, len(l.Requests))
	}
}

func TestLibraryRequestsListsClosed(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	now := r.clock.Now()
	done := requests.Request{ID: "20250501T110000.000Z-done", Game: "Cosmic Crusade", Platform: "snes", State: requests.StateInstalled,
		Detail: "Installed: /userdata/roms/snes/x.sfc in snes.\u202e", ROMID: 3, CreatedAt: now.Add(-time.Hour), UpdatedAt: now}
	if err := r.store.PutRequest(done); err != nil {
		t.Fatal(err)
	}
	r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	l := r.listed()
	if l.Open != 1 || len(l.Requests) != 2 || l.Requests[0].Game != "Chrono Trigger" {
		t.Fatalf("list %+v", l)
	}
	c := l.Requests[1]
	if c.State != requests.StateInstalled || c.Followed || c.ROMID == nil || *c.ROMID != 3 || strings.ContainsRune(c.Detail, '\u202e') {
		t.Fatalf("closed one: %+v", c)
	}
	var open libraryRequestsResult
	r.ok("library_requests", map[string]any{"open_only": true}, &open)
	if len(open.Requests) != 1 || open.Requests[0].Game != "Chrono Trigger" {
		t.Fatalf("open only: %+v", open)
	}
	b, _ := json.Marshal(r.call("library_requests", nil).Content)
	if !strings.Contains(string(b), "2 request(s), 1 followed") {
		t.Errorf("text %s", b)
	}
}

func TestLibraryRequestToolsRegistration(t *testing.T) {
	names := func(opts Options, mod func(*Deps)) []string {
		return newRequestRig(t, opts, mod).srv.ToolNames()
	}
	for _, tt := range []struct {
		name      string
		opts      Options
		mod       func(*Deps)
		read, act bool
	}{
		{"writes allowed", Options{}, nil, true, true},
		{"no allow_writes", Options{}, func(d *Deps) { d.Library.AllowWrites = false }, true, false},
		{"read-only", Options{ReadOnly: true}, nil, true, false},
		{"no store", Options{}, func(d *Deps) { d.Requests = nil }, false, false},
		{"no ROMarr", Options{}, func(d *Deps) { d.Library.ROMarr = nil }, false, false},
	} {
		got := names(tt.opts, tt.mod)
		if slices.Contains(got, "library_requests") != tt.read || slices.Contains(got, "library_request") != tt.act {
			t.Errorf("%s: tools %v; want library_requests %v, library_request %v", tt.name, got, tt.read, tt.act)
		}
	}
	tl, ok := newRequestRig(t, Options{}, nil).srv.Tool("library_request")
	a := tl.Annotations
	if !ok || *a.ReadOnlyHint || *a.DestructiveHint || *a.IdempotentHint || !*a.OpenWorldHint {
		t.Errorf("library_request annotations %+v", a)
	}
}

func TestLibraryRequestArrivedAlready(t *testing.T) {
	r := newRequestRig(t, Options{}, nil)
	now := r.clock.Now()
	old := requests.Request{ID: "20250401T120000.000Z-old", Game: "Chrono Trigger", Platform: "snes", System: "snes", State: requests.StateInRomM,
		ROMID: 7, CreatedAt: now.Add(-30 * 24 * time.Hour), UpdatedAt: now.Add(-29 * 24 * time.Hour)}
	if err := r.store.PutRequest(old); err != nil {
		t.Fatal(err)
	}
	a := r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes"})
	if a.Outcome != outcomeUnchanged || *a.RequestID != old.ID || !strings.Contains(a.Detail, "library_install rom_id=7") {
		t.Fatalf("asked for a game in RomM: %+v", a)
	}
	a = r.request(map[string]any{"game": "Chrono Trigger", "platform": "snes", "install": true})
	if a.Outcome != outcomeDone || *a.RequestID == old.ID || *a.State != requests.StateInRomM || len(a.Sent) != 0 {
		t.Fatalf("asked to install a game in RomM: %+v", a)
	}
	if len(r.romarr.calls()) != 0 {
		t.Fatal("ROMarr was asked for a game RomM has")
	}
	all, _ := r.store.Requests()
	if len(all) != 2 || all[0].ID != *a.RequestID || !all[0].Install || all[0].ROMID != 7 || !all[0].Open() || !all[0].CreatedAt.Equal(now) {
		t.Fatalf("records %+v: want a new open request to install rom 7", all)
	}
}
