package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `''`},
		{"plain", `'plain'`},
		{"two words", `'two words'`},
		{"it's", `'it'\''s'`},
		{"''", `''\'''\'''`},
		{`$HOME "x" \n`, `'$HOME "x" \n'`},
		{"`id`; rm -rf /", "'`id`; rm -rf /'"},
		{"line\nbreak", "'line\nbreak'"},
		{"-n", `'-n'`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// shell is the POSIX shell the round trip runs in: dash, Batocera's
// /bin/sh, when it is here.
func shell(t testing.TB) string {
	for _, sh := range []string{"dash", "sh"} {
		if p, err := exec.LookPath(sh); err == nil {
			return p
		}
	}
	t.Skip("no POSIX shell here")
	return ""
}

// roundTrip has the shell print each word of command, NUL-terminated, and
// returns the words it saw.
func roundTrip(t testing.TB, sh string, words ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, sh, "-c", `printf '%s\0' `+command(words...)).Output()
	if err != nil {
		t.Fatalf("%s -c: %v", sh, err)
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

func TestQuoteRoundTrip(t *testing.T) {
	sh := shell(t)
	words := []string{"", "it's", "a b", "$(id)", "`id`", `\`, `"`, "*", "~", "#", "é", "\t\n", "--set", "k=v w"}
	got := roundTrip(t, sh, words...)
	if strings.Join(got, "\x00") != strings.Join(words, "\x00") {
		t.Errorf("%s saw %q, want %q", sh, got, words)
	}
}

// FuzzQuote checks that any string without NUL reaches a real shell as one
// unchanged word, beside a second one.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "'", "''", `'\''`, "a'b\"c", "$x${y}", "\\\n", "\xff\xfe", "!$?*[a]"} {
		f.Add(s, "next")
	}
	sh := shell(f)
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a, 0) || strings.ContainsRune(b, 0) {
			t.Skip("argv cannot hold NUL")
		}
		got := roundTrip(t, sh, a, b)
		if len(got) != 2 || got[0] != a || got[1] != b {
			t.Fatalf("%s saw %q, want %q", sh, got, []string{a, b})
		}
	})
}

func TestInstallCommand(t *testing.T) {
	got := InstallCommand("/r/userdata/system/cabinet/bin/.cabinet.deploy", "install", []string{"--set", "cabinet.paths.root=/r", "--save-secret", "cabinet.mqtt.password"})
	want := `'/r/userdata/system/cabinet/bin/.cabinet.deploy' 'install' '--set' 'cabinet.paths.root=/r' '--save-secret' 'cabinet.mqtt.password'; rc=$?; rm -f '/r/userdata/system/cabinet/bin/.cabinet.deploy'; exit $rc`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestInstallCommandKeepsStatus runs the command line in a real shell: the
// binary's status comes out, and the binary is gone.
func TestInstallCommandKeepsStatus(t *testing.T) {
	sh := shell(t)
	dir := t.TempDir()
	final := dir + "/it's here"
	if err := writeScript(final, "echo \"$@\"; exit 7"); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := exec.Command(sh, "-c", InstallCommand(final, "install", []string{"--set", "a=b c"}))
	cmd.Stdout = &out
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 7 {
		t.Errorf("exit status %d (%v), want 7", code, err)
	}
	if got := out.String(); got != "install --set a=b c\n" {
		t.Errorf("output %q", got)
	}
	if _, err := os.Stat(final); err == nil {
		t.Errorf("%s is still there", final)
	}
}
