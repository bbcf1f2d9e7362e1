package e2e

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestHostileGameName: a game name (from a gamelist or a file name) full of
// terminal escapes, bidi overrides, zero-width and C1 characters, and far
// longer than Home Assistant keeps, goes through ES's quoting into the
// hook; now_playing shows it cleaned, on one line, at most 255 characters.
func TestHostileGameName(t *testing.T) {
	// No ", $, ` or \: ES deletes " and sh expands the others (es-events.md §4).
	hostile := "Evil\x1b[31m Game\x07 \u202eReversed\u202c \u2066Isolated\u2069 zero\u200bwidth\ufeff c1\u0085\u009b tab\there\nnewline " +
		strings.Repeat("long name ", 60)
	rom := "/userdata/roms/snes/evil game.sfc"
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		b := startBroker(t, kind, cabinettest.BrokerOptions{})
		opts := cabinetOptions{MinSessionSeconds: 60}
		c := newCabinet(t, b, opts)
		c.begin(opts)
		c.fire("start")
		c.fire("game-start", esevents.GameStartArgs(rom, hostile)...)
		if s := c.esStderr.String(); s != "" {
			t.Fatalf("sh could not run the hook: %s", s)
		}
		var got string
		// The game's states may come in any order (a hook out of budget leaves
		// them to its delayed flush): wait for both that are checked below.
		c.waitDelivered("now_playing and playing", func() (bool, string) {
			last := c.lastRetained()
			got = last[c.topic("now_playing")]
			playing := last[c.topic("playing")]
			return strings.HasPrefix(got, "Evil") && playing == "ON", fmt.Sprintf("now_playing %q, playing %q", got, playing)
		})
		if n := utf8.RuneCountInString(got); n > 255 {
			t.Errorf("now_playing has %d characters, HA keeps 255", n)
		}
		for _, r := range got {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\n' || r == '\t' {
				t.Errorf("now_playing keeps %U: %q", r, got)
			}
		}
		if !utf8.ValidString(got) || !strings.HasPrefix(got, "Evil[31m Game Reversed Isolated zerowidth c1 tab here newline long name") {
			t.Errorf("now_playing = %q, want the visible text on one line", got)
		}
		if want := untrusted.Clean(hostile, 255); got != want {
			t.Errorf("now_playing = %q\nwant untrusted.Clean's %q", got, want)
		}
		c.checkStates(map[string]string{"now_playing": got, "playing": "ON"})
	})
}
