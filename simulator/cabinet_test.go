package simulator

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestGameLifecycle launches a libretro game through the fake ES's HTTP
// API and ends it with RetroArch's QUIT, as a cabinet would, with configgen
// scripts run around it.
func TestGameLifecycle(t *testing.T) {
	c, err := Start(Options{LaunchDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A configgen user script that records its argv.
	rec := c.Path("/userdata/configgen.log")
	script := c.Path("/userdata/system/scripts/rec.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho \"$@\" >> '"+rec+"'\n"), 0o755)

	ctx := context.Background()
	esc, err := es.New(es.Config{URL: c.ESURL(), PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	games, err := esc.Games(ctx, "nes")
	if err != nil || len(games) == 0 {
		t.Fatalf("games: %v %d", err, len(games))
	}
	g := games[0]
	if _, err := esc.LaunchGame(ctx, "nes", g.ID); err != nil {
		t.Fatalf("launch: %v", err)
	}
	ra := retroarch.New(c.RetroArchAddr())
	var st retroarch.Status
	cabinettest.Await(t, "RetroArch up", nil, func() bool { st, err = ra.Status(ctx); return err == nil })
	if st.State != retroarch.StatePlaying || st.System != "nes" {
		t.Errorf("status = %+v", st)
	}
	if err := ra.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "game end", nil, func() bool { r, err := esc.RunningGame(ctx); return err == nil && r == nil })
	if _, err := ra.Status(ctx); err == nil {
		t.Error("RetroArch still answers after the game ended")
	}
	cabinettest.Await(t, "configgen gameStop", nil, func() bool { b, _ := os.ReadFile(rec); return strings.Count(string(b), "\n") == 2 })
	b, _ := os.ReadFile(rec)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.HasPrefix(lines[0], "gameStart nes libretro nestopia "+g.Path) || !strings.HasPrefix(lines[1], "gameStop nes") {
		t.Errorf("configgen argv = %q", lines)
	}
}
