package tools

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

// scenario is the end-to-end path of issue 5: find, launch, status, pause,
// save a state, take a screenshot (image content), quit.
type scenario struct {
	query, system, name string // the game to find and launch
	raGame, raSystem    string // what GET_STATUS reports for it
	states              string // RetroArch's savestate folder
	gone                func() bool
}

func runScenario(t *testing.T, r *rig, sc scenario) {
	t.Helper()
	var found findResult
	r.ok("batocera_find_games", map[string]any{"query": sc.query, "system": sc.system, "limit": 1}, &found)
	if len(found.Games) != 1 || found.Games[0].Name != sc.name {
		t.Fatalf("find %q: got %+v", sc.query, found)
	}
	id := found.Games[0].GameID
	if a := r.action("batocera_launch_game", map[string]any{"system": sc.system, "game_id": id}); a.Outcome != "done" {
		t.Fatalf("launch: got %+v", a)
	}
	var st statusResult
	cabinettest.Await(t, "RetroArch playing", nil, func() bool {
		r.ok("batocera_get_status", nil, &st)
		return st.RetroArch.State == "playing"
	})
	if st.RunningGame == nil || st.RunningGame.GameID != id || deref(st.RetroArch.Game) != sc.raGame ||
		deref(st.RetroArch.System) != sc.raSystem {
		t.Fatalf("status: got %+v / %+v", st.RunningGame, st.RetroArch)
	}
	var p pauseResult
	if r.ok("batocera_pause_game", map[string]any{"paused": true}, &p); p.Outcome != "done" || p.State != "paused" {
		t.Fatalf("pause: got %+v", p)
	}
	// RetroArch ignores SAVE_STATE while paused: the tool resumes around it.
	if a := r.action("batocera_save_state", nil); a.Outcome != "done" ||
		strings.Join(a.Sent, "|") != "UDP PAUSE_TOGGLE|UDP SAVE_STATE|UDP PAUSE_TOGGLE" || len(a.Warnings) != 1 {
		t.Fatalf("save state while paused: got %+v", a)
	}
	state := filepath.Join(sc.states, sc.raGame+".state")
	cabinettest.Await(t, "the state file "+state, nil, func() bool { fi, err := os.Stat(state); return err == nil && fi.Size() > 0 })
	if r.ok("batocera_get_status", nil, &st); st.RetroArch.State != "paused" {
		t.Fatalf("after saving: RetroArch is %s, want paused again", st.RetroArch.State)
	}
	var shot screenshotResult
	res := r.ok("batocera_take_screenshot", nil, &shot)
	if shot.Screenshot == nil || !shot.Screenshot.Returned || len(images(res)) != 1 {
		t.Fatalf("screenshot: got %+v, warnings %v", shot.Screenshot, shot.Warnings)
	}
	data, _ := base64.StdEncoding.DecodeString(images(res)[0].Data)
	if img, err := png.Decode(bytes.NewReader(data)); err != nil || img.Bounds().Dx() != shot.Screenshot.Width {
		t.Fatalf("screenshot image: %v", err)
	}
	if a := r.action("batocera_quit_game", nil); a.Outcome != "done" || strings.Join(a.Sent, "") != "GET /emukill" {
		t.Fatalf("quit: got %+v", a)
	}
	cabinettest.Await(t, "RetroArch gone", nil, sc.gone)
	r.ok("batocera_get_status", nil, &st)
	if st.RunningGame != nil || st.RetroArch.State != "off" {
		t.Errorf("after quit: got %+v / %+v", st.RunningGame, st.RetroArch)
	}
}

func TestScenarioFakeRetroArch(t *testing.T) {
	for _, proto := range []string{"", mcp.ProtocolVersion20251125} {
		t.Run("protocol "+proto, func(t *testing.T) {
			r := newRig(t, rigConfig{protocol: proto})
			want := proto
			if want == "" {
				want = mcp.LATEST_PROTOCOL_VERSION
			}
			if got := r.client.ProtocolVersion(); got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			list, err := r.client.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil || len(list.Tools) != 16 {
				t.Fatalf("tools/list: %d tools, %v", len(list.Tools), err)
			}
			runScenario(t, r, scenario{query: "super mario world", system: "snes", name: "Super Mario World",
				raGame: "Super Mario World (USA)", raSystem: "super_nes", states: r.states,
				gone: func() bool { return !r.ra.Snapshot().Listening }})
		})
	}
}

// TestScenarioRealRetroArch runs the RetroArch tools against the real
// RetroArch 1.14 (skipped unless installed; CABINET_REQUIRE_PEERS=1 makes
// it required). The fake ES plays Batocera: launching the stub game "runs"
// the real RetroArch, /emukill stops it.
func TestScenarioRealRetroArch(t *testing.T) {
	in := peertest.RetroArch(t, realretroarch.Options{})
	lib := library.Fixture("")
	if _, err := lib.AddGame("nes", in.ROMBasename+".nes", "Stub Quest", map[string]string{"genre": "Test"}); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigConfig{lib: lib, emulator: realEmulator{in}, deps: func(d *Deps) {
		d.RetroArch = retroarch.New(in.Addr)
		d.Paths.ScreenshotDir = in.ScreenshotDir
	}, opts: Options{ScreenshotWait: 10 * time.Second}})
	runScenario(t, r, scenario{query: "stub quest", system: "nes", name: "Stub Quest", raGame: in.ROMBasename,
		raSystem: in.SystemID, states: in.SavestateDir, gone: func() bool {
			select {
			case <-in.Done():
				return true
			default:
				return false
			}
		}})
}

// realEmulator is Batocera running the already started real RetroArch:
// /emukill ends it the way batocera-es-swissknife does, with a signal.
type realEmulator struct{ in *realretroarch.Instance }

func (e realEmulator) Run(ctx context.Context, _ library.Game) (int, error) {
	select {
	case <-ctx.Done():
		return 0, e.in.Stop()
	case <-e.in.Done():
		return 0, nil
	}
}
