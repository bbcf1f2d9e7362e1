package haentities

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// Fixed inputs of the golden files.
var (
	zone      = time.FixedZone("CET", 3600)
	goldenNow = time.Date(2026, 1, 2, 21, 15, 0, 0, zone)
)

func goldenSettings() Settings {
	return Settings{ID: "0a1b2c3d", Name: "Arcade Cabinet", Version: "0.3.0", BatoceraVersion: "41 2025/01/15", Model: "x86_64"}
}

func goldenCurrent() Session {
	return Session{
		ID: "20260102T190000.000Z-1c2d3e4f", Game: "Street Fighter II' - Champion Edition", System: "mame",
		SystemName: "Arcade (MAME)", Rom: "/userdata/roms/mame/sf2ce.zip", Emulator: "libretro", Core: "mame",
		Source: "es", Started: time.Date(2026, 1, 2, 20, 0, 0, 0, zone),
		Details: GameDetails{Genre: "Fighting / Versus", Players: "1-2", Developer: "Capcom", Publisher: "Capcom",
			Year: 1992, Region: "World"},
	}
}

func goldenLast() Session {
	s := goldenCurrent()
	s.ID, s.Game, s.System, s.SystemName = "20260102T180500.250Z-8a9b0c1d", "Super Mario Bros. (World)", "nes", "Nintendo Entertainment System"
	s.Rom, s.Source = "/userdata/roms/nes/Super Mario Bros. (World).nes", "configgen"
	s.Emulator, s.Core = "libretro", "fceumm"
	s.Details = GameDetails{Genre: "Platform", Players: "1-2", Developer: "Nintendo R&D4", Publisher: "Nintendo", Year: 1985}
	s.Started = time.Date(2026, 1, 2, 19, 5, 0, 250e6, zone)
	s.Ended = time.Date(2026, 1, 2, 19, 17, 31, 0, zone)
	s.Duration = s.Ended.Sub(s.Started)
	return s
}

// goldenSnapshots are the snapshots whose states are pinned, by golden file name.
func goldenSnapshots() []struct {
	name string
	snap Snapshot
} {
	return []struct {
		name string
		snap Snapshot
	}{
		{"states_never_played", Snapshot{}},
		{"states_menu", Snapshot{Online: true, Activity: ActivityMenu, Last: goldenLast(), PlayTime: 3*time.Hour + 751*time.Second}},
		{"states_playing", Snapshot{Online: true, Activity: ActivityPlaying, Playing: true, Current: goldenCurrent(),
			Last: goldenLast(), PlayTime: 3*time.Hour + 751*time.Second}},
		{"states_screensaver", Snapshot{Online: true, Activity: ActivityScreensaver, Screensaver: true,
			ScreensaverType: "random video", Sleeping: true, Last: goldenLast(), PlayTime: time.Hour}},
		{"states_off", Snapshot{Online: false, Activity: ActivityOff, Last: goldenLast(), PlayTime: time.Hour}},
		{"states_hostile_name", Snapshot{Online: true, Activity: ActivityPlaying, Playing: true, Current: Session{
			ID: "x", Game: "\u202eevil\x1b[31m\tname " + strings.Repeat("long ", 80), System: "snes\u200b", Rom: "/userdata/roms/snes/a\xffb.sfc",
			Source: "watcher", Started: goldenNow, Emulator: "libretro\x00", Core: "\u2066snes9x",
			Details: GameDetails{Genre: "Action\u202e" + strings.Repeat("genre ", 40), Players: "1\n2", Developer: "\x1b]0;dev",
				Year: 42, Region: "eu\u200f"}}}},
	}
}

func goldenEvents() []Message {
	s := goldenSettings()
	out := []Message{SessionStart(s, goldenCurrent(), goldenNow), SessionEnd(s, goldenLast(), goldenNow)}
	for _, k := range []string{CabinetStart, CabinetWake, CabinetSleep, CabinetQuit, CabinetReboot, CabinetShutdown} {
		out = append(out, CabinetEvent(s, k, goldenNow, goldenNow))
	}
	return out
}

// render writes one message per line: RETAIN QOS KIND KEY TOPIC PAYLOAD (KEY "-" when empty).
func render(msgs []Message) []byte {
	var b bytes.Buffer
	for _, m := range msgs {
		key := m.Key
		if key == "" {
			key = "-"
		}
		fmt.Fprintf(&b, "%d %d %s %s %s %s\n", boolInt(m.Retain), m.QoS, m.Kind, key, m.Topic, m.Payload)
	}
	return b.Bytes()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatalf("write %s: %v", file, err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./haentities -run Golden -update to create it)", file, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (a wire-format change: review, then rerun with -update)\ngot:\n%s\nwant:\n%s", file, got, want)
	}
}

func TestGoldenDiscovery(t *testing.T) {
	checkGolden(t, "discovery", render(Discovery(goldenSettings(), goldenNow)))
}

func TestGoldenStates(t *testing.T) {
	for _, g := range goldenSnapshots() {
		t.Run(g.name, func(t *testing.T) {
			checkGolden(t, g.name, render(States(goldenSettings(), g.snap, goldenNow)))
		})
	}
}

func TestGoldenEvents(t *testing.T) {
	checkGolden(t, "events", render(goldenEvents()))
}
