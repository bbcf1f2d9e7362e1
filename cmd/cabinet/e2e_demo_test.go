package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestDemo runs README's first command as a newcomer would (faster): the
// evening plays to its end without an error, the three long games are
// logged as sessions and the short one is not, and Home Assistant's final
// states say so; the cabinet pairs with the fake RomM by a code shown on
// its screen, RomM shows the game it knows as playing while it runs and
// gets its session, and the two it lacks are counted as unmatched; a game
// only RomM has is installed and started with `cabinet call
// library_install`, and RomM sees it played. Then the playroom's evening
// of two children, in order: Alice chosen in Home Assistant, her time left
// over the game, the warnings reaching Home Assistant, her game saved and
// closed at her limit, her request for 15 more minutes from Cabinet's
// entry (`cabinet entry`) approved from a parent's phone (Home
// Assistant's button) and answered on screen, Bob's turn with his own
// time, a launch ended at bedtime, and what `cabinet doctor` says of it. Between them the
// saves follow the player: the game's save leaves for RomM, the
// handheld's newer one is in place before the next launch, and a conflict
// keeps both and reaches Home Assistant.
func TestDemo(t *testing.T) {
	cabinettest.Long(t, "the whole scripted evening and the playroom's, about 45 s")
	capture := filepath.Join(t.TempDir(), "capture.txt")
	code, out, errOut := runBinary(t, nil, "demo", "--once", "--speed", "4", "--capture", capture)
	if code != 0 || strings.Contains(errOut, "demo:") {
		t.Fatalf("cabinet demo: exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut, lastLines(out, 30))
	}
	ends := strings.Count(out, `"event_type":"session_end"`)
	if ends != 6 || strings.Contains(out, `"event_type":"session_end","game":"Sonic The Hedgehog","`) {
		t.Errorf("session_end events = %d, want The Legend of Zelda, Super Mario Bros., Alpha Quest, Cosmic Crusade, "+
			"Sonic The Hedgehog 2 (from Home Assistant) and Street Fighter II only:\n%s", ends, lastLines(out, 60))
	}
	for _, want := range []string{"MCP over HTTP   http://127.0.0.1:", "(bearer token ", "last_session         Street Fighter II", "playing              OFF", "status               online",
		"/pair/device?user_code=", "someone approves code", "paired: RomM knows the cabinet as device", "the code showed on the TV ", "RomM now playing         Alpha Quest",
		"RomM now playing         (nothing)", "RomM play history +      Alpha Quest", "play session  Alpha Quest",
		"Installed Cosmic Crusade (snes). Launched Cosmic Crusade (snes)", "RomM now playing         Cosmic Crusade",
		"play session  Cosmic Crusade", "2 session(s) delivered, 4 unmatched",
		// Each game's metadata and art (issue 18).
		`HA now_playing/attributes {"system":"nes","rom":"/userdata/roms/nes/The Legend of Zelda (USA).nes"`,
		`"genre":"Action-Adventure","players":"1","developer":"Nintendo R&D4","publisher":"Nintendo","year":1986,"region":"us","emulator":"libretro","core":"nestopia"}`,
		`"genre":"Fighting","players":"1-2","developer":"Capcom","publisher":"Capcom","year":1991,"region":"World"`,
		"HA artwork                (a JPEG picture, 365×512,", "HA artwork                (the placeholder picture)",
		// Home Assistant's side of the evening (issue 17).
		"HA volume                 40", "HA mute                   ON", "HA controllers            2",
		`HA controller             {"event_type":"connected","name":"Pro Controller"}`,
		`HA controller             {"event_type":"disconnected","name":"Pro Controller"}`,
		"HA power_state            restarting_es", "power_state          running", "volume               40",
		"HA artwork                (a JPEG picture, ",
		// The scroll settles on one game; an achievement unlocks during it (issue 29).
		"HA selected_game          Super Mario Bros.", `HA achievement            {"event_type":"unlocked","id":101,"title":"Mushroom Kingdom"`,
		`"achievements":[{"id":101,"title":"Mushroom Kingdom"`, "marquee page    http://127.0.0.1:",
		// Home Assistant launches a game by name (issue 30).
		`HA play_request           {"event_type":"launched","query":"sonic 2 on genesis","outcome":"launched","game":"Sonic The Hedgehog 2"`,
		"HA play                   sonic 2 on genesis"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, lastLines(out, 40))
		}
	}
	// The saves follow the player (issue 23), in this order: Alpha Quest's
	// save leaves for RomM after the game; the handheld's newer one is in
	// place once the game is selected, before the launch; the next play's
	// goes up; then both sides change it, and the cabinet keeps its own,
	// RomM's beside the backups, and tells Home Assistant.
	at := -1
	for _, want := range []string{
		"▶ RetroArch writes Alpha Quest's save as the game closes; the cabinet sends it to RomM",
		"RomM save +              Alpha Quest (USA) [",
		"].srm from Demo Cabinet (8192 bytes)",
		"▶ on the handheld, someone plays Alpha Quest on the bus; its save reaches RomM",
		"].srm from Handheld (8192 bytes)",
		"▶ selecting Alpha Quest in EmulationStation",
		"the handheld's save is in place before the launch (the cabinet's kept in /userdata/saves/.cabinet-backup/nes/Alpha Quest (USA).srm.",
		"▶ quitting it; RetroArch writes the save, which leaves for RomM",
		"].srm from Demo Cabinet (8192 bytes)",
		"▶ meanwhile the handheld, back on the bus, uploads another save of Alpha Quest",
		"].srm from Handheld (8192 bytes)",
		"▶ quitting it: the save changed on both sides",
		"HA save_problem           conflict — Alpha Quest: ",
		"cabinet call library_saves system=nes game_id=",
		"the cabinet's save is kept in place: /userdata/saves/nes/Alpha Quest (USA).srm",
		"RomM's, from Handheld, is kept beside the backups: /userdata/saves/.cabinet-backup/nes/Alpha Quest (USA).srm.romm-",
		"to settle it: cabinet call library_resolve_save system=nes game_id=",
		"save_sync            conflict",
		"save          Alpha Quest, Alpha Quest (USA) [",
		"1 conflict(s) waiting for a choice",
	} {
		i := strings.Index(out[at+1:], want)
		if i < 0 {
			t.Errorf("demo output lacks %q after the line before (at %d):\n%s", want, at, lastLines(out, 70))
			continue
		}
		at += 1 + i
	}
	// The playroom's evening, in this order.
	at = -1
	for _, want := range []string{
		"another evening, on a second simulated cabinet: the playroom's, with play-time rules on",
		"HA player                 alice",
		"on the TV, over the game: 20 minutes of play left today.",
		"on the TV, over the game: 5 minutes of play left today: the game will be saved and closed.",
		"HA limit                  warned (alice) — Super Mario World: 5 minutes of play left today",
		"on the TV, over the game: 1 minute of play left today: the game will be saved and closed.",
		"on the TV, over the game: Time is up for today.",
		"RetroArch saves the game in a new save-state slot",
		"on the TV, in the menus:  Super Mario World was saved and closed. Time is up for today.",
		"HA limit                  reached (alice) — Super Mario World: Time is up for today. The game was saved.",
		// The TV's line and Home Assistant's come in either order (two peers): each step's
		// are looked for after it, the TV's below.
		"Alice chooses Cabinet ▸ Ask for 15 more minutes (ES runs `cabinet entry`)",
		"HA limit                  time_requested (alice) — Asks for 15 more minutes",
		"the parent taps Approve 15, and Home Assistant presses button.batocera_extra_time",
		"HA limit                  extended (alice) — +15 minutes today",
		"HA player                 bob",
		"on the TV, over the game: 20 minutes of play left today.",
		"HA limit                  warned (bob) — Tetris: 5 minutes of play left today",
		"HA limit                  reached (bob) — Tetris: Time is up for today. The game was saved.",
		"HA limit_state            bedtime",
		"Bob tries Tetris again",
		"on the TV, in the menus:  Tetris can't start now. It's bedtime: games are back at 07:00.",
		"HA limit                  refused (bob) — Tetris: It's bedtime: games are back at 07:00.",
		"OK   playtime   on — 20 min a day, bedtime 20:30-07:00, warnings at 5,1 min, at the limit save_quit",
		"limit 20 min, used 2", // 20 min, and a few seconds more while the game closes
		"min, 0 min left; state bedtime",
		"Clock: set (NTP or clock chip) — days and bedtime follow it",
		"A game started now would be ended: It's bedtime: games are back at 07:00.",
	} {
		i := strings.Index(out[at+1:], want)
		if i < 0 {
			t.Errorf("demo output lacks %q after the line before (last at %d):\n%s", want, at, lastLines(out, 70))
			continue
		}
		at += 1 + i
	}
	for _, want := range []string{
		"on the TV, in the menus:  Asked a parent for 15 more minutes. The answer will show here.",
		"on the TV, in the menus:  A parent gave you 15 more minutes.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	// Play time today only grows through the evening (HA would read a
	// drop as a new day), and ends above zero.
	prev := -1
	for _, line := range strings.Split(out, "\n") {
		_, v, ok := strings.Cut(line, "HA play_time_today")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < prev {
			t.Errorf("play_time_today went from %d to %q", prev, v)
		}
		prev = n
	}
	if prev <= 0 {
		t.Errorf("play_time_today ended at %d", prev)
	}
	// The whole evening as Home Assistant received it: no dead entity.
	b, err := os.ReadFile(capture)
	if err != nil {
		t.Fatal(err)
	}
	cabinettest.ValidateCapture(t, "demo evening", b)
	if !strings.Contains(string(b), "batocera/"+demoPowerID(b)+"/power_state stopped") {
		t.Errorf("the demo's clean stop did not publish power_state stopped")
	}
}

// demoPowerID is the demo cabinet's id, read from its capture.
func demoPowerID(capture []byte) string {
	for _, line := range strings.Split(string(capture), "\n") {
		if _, rest, ok := strings.Cut(line, " batocera/"); ok {
			if id, _, ok := strings.Cut(rest, "/"); ok {
				return id
			}
		}
	}
	return ""
}
