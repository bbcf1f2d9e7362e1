package esevents

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGoldenCaptures holds the argv our scripts receive to what scripts received from a real
// batocera-emulationstation (testdata/events_*.txt, copied from es-captures), byte for byte.
// Each case recreates the capture run's scripts (a root generic logall.sh, and log.sh in the
// per-event directories the run had) and fires the same events with the same arguments.
func TestGoldenCaptures(t *testing.T) {
	const (
		smb    = "/userdata/roms/nes/Super Mario Bros. (World).nes"
		dollar = "/userdata/roms/nes/Tom's $Game.nes"
		mario  = "/userdata/roms/nes/Mario_(USA).nes"
	)
	type fire struct {
		event string
		args  []string
	}
	tests := []struct {
		capture string
		subdirs []string // events whose scripts/<event>/ held a logging script in that run
		fires   []fire
	}{
		{
			capture: "events_startup_and_screensaver.txt",
			fires: []fire{
				{"start", nil},
				{"system-selected", []string{"nes"}},
				{"screensaver-start", []string{"dim"}},
				{"sleep", nil},
			},
		},
		{
			capture: "events_launch_smb.txt",
			subdirs: []string{"game-start", "game-end"},
			fires: []fire{
				{"screensaver-stop", nil},
				{"game-start", GameStartArgs(smb, "Super Mario Bros. (World)")},
				{"game-end", nil},
			},
		},
		{
			capture: "events_launch_dollar.txt",
			subdirs: []string{"game-start", "game-end"},
			fires:   []fire{{"game-start", GameStartArgs(dollar, "Tom's $Game")}},
		},
		{
			// game-start's unquoted stem "Mario_(USA)" is a sh syntax error: no hook runs.
			capture: "events_launch_mario_parens.txt",
			subdirs: []string{"game-start", "game-end"},
			fires: []fire{
				{"game-start", GameStartArgs(mario, "Mario_(USA)")},
				{"game-end", nil},
			},
		},
		{
			// Two runs of GET /quit; ES saved its settings first in run 1.
			capture: "events_quit.txt",
			subdirs: []string{"quit"},
			fires: []fire{
				{"config-changed", nil},
				{"settings-changed", nil},
				{"quit", nil},
				{"quit", nil},
			},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.capture, ".txt"), func(t *testing.T) {
			capture, err := os.ReadFile(filepath.Join("testdata", tt.capture))
			if err != nil {
				t.Fatal(err)
			}
			want := canonical(parseRecords(string(capture)))
			if len(want) == 0 {
				t.Fatalf("no records parsed from %s", tt.capture)
			}

			tr := newTree(t)
			tr.addRecorder(t, "", "logall.sh")
			for _, ev := range tt.subdirs {
				tr.addRecorder(t, ev, "log.sh")
			}
			var got []record
			for _, f := range tt.fires {
				got = append(got, tr.fire(t, f.event, f.args...)...)
			}
			if g := canonical(got); !slices.Equal(g, want) {
				t.Errorf("argv received differs from the real ES capture\ngot:\n%s\n\nwant:\n%s",
					strings.Join(g, "\n"), strings.Join(want, "\n"))
			}
			for _, r := range got {
				if r.argc != len(r.args) {
					t.Errorf("record %q: argc=%d but %d arg lines", r.String(), r.argc, len(r.args))
				}
			}
		})
	}
}

// TestGoldenMarioSyntaxError holds what ES's own stderr showed for the stem with '(' (sh could
// not parse the command, once per script) and ES's debug line for the event's arguments.
func TestGoldenMarioSyntaxError(t *testing.T) {
	capture, err := os.ReadFile(filepath.Join("testdata", "events_launch_mario_parens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var wantStderr []string
	var wantDebug string
	for _, l := range strings.Split(string(capture), "\n") {
		if strings.HasPrefix(l, "sh: ") {
			wantStderr = append(wantStderr, l)
		}
		if strings.HasPrefix(l, "fireEvent: ") {
			wantDebug = l
		}
	}

	args := GameStartArgs("/userdata/roms/nes/Mario_(USA).nes", "Mario_(USA)")
	if got := "fireEvent: game-start " + strings.Join(args, " "); got != wantDebug {
		t.Errorf("game-start arguments\ngot  %q\nwant %q", got, wantDebug)
	}

	tr := newTree(t)
	tr.addRecorder(t, "", "logall.sh")
	tr.addRecorder(t, "game-start", "log.sh")
	if recs := tr.fire(t, "game-start", args...); len(recs) != 0 {
		t.Fatalf("hooks ran for an unquoted stem with '(': %v", recs)
	}
	gotStderr := strings.Split(strings.TrimSuffix(tr.stderr.String(), "\n"), "\n")
	if sh, _ := filepath.EvalSymlinks("/bin/sh"); filepath.Base(sh) == "dash" {
		// The capture was made with dash as /bin/sh; bash words its message differently.
		// The two scripts run at once and dash writes "sh: 1: " and the message
		// apart, so their words may interleave (seen in CI): compare the pieces.
		if !slices.Equal(gotStderr, wantStderr) && !samePieces(tr.stderr.String(), wantStderr) {
			t.Errorf("ES stderr\ngot  %q\nwant %q", gotStderr, wantStderr)
		}
	} else if len(gotStderr) != 2 || !strings.Contains(strings.ToLower(tr.stderr.String()), "syntax error") {
		t.Errorf("ES stderr = %q, want two syntax errors", tr.stderr.String())
	}
}

// samePieces says whether got holds exactly want's lines, each split at its
// "sh: N: " prefix, in any interleaving: the same number of prefixes and of
// messages, and nothing else.
func samePieces(got string, want []string) bool {
	rest := got
	for _, l := range want {
		i := strings.Index(l, ": Syntax")
		if i < 0 {
			return false
		}
		prefix, msg := l[:i+2], l[i+2:]
		if !strings.Contains(rest, prefix) || !strings.Contains(rest, msg) {
			return false
		}
		rest = strings.Replace(rest, prefix, "", 1)
		rest = strings.Replace(rest, msg, "", 1)
	}
	return strings.TrimSpace(rest) == ""
}
