package packaging

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The achievements wrapper, under every shell: with the daemon up one
// record of exactly six words whose id, title and description are cut to
// their bounds, whatever RetroArch passed (a 1 MiB title too, which only a
// sourced run can hold: no argv can); with it down the binary as the
// configgen source with exactly the three arguments. It never reads stdin,
// the pipe of script names call_achievements_hooks.sh reads from.
func TestAchievementsWrapper(t *testing.T) {
	huge := strings.Repeat("é\"$(x)`\\", 1<<17) // 1.25 MiB
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			h := newHandover(t, sh.argv)
			script := h.l.AchievementsScript()
			if !strings.HasSuffix(script, "/scripts/achievements/cabinet") {
				t.Fatalf("installed at %s: want ES's scripts/achievements/ folder", script)
			}
			h.up(t, os.Getpid(), true)
			recs, bin := h.run(t, sh.argv, script, "12345", `Say "Hi" $HOME`, "two\nlines", "extra", "args")
			want := []string{"--source", "configgen", "achievements", "12345", `Say "Hi" $HOME`, "two\nlines"}
			if len(recs) != 1 || bin != nil || !reflect.DeepEqual(recs[0].Argv, want) {
				t.Fatalf("daemon up: records %+v, binary %q; want one record %q", recs, bin, want)
			}

			// A title no argv can hold, given as a shell holds it.
			f := filepath.Join(t.TempDir(), "title")
			os.WriteFile(f, []byte(huge), 0o644)
			src := `w=$1; t=$(cat "$2"); set -- "$t" "$t" "$t"; . "$w"`
			recs, _ = h.runArgs(t, append(append([]string(nil), sh.argv...), "-c", src, "sh", script, f))
			if len(recs) != 1 {
				t.Fatalf("sourced 1 MiB title: %d records", len(recs))
			}
			a := recs[0].Argv
			if len(a) != 6 || len(a[3]) != unlockIDBytes || len(a[4]) != unlockTitleBytes || len(a[5]) != unlockDescBytes ||
				!strings.HasPrefix(huge, a[4]) {
				t.Errorf("sourced 1 MiB title: record of %d words, id %d, title %d, description %d bytes; want 6 words cut to %d, %d, %d",
					len(a), len(a[3]), len(a[4]), len(a[5]), unlockIDBytes, unlockTitleBytes, unlockDescBytes)
			}

			os.Remove(filepath.Join(h.l.RunDir, "serve.up"))
			_, bin = h.run(t, sh.argv, script, "12345", `Say "Hi" $HOME`, "two\nlines", "extra")
			if !reflect.DeepEqual(bin, want) {
				t.Errorf("daemon down: the binary got %q, want %q", bin, want)
			}

			// stdin: call_achievements_hooks.sh's `find | while read` pipe.
			for _, up := range []bool{true, false} {
				if up {
					h.up(t, os.Getpid(), true)
				} else {
					os.Remove(filepath.Join(h.l.RunDir, "serve.up"))
				}
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				w.WriteString("/userdata/system/configs/emulationstation/scripts/achievements/next.sh\n")
				w.Close()
				cmd := exec.Command(sh.argv[0], append(sh.argv[1:], script, "1", "t", "d")...)
				cmd.Stdin = r
				if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
					t.Fatalf("%v %q", err, out)
				}
				if rest, _ := io.ReadAll(r); !strings.HasSuffix(string(rest), "next.sh\n") {
					t.Errorf("daemon up %v: the wrapper read its stdin (left %q)", up, rest)
				}
				r.Close()
				h.run(t, sh.argv, "/dev/null") // empty the inbox
			}
		})
	}
}
