package daemon

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

// wantedROMarr is a ROMarr that has nothing in its queue or history and one game on its wanted
// list, in ROMarr 0.8's envelopes.
func wantedROMarr(t *testing.T, game, platform string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		items := []map[string]any{}
		if r.URL.Path == "/api/v1/wanted/missing" {
			items = append(items, map[string]any{"game": game, "platform": platform, "added": "2026-11-24T20:00:00+00:00",
				"attempts": 2, "last_error": "no usable release among 0 result(s)"})
		}
		json.NewEncoder(w).Encode(map[string]any{"items": items})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestDaemonFollowsRequests: the daemon follows the requests in its store at start and on its
// clock. One RomM has already is installed (from the fake RomM into the simulator's tree) and
// the screen says it is ready; one asked for a week ago expires (and is closed: said once);
// doctor's count follows.
func TestDaemonFollowsRequests(t *testing.T) {
	romarrSrv := wantedROMarr(t, "Chrono Trigger", "snes")
	var installID, oldID string
	r := newRigWith(t, simulator.Options{RomM: true}, nil, func(r *rig) {
		r.cfg.Tools.ROMarr.URL = romarrSrv.URL
		r.cfg.Tools.RomM.URL, r.cfg.Tools.RomM.Token = r.cab.RomMURL(), r.cab.RomM.Token()
		r.cfg.Tools.AllowInstall, r.cfg.Tools.InstallLock = true, r.cfg.Layout.InstallLock()
		r.cfg.Tools.Root = r.cab.Root
		st, err := store.Open(r.cfg.Layout.Store(), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		now := r.clock.Now()
		installID, oldID = requests.NewID(now), requests.NewID(now.Add(-7*24*time.Hour+time.Minute))
		for _, q := range []requests.Request{
			{ID: installID, Game: "Cosmic Crusade", Platform: "snes", System: "snes", Install: true, State: requests.StateDownloading,
				CreatedAt: now, UpdatedAt: now, NextCheck: now},
			{ID: oldID, Game: "Chrono Trigger", Platform: "snes", System: "snes", State: requests.StateSearching,
				CreatedAt: now.Add(-7*24*time.Hour + time.Minute), UpdatedAt: now, NextCheck: now},
		} {
			if err := (requests.Kept{DB: st}).PutRequest(q); err != nil {
				t.Fatal(err)
			}
		}
	})
	r.logged("library request moved", map[string]string{"request": installID, "to": requests.StateInstalled})
	var path string
	for _, q := range mustRequests(t, r) {
		switch q.ID {
		case installID:
			if q.State != requests.StateInstalled || q.ROMID == 0 || !strings.Contains(q.Detail, "/userdata/roms/snes/") {
				t.Fatalf("installed request %+v", q)
			}
			path = q.Detail[strings.Index(q.Detail, "/userdata/"):strings.Index(q.Detail, " in snes")]
		case oldID:
			if q.State != requests.StateSearching || !strings.Contains(q.Detail, "2 search(es) so far") {
				t.Fatalf("searching request %+v", q)
			}
		}
	}
	if _, err := os.Stat(r.cab.Path(path)); err != nil {
		t.Fatalf("the installed game is not in the tree: %v", err)
	}
	notified := false
	for _, c := range r.cab.ES.Calls() {
		notified = notified || (c.Route == fakees.RouteNotify && strings.Contains(c.Body, "Cosmic Crusade is ready to play"))
	}
	if !notified {
		t.Fatalf("ES was not told Cosmic Crusade is ready to play: %+v", r.cab.ES.Calls())
	}
	if n := r.d.PendingRequests(); n != 1 {
		t.Fatalf("PendingRequests() = %d, want 1 (Chrono Trigger)", n)
	}

	r.clock.Advance(requests.Interval)
	r.logged("library request moved", map[string]string{"request": oldID, "to": requests.StateExpired})
	if n := r.d.PendingRequests(); n != 0 {
		t.Fatalf("PendingRequests() = %d after the expiry, want 0", n)
	}
	for _, q := range mustRequests(t, r) {
		if q.Open() || !q.NextCheck.IsZero() {
			t.Errorf("request %s (%s) is still due a check: it would be said again", q.ID, q.State)
		}
	}
}

func mustRequests(t *testing.T, r *rig) []requests.Request {
	t.Helper()
	all, err := requests.Kept{DB: r.d.Store()}.Requests()
	if err != nil {
		t.Fatal(err)
	}
	return all
}

func TestStoreRequests(t *testing.T) {
	s := StoreRequests{Path: filepath.Join(t.TempDir(), "cabinet.db")}
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	q := requests.Request{ID: requests.NewID(now), Game: "Chrono Trigger", Platform: "snes", State: requests.StatePending,
		CreatedAt: now, UpdatedAt: now, NextCheck: now}
	if err := s.PutRequest(q); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateRequest(q.ID, func(r *requests.Request) error { r.Install = true; return nil }); err != nil {
		t.Fatal(err)
	}
	all, err := s.Requests()
	if err != nil || len(all) != 1 || !all[0].Install || all[0].ID != q.ID {
		t.Fatalf("Requests() = %+v, %v", all, err)
	}
}

func TestWakingRequests(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wake := make(chan struct{}, 1)
	w := wakingRequests{Kept: requests.Kept{DB: st}, wake: wake}
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	q := requests.Request{ID: requests.NewID(now), Game: "Chrono Trigger", Platform: "snes", State: requests.StatePending,
		CreatedAt: now, UpdatedAt: now, NextCheck: now}
	for i := range 2 { // the second put finds the channel full and does not block
		if err := w.PutRequest(q); err != nil {
			t.Fatal(err)
		}
		if i == 0 && len(wake) != 1 {
			t.Fatal("a new request did not wake the follower")
		}
	}
	<-wake
	if err := w.UpdateRequest(q.ID, func(r *requests.Request) error { r.Install = true; return nil }); err != nil || len(wake) != 1 {
		t.Fatalf("a changed request: %v, %d wakes", err, len(wake))
	}
	<-wake
	if err := w.PutRequest(requests.Request{}); err == nil || len(wake) != 0 {
		t.Fatalf("a refused request: %v, %d wakes; want an error and no wake", err, len(wake))
	}
}
