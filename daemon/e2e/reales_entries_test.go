package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// TestRealESHouseholdEntries: Cabinet's entries installed in the real ES as
// the installer renders them (es_systems_cabinet.cfg beside ES's own, the
// entries and their game list), picked up by GET /reloadgames. With no play
// allowed today (minutes.daily=0), choosing "Ask for 15 more minutes" runs
// `cabinet entry` from ES's <command>: the answer reaches ES's
// notifications and Home Assistant hears time_requested; the entry is never
// ended (no /emukill), never a session (playing stays OFF) and never
// warned about. "How much time is left?" says why nothing can be played.
func TestRealESHouseholdEntries(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation with Cabinet's entries")
	h := newHouseholdES(t, "cabinet.household.enabled=1", "cabinet.household.minutes.daily=0")
	bin, err := filepath.Abs(cabinetBin)
	if err != nil {
		t.Fatal(err)
	}
	l := packaging.DefaultLayout()
	l.Binary, l.ESScripts, l.Entries = bin, h.es.Scripts, filepath.Join(h.es.Home, "cabinet-entries")
	for _, s := range l.EntryFiles() {
		if err := os.MkdirAll(filepath.Dir(s.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Path, []byte(s.Content), os.FileMode(s.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	esGet(t, "/reloadgames")
	cabinettest.Await(t, "ES listing the Cabinet system", nil, func() (bool, string) {
		var systems []struct {
			Name       string `json:"name"`
			TotalGames int    `json:"totalGames"`
		}
		body := esGet(t, "/systems")
		if err := json.Unmarshal([]byte(body), &systems); err != nil {
			return false, err.Error()
		}
		for _, s := range systems {
			if s.Name == packaging.EntrySystem {
				return s.TotalGames == len(packaging.Entries()), fmt.Sprintf("%d entries", s.TotalGames)
			}
		}
		return false, body
	})

	from := h.obs.Mark()
	chosen := time.Now()
	h.es.Launch(filepath.Join(l.Entries, packaging.EntryAskTime+packaging.EntryExtension))
	h.notified("the request's answer on screen", "Asked a parent for 15 more minutes.")
	t.Logf("entry chosen → its answer at ES's /notify: %v", h.tap.firstAt("/notify").Sub(chosen).Round(time.Millisecond))
	ev := h.obs.AwaitMsg(from, h.topic("limit"), "")
	var p struct {
		Type    string `json:"event_type"`
		Minutes int    `json:"minutes"`
	}
	if err := json.Unmarshal([]byte(ev.Payload), &p); err != nil || p.Type != "time_requested" || p.Minutes != 15 {
		t.Errorf("limit event %s (%v), want time_requested for 15 minutes", ev.Payload, err)
	}
	// ES's game-start and game-end reached the daemon, which took neither for a game.
	for _, ev := range []string{"game-start", "game-end"} {
		cabinettest.Await(t, ev+" recorded", nil, func() (bool, string) {
			n := h.hookRuns(ev, "es")
			return n == 1, fmt.Sprintf("recorded %d time(s)", n)
		})
	}
	h.es.Launch(filepath.Join(l.Entries, packaging.EntryTimeLeft+packaging.EntryExtension))
	h.notified("what is left", "No games today.")
	for _, m := range h.obs.Since(from) {
		if m.Topic == h.topic("playing") && m.Payload == "ON" || m.Topic == h.topic("limit") && !strings.Contains(m.Payload, "time_requested") {
			t.Errorf("an entry was taken for a game: %s %s", m.Topic, m.Payload)
		}
	}
	if strings.Contains(h.tap.String(), "GET /emukill") {
		t.Errorf("an entry was ended:\n%s", h.tap.String())
	}
}

// esGet is a GET to this test's ES, whose body it returns.
func esGet(t *testing.T, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), esWait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, reales.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return string(b)
}
