package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestGarbageArgv feeds the hook argv that ES, a broken install or a human
// could produce. Every run exits 0 within its budget and writes nothing to
// stdout or stderr; refused argv logs one line at the default level, argv
// that is odd but usable is recorded cleaned; no logged session is lost.
func TestGarbageArgv(t *testing.T) {
	cabinettest.Long(t, "13 kinds of bad argv through the binary, about 11 s (hook/argv.TestParse* check the parsing)")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 0, LogLevel: "info"}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		before := c.logOneSession()

		huge := strings.Repeat("x", 10<<10)
		cases := []struct {
			name  string
			args  []string
			lines int // new cabinet.log lines at level info
			check func(t *testing.T)
		}{
			{name: "no event", args: nil, lines: 1},
			{name: "unknown event", args: []string{"frobnicate", "a", "b"}, lines: 1},
			{name: "unknown option", args: []string{"--source", "weird", "start"}, lines: 1},
			{name: "option without value", args: []string{"--source"}, lines: 1},
			{name: "unknown configgen event", args: []string{"--source", "configgen", "gameFoo", "nes"}, lines: 1},
			{name: "quit with a bad mode", args: []string{"quit", "now"}, lines: 1},
			{name: "huge argument", args: []string{"game-start", huge, "stem", "name"}, lines: 1},
			{name: "too many arguments", args: strings.Fields("sleep 1 2 3 4 5 6 7 8 9"), lines: 1},
			{name: "event ES fires but nobody tracks", args: []string{"config-changed"}, lines: 0},
			{name: "invalid UTF-8", args: []string{"screensaver-start", "vid\xffeo \xc3"}, lines: 0, check: func(t *testing.T) {
				c.waitState("screensaver", "ON")
				// The attributes follow the state: wait for them too.
				var attrs string
				var a struct{ Type string }
				c.waitDelivered("the screensaver's attributes", func() (bool, string) {
					attrs = c.lastRetained()[c.topic("screensaver/attributes")]
					a.Type = ""
					return json.Unmarshal([]byte(attrs), &a) == nil && a.Type != "", fmt.Sprintf("attributes %q", attrs)
				})
				if !utf8.ValidString(a.Type) || !strings.HasPrefix(a.Type, "vid") {
					t.Errorf("screensaver attributes %q, want valid UTF-8 from the cleaned argv", attrs)
				}
			}},
			{name: "escaped path (spaces: ES quotes it, sh keeps the backslashes)",
				args: append([]string{"game-start"}, esevents.GameStartArgs(smbPath, smbName)...), lines: 0,
				check: func(t *testing.T) { c.waitNowPlayingRom(smbName, smbPath) }},
			{name: "unescaped path (no space: sh removed the backslashes)",
				args: []string{"game-start", marioPath, marioStem, marioStem}, lines: 0,
				check: func(t *testing.T) { c.waitNowPlayingRom(marioStem, marioPath) }},
			{name: "game-start without arguments", args: []string{"game-start"}, lines: 0},
		}
		var times []string
		for _, tc := range cases {
			n := len(c.logLines())
			r := c.hook(tc.args...)
			if r.Err != nil || len(r.Stdout) != 0 || len(r.Stderr) != 0 {
				t.Errorf("%s: exit %v, stdout %q, stderr %q; want exit 0 and silence", tc.name, r.Err, r.Stdout, r.Stderr)
			}
			if got := withoutDeadlineMisses(c.logLines()[n:]); len(got) != tc.lines || len(atLeastWarn(got)) != tc.lines {
				t.Errorf("%s: %d new log lines (%d at warn or above), want %d:\n%s", tc.name, len(got), len(atLeastWarn(got)), tc.lines, raws(got))
			} else if tc.lines > 0 {
				t.Logf("%s: %s", tc.name, got[0].raw)
			}
			if tc.check != nil {
				tc.check(t)
			}
			times = append(times, fmt.Sprintf("%s %v", tc.name, r.Took.Round(time.Millisecond)))
			c.hook("game-end") // whatever started, ends
		}
		t.Logf("%s: wall time per run: %s", kind, strings.Join(times, "; "))
		c.checkHistoryKept(before)
	})
}

// logOneSession plays a short, logged session and returns the history.
func (c *cabinet) logOneSession() []string {
	c.t.Helper()
	c.fire("start")
	c.fire("game-start", esevents.GameStartArgs("/userdata/roms/nes/Kept.nes", "Kept")...)
	c.fire("game-end")
	c.flushFinal()
	c.waitSessionEvents("session_end", 1)
	c.waitQuiet()
	h := c.storeSessions()
	if len(h) != 1 {
		c.t.Fatalf("history %q, want the one session", h)
	}
	return h
}

// checkHistoryKept checks that every session of before is still in the
// history.
func (c *cabinet) checkHistoryKept(before []string) {
	c.t.Helper()
	c.waitQuiet()
	after := c.storeSessions()
	for _, s := range before {
		if !contains(after, s) {
			c.t.Errorf("logged session %q lost: history %q", s, after)
		}
	}
}

// waitNowPlayingRom waits until now_playing shows name with rom as its
// path: the de-escaped one, whatever ES did to argv.
func (c *cabinet) waitNowPlayingRom(name, rom string) {
	c.t.Helper()
	want, _ := json.Marshal(rom)
	c.waitDelivered("now_playing "+name+" at "+rom, func() (bool, string) {
		r := c.lastRetained()
		attrs := r[c.topic("now_playing/attributes")]
		return r[c.topic("now_playing")] == name && strings.Contains(attrs, `"rom":`+string(want)), r[c.topic("now_playing")] + " " + attrs
	})
}
