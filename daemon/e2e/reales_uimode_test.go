package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// realService is uimode.Service over the real ES, as Batocera's
// S31emulationstation does it: stop is a SIGTERM and a wait for ES to
// exit, start runs it again. It records each call with the UIMode setting
// the file holds at that moment, so the test sees that ES was down while
// the file changed.
type realService struct {
	es       *reales.ES
	settings string
	mu       sync.Mutex
	calls    []string
}

func (s *realService) record(verb string) {
	set, err := uimode.ReadSettings(s.settings)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf("%s %s %v running=%v", verb, set.Mode, err, s.es.Running()))
}

func (s *realService) Stop(context.Context) error {
	s.record("stop")
	s.es.Terminate()
	return nil
}

func (s *realService) Start(context.Context) error {
	s.record("start")
	s.es.StartAgain()
	return nil
}

func (s *realService) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// esSystem is what ES's GET /systems says of a system that matters here.
type esSystem struct {
	Name         string `json:"name"`
	Visible      string `json:"visible"`
	TotalGames   int    `json:"totalGames"`
	VisibleGames int    `json:"visibleGames"`
}

func realSystems(t *testing.T) map[string]esSystem {
	t.Helper()
	body := esGet(t, "/systems")
	var list []esSystem
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatalf("GET /systems: %v\n%s", err, body)
	}
	out := map[string]esSystem{}
	for _, s := range list {
		out[s.Name] = s
	}
	return out
}

// TestRealESUIMode: the mode written by uimode while ES is stopped is the
// one the real ES starts in. One NES game is marked kidgame; in Kid mode ES
// shows only it, and the SNES system has nothing to show. A change while
// a game runs is refused without touching ES; Full puts everything back.
func TestRealESUIMode(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation restarted in Kid mode")
	reales.Require(t)
	dir := cabinettest.TempDir(t, "reales-uimode")
	real := reales.New(t, reales.Options{Dir: dir})
	gamelist := `<?xml version="1.0"?>
<gameList>
	<game><path>./` + reales.ROMPlain + `</path><name>Tetris</name><kidgame>true</kidgame></game>
</gameList>
`
	if err := os.WriteFile(filepath.Join(real.ROMs, reales.SystemNES, "gamelist.xml"), []byte(gamelist), 0o644); err != nil {
		t.Fatal(err)
	}
	real.Start()
	settings := filepath.Join(real.Home, ".emulationstation", "es_settings.cfg")
	c, err := es.New(es.Config{URL: reales.URL})
	if err != nil {
		t.Fatal(err)
	}
	svc := &realService{es: real, settings: settings}
	a := &uimode.Applier{Settings: settings, Backup: filepath.Join(dir, "backup", "es_settings.cfg"), Service: svc, ES: c, UpWait: time.Minute}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	full := realSystems(t)
	if full["nes"].TotalGames != 3 || full["snes"].Visible != "true" || full["snes"].TotalGames != 1 {
		t.Fatalf("Full: %+v, want nes's 3 games and snes's 1 shown", full)
	}

	began := time.Now()
	st, err := a.Apply(ctx, haentities.UIModeKid)
	if err != nil {
		t.Fatalf("Apply Kid: %v\n%s", err, real.LogTail())
	}
	t.Logf("Kid applied in %v (ES stopped, the file written, ES started and answering)", time.Since(began).Round(time.Millisecond))
	if st.Mode != haentities.UIModeKid || !st.Changed || !st.Restarted || !strings.Contains(st.Text, "passkey entered with the pad") || strings.Contains(st.Text, "aaaba") {
		t.Errorf("Apply Kid = %+v", st)
	}
	// ES was stopped before the file changed and started after it.
	if got, want := strings.Join(svc.Calls(), ", "), "stop Full <nil> running=true, start Kid <nil> running=false"; got != want {
		t.Errorf("the service saw %s, want %s", got, want)
	}
	// What ES shows in Kid mode (es-app FileData: only kidgame; SystemData::isVisible).
	kid := realSystems(t)
	if kid["nes"].TotalGames != 1 || kid["snes"].Visible != "false" || kid["snes"].TotalGames != 0 {
		t.Errorf("Kid: %+v, want nes's one kid game, snes hidden", kid)
	}

	rom := real.ROM(reales.SystemNES, reales.ROMPlain)
	real.Launch(rom)
	real.WaitStarted()
	cabinettest.Await(t, "ES's /runningGame to show the game", nil, func() (bool, string) {
		g, err := c.RunningGame(ctx)
		return err == nil && g != nil, fmt.Sprint(g, err)
	})
	if _, err := a.Apply(ctx, haentities.UIModeFull); !errors.Is(err, uimode.ErrGameRunning) {
		t.Errorf("Apply Full during a game = %v, want ErrGameRunning", err)
	}
	real.EndGame()
	real.WaitEnded()
	cabinettest.Await(t, "ES's /runningGame to clear", nil, func() (bool, string) {
		g, err := c.RunningGame(ctx)
		return err == nil && g == nil, fmt.Sprint(g, err)
	})
	st, err = a.Apply(ctx, haentities.UIModeFull)
	if err != nil {
		t.Fatalf("Apply Full: %v\n%s", err, real.LogTail())
	}
	if st.Mode != haentities.UIModeFull || len(svc.Calls()) != 4 {
		t.Errorf("Apply Full = %+v; the service saw %q (nothing during the game)", st, svc.Calls())
	}
	if back := realSystems(t); back["nes"].TotalGames != 3 || back["snes"].Visible != "true" {
		t.Errorf("Full again: %+v, want every game", back)
	}
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), `"UIMode"`) {
		t.Errorf("Full left UIMode in the file (ES writes no default):\n%s", b)
	}
}
