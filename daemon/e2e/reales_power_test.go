package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// The power runner against Batocera's real EmulationStation: ES reboots
// and powers off through its own routes, firing its quit events and then
// running `shutdown`, which the recording stubs first in ES's PATH
// (simulator/reales) take instead of the machine. reales' Stop fails a test
// whose ES ran a stub; powerStubs takes that report over, so each test
// checks the stubs' argv itself.

// powerStubs is the test's testing.TB for reales: the report of the stubs
// that ran is kept (these tests make ES run them on purpose) instead of
// failing the test; every other error goes to the test.
type powerStubs struct {
	testing.TB
	reports []string
}

func (p *powerStubs) Errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if strings.Contains(msg, "the stubs in its PATH recorded it") {
		p.reports = append(p.reports, msg)
		return
	}
	p.TB.Helper()
	p.TB.Errorf("%s", msg)
}

// powerES is one real ES for a power test, with a root script and
// per-event scripts for quit, reboot and shutdown recording every event.
type powerES struct {
	t      *testing.T
	stubs  *powerStubs
	real   *reales.ES
	c      *es.Client
	events string // one line per script run: "<script>|<args>"
	// gameEnds counts the games the runner's /emukill ended.
	gameEnds int
}

func startPowerES(t *testing.T) *powerES {
	t.Helper()
	cabinettest.Long(t, "a real EmulationStation asked to reboot or shut down")
	reales.Require(t)
	stubs := &powerStubs{TB: t}
	dir := cabinettest.TempDir(t, "reales-power")
	real := reales.New(stubs, reales.Options{Dir: dir})
	p := &powerES{t: t, stubs: stubs, real: real, events: filepath.Join(dir, "events.log")}
	record := fmt.Sprintf("#!/bin/sh\nprintf '%%s|%%s\\n' \"$0\" \"$*\" >>'%s'\n", p.events)
	for _, s := range []string{"power.sh", "quit/power", "reboot/power", "shutdown/power"} {
		path := filepath.Join(real.Scripts, s)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(record), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// ES touches /tmp/reboot.please or /tmp/shutdown.please on its way
	// out (Platform.cpp processQuitMode): remove what this test made.
	for _, f := range []string{"/tmp/reboot.please", "/tmp/shutdown.please"} {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			t.Cleanup(func() { os.Remove(f) })
		}
	}
	real.Start()
	c, err := es.New(es.Config{URL: reales.URL})
	if err != nil {
		t.Fatal(err)
	}
	p.c = c
	return p
}

// runner is the power runner over this ES. With endGame, its /emukill also
// ends the game the way batocera-es-swissknife --emukill does on a cabinet
// (here the swissknife is a stub, so a plain /emukill leaves the game
// running), and returns once ES has fired game-end at its scripts.
func (p *powerES) runner(endGame bool, quitWait time.Duration) *power.Runner {
	e := swissknifeES{Client: p.c}
	if endGame {
		e.p = p
	}
	return &power.Runner{ES: e, Routes: es.NewPowerClient(p.c), QuitWait: quitWait}
}

type swissknifeES struct {
	*es.Client
	p *powerES // nil: /emukill only
}

func (s swissknifeES) EmuKill(ctx context.Context) error {
	if err := s.Client.EmuKill(ctx); err != nil {
		return err
	}
	if s.p != nil {
		s.p.real.EndGame()
		s.p.awaitGameEnd()
	}
	return nil
}

// awaitGameEnd waits until ES has run its root script for game-end, that
// is until it has listed its scripts folder again after the game. When a
// game ends ES empties its file cache, clears /runningGame and fires
// game-end on its UI thread (es-app FileData.cpp:740-755). Listing a
// folder marks "<folder>/*" in the cache before the entries are added
// (es-core utils/FileSystemUtil.cpp:479, then :575), and until they are,
// the cache answers "does not exist" for any entry of that folder
// (:277-281, :319-320). A GET /restart handled meanwhile on the API thread
// (Platform.cpp quitES) finds no scripts/quit folder (Scripting.cpp:169,
// getDirContent's isDirectory at FileSystemUtil.cpp:361) and runs none of
// its scripts: the runner, polling /runningGame, sends /restart right in
// that window. Cabinet does not depend on those scripts (its quit wrapper
// is the root script: packaging/esscripts.go rootQuit), so the reboot test
// lets ES settle to check everything ES fires on a reboot.
func (p *powerES) awaitGameEnd() {
	p.t.Helper()
	p.gameEnds++
	cabinettest.Await(p.t, "ES to fire game-end at its scripts", nil, func() (bool, string) {
		got := 0
		for _, l := range p.eventLines() {
			if l == "power.sh|game-end" {
				got++
			}
		}
		return got >= p.gameEnds, fmt.Sprintf("%d game-end runs of power.sh, want %d: %q", got, p.gameEnds, p.eventLines())
	})
}

// eventLines are the script runs recorded so far, "<script>|<args>" with
// the script's path relative to ES's scripts folder.
func (p *powerES) eventLines() []string {
	b, _ := os.ReadFile(p.events)
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, strings.TrimPrefix(l, p.real.Scripts+"/"))
		}
	}
	return out
}

// quitEvents are the recorded runs for quit, reboot and shutdown.
func (p *powerES) quitEvents() []string {
	var out []string
	for _, l := range p.eventLines() {
		script, args, _ := strings.Cut(l, "|")
		first, _, _ := strings.Cut(args, " ")
		if script != "power.sh" || first == "quit" || first == "reboot" || first == "shutdown" {
			out = append(out, l)
		}
	}
	return out
}

// waitExit waits until ES has exited.
func (p *powerES) waitExit(after string) {
	p.t.Helper()
	cabinettest.Await(p.t, "EmulationStation to exit after "+after, nil, func() (bool, string) {
		return !p.real.Running(), p.real.LogTail()
	})

}

// stop stops ES and checks that the stubs that ran are exactly want (and
// that reales reported them).
func (p *powerES) stop(want ...string) {
	p.t.Helper()
	got := p.real.StubCalls()
	p.t.Logf("ES's scripts got %q; the stubs in its PATH recorded %q", p.quitEvents(), got)
	p.real.Stop()
	if !slices.Equal(got, want) {
		p.t.Errorf("the stubs in ES's PATH recorded %q, want %q\n%s", got, want, p.real.LogTail())
	}
	if reported := len(p.stubs.reports) > 0; reported != (len(want) > 0) {
		p.t.Errorf("reales reported stub runs %v, want %v: %q", reported, len(want) > 0, p.stubs.reports)
	}
}

// TestRealESPowerReboot: while a game runs, a reboot is refused when the
// game does not quit (nothing but /emukill sent, ES still up); once /emukill
// ends the game, the runner sends GET /restart and ES does what its RESTART
// SYSTEM entry does: quit reboot and reboot reach its scripts, it exits
// and runs `shutdown -r now` (the stub's argv).
func TestRealESPowerReboot(t *testing.T) {
	p := startPowerES(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rom := p.real.ROM(reales.SystemNES, reales.ROMPlain)
	p.real.Launch(rom)
	p.real.WaitStarted()
	cabinettest.Await(t, "ES's /runningGame to show the game", nil, func() (bool, string) {
		g, err := p.c.RunningGame(ctx)
		return err == nil && g != nil, fmt.Sprint(g, err)
	})

	res, err := p.runner(false, 2*time.Second).Do(ctx, power.Reboot)
	if !errors.Is(err, power.ErrGameStillRunning) || !strings.Contains(err.Error(), "Tetris (nes)") {
		t.Fatalf("reboot while the game stays = %v, want ErrGameStillRunning naming Tetris (nes)", err)
	}
	if got := strings.Join(res.Sent, ","); got != "GET /emukill" {
		t.Errorf("sent %s, want only GET /emukill", got)
	}
	if !p.real.Running() || len(p.quitEvents()) != 0 {
		t.Fatalf("ES running %v, quit events %q: nothing may have quit", p.real.Running(), p.quitEvents())
	}

	plan, err := p.runner(true, esWait).Plan(ctx, power.Reboot)
	if err != nil || !strings.HasPrefix(plan, "Would quit Tetris (nes) first") {
		t.Errorf("Plan = %q, %v", plan, err)
	}
	res, err = p.runner(true, esWait).Do(ctx, power.Reboot)
	if err != nil {
		t.Fatalf("reboot: %v\n%s", err, p.real.LogTail())
	}
	if got := strings.Join(res.Sent, ","); got != "GET /emukill,GET /restart" {
		t.Errorf("sent %s, want GET /emukill, GET /restart", got)
	}
	p.waitExit("GET /restart")
	// ES waits for its root scripts on quit, and only for them: the line is
	// there once ES has exited (Scripting.cpp:142 and :205, Platform.cpp:165-167;
	// quitES pushes SDL_QUIT only after, :223-236). The rest run detached
	// (Platform.cpp:170-178), so they are awaited.
	if got := p.quitEvents(); !slices.Contains(got, "power.sh|quit reboot") {
		t.Errorf("ES exited before its root script got quit reboot: %q", got)
	}
	want := []string{"power.sh|quit reboot", "quit/power|reboot", "power.sh|reboot", "reboot/power|"}
	cabinettest.Await(t, "ES's reboot events at its scripts", nil, func() (bool, string) {
		got := p.quitEvents()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false, fmt.Sprintf("got %q, want %q", got, want)
			}
		}
		return true, ""
	})

	p.stop("batocera-es-swissknife --emukill", "batocera-es-swissknife --emukill", "shutdown -r now")
}

// TestRealESPowerShutdown: GET /shutdown is Batocera's own patch
// (004-http-api-shutdown). Against a build with it, ES fires quit shutdown
// and shutdown and runs `shutdown -P -h now`; the peer in
// ../shared/peers/real-es is upstream's source without the patch, where
// the route does not exist (404): the runner says the action is not
// offered, and nothing quits or runs.
func TestRealESPowerShutdown(t *testing.T) {
	p := startPowerES(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	plan, err := p.runner(true, esWait).Plan(ctx, power.Shutdown)
	if err != nil || plan != "Would shut down the cabinet, as the Quit menu of EmulationStation does." {
		t.Errorf("Plan = %q, %v", plan, err)
	}
	res, err := p.runner(true, esWait).Do(ctx, power.Shutdown)
	if got := strings.Join(res.Sent, ","); got != "GET /shutdown" {
		t.Errorf("sent %s, want GET /shutdown", got)
	}
	switch {
	case errors.Is(err, power.ErrNotOffered):
		t.Logf("this EmulationStation has no GET /shutdown (built without Batocera's patch 004-http-api-shutdown): %v", err)
		if !p.real.Running() || len(p.quitEvents()) != 0 {
			t.Errorf("ES running %v, quit events %q: nothing may have quit", p.real.Running(), p.quitEvents())
		}
		if c, err := p.c.Caps(ctx); err != nil {
			t.Errorf("ES stopped answering after GET /shutdown: %v (%+v)", err, c)
		}
		p.stop()
	case err != nil:
		t.Fatalf("shutdown: %v\n%s", err, p.real.LogTail())
	default: // a build with Batocera's patch
		p.waitExit("GET /shutdown")
		want := []string{"power.sh|quit shutdown", "quit/power|shutdown", "power.sh|shutdown", "shutdown/power|"}
		cabinettest.Await(t, "ES's shutdown events at its scripts", nil, func() (bool, string) {
			got := p.quitEvents()
			for _, w := range want {
				if !slices.Contains(got, w) {
					return false, fmt.Sprintf("got %q, want %q", got, want)
				}
			}
			return true, ""
		})

		p.stop("shutdown -P -h now")
	}
}

// TestRealESPowerRestartES: GET /quit is QUIT EMULATIONSTATION (Batocera's
// emulationstation-standalone starts ES again): ES fires a plain quit at
// its scripts on the way out and runs neither shutdown nor reboot.
func TestRealESPowerRestartES(t *testing.T) {
	p := startPowerES(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := p.runner(true, esWait).Do(ctx, power.RestartES)
	if err != nil {
		t.Fatalf("restart ES: %v\n%s", err, p.real.LogTail())
	}
	if got := strings.Join(res.Sent, ","); got != "GET /quit" {
		t.Errorf("sent %s, want GET /quit", got)
	}
	p.waitExit("GET /quit")
	cabinettest.Await(t, "ES's quit event at its scripts", nil, func() (bool, string) {
		got := p.quitEvents()
		return slices.Contains(got, "power.sh|quit") && slices.Contains(got, "quit/power|"), fmt.Sprintf("got %q", got)
	})

	for _, l := range p.quitEvents() {
		if strings.Contains(l, "reboot") || strings.Contains(l, "shutdown") {
			t.Errorf("a plain quit fired %q", l)
		}
	}
	p.stop()
}
