package esevents

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAchievementsUnlock: the hooks in both directories (and below) get the
// id, title and description as RetroArch's unescaped command line leaves
// them: a title with $words is expanded by sh, one past the 256-byte buffer
// leaves an unterminated quote and no hook runs.
func TestAchievementsUnlock(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "calls")
	hook := "#!/bin/sh\nprintf '%s|%s|%s|%s\\n' \"$0\" \"$1\" \"$2\" \"$3\" >> " + shellQuote(out) + "\n"
	for _, p := range []string{AchievementsRuntimeDir + "/dmd", AchievementsUserDir + "/a", AchievementsUserDir + "/sub/b"} {
		f := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(f), 0o755)
		if err := os.WriteFile(f, []byte(hook), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	a := &Achievements{Root: root, Env: []string{"WHO=world"}, Stderr: &stderr}
	ctx := context.Background()
	read := func() []string {
		b, _ := os.ReadFile(out)
		os.Remove(out)
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}

	if err := a.Unlock(ctx, 42, `Hello $WHO`, "it's done"); err != nil {
		t.Fatal(err)
	}
	got := read()
	if len(got) != 3 || !strings.HasSuffix(strings.SplitN(got[0], "|", 2)[0], "/dmd") {
		t.Fatalf("calls %q, want the runtime directory's first and the user directory's two", got)
	}
	for _, g := range got {
		if _, args, _ := strings.Cut(g, "|"); args != "42|Hello world|it's done" {
			t.Errorf("call %q, want 42, the title as sh expanded it, the description", g)
		}
	}

	if err := a.Unlock(ctx, 7, strings.Repeat("x", 300), "d"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err == nil {
		t.Errorf("a command line past 256 bytes ran the hooks: %q", b)
	}
	if !strings.Contains(stderr.String(), "Unterminated") && !strings.Contains(stderr.String(), "unexpected EOF") {
		t.Errorf("sh said %q, want an unterminated quoted string", stderr.String())
	}
}
