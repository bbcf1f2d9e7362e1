package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/reales"
)

// The household's play-time rules against Batocera's real EmulationStation:
// the real cabinet binary (the daemon up, the wrappers in ES's scripts)
// ends games the rules do not allow through ES's GET /emukill. ES runs
// `batocera-es-swissknife --emukill` for it, which is one of the recording
// stubs first in its PATH (simulator/testpeers/reales): the stub's record is
// the quit, and the test then ends the game as the swissknife does on a
// cabinet (reales' EndGame). The cabinet reaches ES through a proxy that
// notes the /emukill and /notify requests ES answered (esTap), and when.

// emuKill is the stub run of ES's GET /emukill.
const emuKill = "batocera-es-swissknife --emukill"

// householdES is a real-ES rig on the inbox path with play-time rules in
// its configuration.
type householdES struct {
	*realRig
	stubs *powerStubs
	tap   *esTap
}

// newHouseholdES starts the proxy, then the rig (extra: configuration
// lines) with the daemon up, then ES.
func newHouseholdES(t *testing.T, extra ...string) *householdES {
	t.Helper()
	reales.Require(t)
	h := &householdES{stubs: &powerStubs{TB: t}, tap: &esTap{}}
	proxy := httptest.NewServer(h.tap.handler(t))
	t.Cleanup(proxy.Close)
	h.realRig = newRealRigVia(t, h.stubs, proxy.URL, "inbox", reales.Options{}, simulator.Options{}, extra...)
	// ES's port is fixed: the proxy lets the daemon reach it only while
	// this test's ES runs there. A daemon enforcing rules that reached
	// another test's ES (while this one waits for the machine's real-ES
	// lock, or after its ES has stopped) would end that test's game.
	h.tap.open.Store(true)
	t.Cleanup(func() { // registered after ES's Stop, so run first
		h.tap.open.Store(false)
		if h.d.running() {
			h.d.term()
		}
		proxy.Close()
	})
	// Registered after reales' Stop, so it runs first: only the swissknife
	// may have run, for /emukill.
	t.Cleanup(func() {
		for _, c := range h.es.StubCalls() {
			if c != emuKill {
				t.Errorf("EmulationStation ran %q (the stubs in its PATH recorded it); only %q may run here", c, emuKill)
			}
		}
	})
	return h
}

// esTap is a proxy in front of the real ES that notes the requests ES
// answered 200 to: a line each, "GET /emukill" or "POST /notify <text>",
// and when it answered each path first. While it is not open it answers
// 502, as for an ES that is not running.
type esTap struct {
	cabinettest.LogBuffer
	open  atomic.Bool
	mu    sync.Mutex
	first map[string]time.Time
}

var tapped = map[string]bool{"/emukill": true, "/notify": true}

func (tap *esTap) handler(t *testing.T) http.Handler {
	es, err := url.Parse(reales.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(es)
	// No kept-alive connections: ES's exit waits for its idle workers.
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	// Refused while ES starts, as ES itself would refuse: the caller sees
	// the 502, the test's log does not.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !tap.open.Load() {
			http.Error(w, "not this test's EmulationStation", http.StatusBadGateway)
			return
		}
		if !tapped[req.URL.Path] {
			proxy.ServeHTTP(w, req)
			return
		}
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		proxy.ServeHTTP(rec, req)
		if rec.status != http.StatusOK {
			return
		}
		tap.mu.Lock()
		if tap.first == nil {
			tap.first = map[string]time.Time{}
		}
		if _, seen := tap.first[req.URL.Path]; !seen {
			tap.first[req.URL.Path] = time.Now()
		}
		tap.mu.Unlock()
		fmt.Fprintf(tap, "%s\n", strings.TrimSpace(req.Method+" "+req.URL.Path+" "+strings.ReplaceAll(string(body), "\n", " ")))
	})
}

// firstAt is when ES first answered path.
func (tap *esTap) firstAt(path string) time.Time {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return tap.first[path]
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// awaitQuit waits for the daemon's GET /emukill, answered by ES, and for
// ES to have run the swissknife for it; it returns how long after since
// ES answered the request.
func (h *householdES) awaitQuit(since time.Time) time.Duration {
	h.t.Helper()
	h.tap.AwaitLine(h.t, "the daemon's GET /emukill", "GET /emukill")
	cabinettest.Await(h.t, "ES running "+emuKill, nil, func() (bool, string) {
		calls := h.es.StubCalls()
		return slices.Contains(calls, emuKill), fmt.Sprintf("stub runs %q", calls)
	})
	return h.tap.firstAt("/emukill").Sub(since)
}

// notified waits until ES has accepted a notification that contains every
// one of parts.
func (h *householdES) notified(what string, parts ...string) {
	h.t.Helper()
	cabinettest.Await(h.t, what, h.tap.Changed, func() (bool, string) {
		for _, l := range strings.Split(h.tap.String(), "\n") {
			text, ok := strings.CutPrefix(l, "POST /notify ")
			if ok && !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(text, p) }) {
				return true, ""
			}
		}
		return false, fmt.Sprintf("want a notification with %q; ES got:\n%s", parts, h.tap.String())
	})
}

// launch launches rom through ES's POST /launch and returns when.
func (h *householdES) launch(file string) (rom string, at time.Time) {
	h.t.Helper()
	rom = h.es.ROM(reales.SystemNES, file)
	at = time.Now()
	h.es.Launch(rom)
	return rom, at
}

// endGame does what Batocera's swissknife does for /emukill (the game's
// process killed: ES fires game-end) and waits for the daemon to see the
// game end (playing OFF after from).
func (h *householdES) endGame(from int) {
	h.t.Helper()
	h.es.EndGame()
	h.obs.AwaitMsg(from, h.topic("playing"), "OFF")
}

// call runs `cabinet call TOOL ARGS…` (through the daemon's socket) and
// decodes its JSON result.
func (h *householdES) call(tool string, args ...string) map[string]any {
	h.t.Helper()
	out, code, _ := runCabinet(h.t, h.env(), append([]string{"call", tool}, args...)...)
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		h.t.Fatalf("cabinet call %s %q: exit %d, %v:\n%s", tool, args, code, err, out)
	}
	return res
}

// TestRealESHouseholdRefusesLaunch: with no time today
// (cabinet.household.minutes.daily=0), a game launched through ES is ended
// by the daemon as soon as it starts, and ES shows why. The -short smoke
// test of the rules against the real ES.
func TestRealESHouseholdRefusesLaunch(t *testing.T) {
	h := newHouseholdES(t, "cabinet.household.enabled=1", "cabinet.household.minutes.daily=0")
	from := h.obs.Mark()
	_, at := h.launch(reales.ROMPlain)
	took := h.awaitQuit(at)
	t.Logf("launch → quit (the daemon's GET /emukill answered by ES): %v", took.Round(time.Millisecond))
	if took > esWait {
		t.Errorf("the refused game was ended %v after its launch, want within %v", took, esWait)
	}
	h.endGame(from)
	h.d.log.AwaitLine(t, "the daemon's refusal", "household: launch not allowed; ending it")
	h.notified("ES's notification of the refusal", "Tetris can't start now.")
}

// TestRealESHouseholdPausePlay: a parent pauses play with `cabinet call
// batocera_pause_play paused=true` (the MCP tool, through the daemon's
// socket) while a game runs within the rules: the game is ended, ES shows
// why, and batocera_get_limits reports play paused.
func TestRealESHouseholdPausePlay(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation scenario")
	h := newHouseholdES(t, "cabinet.household.enabled=1", "cabinet.household.minutes.daily=60")
	from := h.obs.Mark()
	h.launch(reales.ROMPlain)
	h.es.WaitStarted()
	h.obs.AwaitMsg(from, h.topic("playing"), "ON") // the daemon counts it
	if n := len(h.es.StubCalls()); n != 0 {
		t.Fatalf("a game within the rules was ended (%q)", h.es.StubCalls())
	}

	at := time.Now()
	res := h.call("batocera_pause_play", "paused=true")
	limits, _ := res["limits"].(map[string]any)
	if res["outcome"] != "done" || limits["paused"] != true || limits["state"] != "paused" {
		t.Errorf("batocera_pause_play paused=true: %v", res)
	}
	took := h.awaitQuit(at)
	t.Logf("pause play called → quit (the daemon's GET /emukill answered by ES): %v", took.Round(time.Millisecond))
	h.endGame(from)
	h.d.log.AwaitLine(t, "the daemon's ending", `"by":"paused"`)
	h.notified("ES's notification of the pause", "Tetris was closed", "paused")

	res = h.call("batocera_get_limits")
	if res["paused"] != true || res["state"] != "paused" || res["launch_refused"] == nil {
		t.Errorf("batocera_get_limits after the pause: %v", res)
	}
}

// TestRealESHouseholdDailyLimit: with one minute a day
// (cabinet.household.minutes.daily=1) a game launched through ES runs its
// minute and is ended at the limit, with ES told why. The emulator is no
// RetroArch, so the time left, which goes over the game, falls back to an
// ES notification. It waits a real minute.
func TestRealESHouseholdDailyLimit(t *testing.T) {
	cabinettest.Long(t, "a real EmulationStation game played to a one-minute limit")
	h := newHouseholdES(t, "cabinet.household.enabled=1", "cabinet.household.minutes.daily=1")
	from := h.obs.Mark()
	_, at := h.launch(reales.ROMPlain)
	h.es.WaitStarted()
	h.notified("the time left, as an ES notification", "1 minute of play left today")
	took := h.awaitQuit(at)
	t.Logf("launch → quit at the limit (the daemon's GET /emukill answered by ES): %v", took.Round(time.Millisecond))
	if took < 55*time.Second {
		t.Errorf("the game was ended %v after its launch, before its minute was up", took)
	}
	h.endGame(from)
	h.d.log.AwaitLine(t, "the daemon's ending", "household: time is up; ending the game")
	h.notified("ES's notification of the end", "Tetris was closed", "Time is up for today")
}
