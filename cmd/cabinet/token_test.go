package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tokenEnv is an environment whose state dir is a temporary one.
func tokenEnv(t *testing.T) (environ []string, state string) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "batocera.conf")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(dir, "state")
	return []string{"CABINET_CONFIG=" + conf, "CABINET_STATE_DIR=" + state}, state
}

func TestTokenCommand(t *testing.T) {
	env, state := tokenEnv(t)
	tok := func(args ...string) (string, string) {
		t.Helper()
		code, out, errb := runCmd(t, env, append([]string{"token"}, args...)...)
		if code != exitOK {
			t.Fatalf("cabinet token %v: exit %d, stderr %s", args, code, errb)
		}
		return strings.TrimSpace(out), errb
	}
	fails := func(want int, wantErr string, args ...string) {
		t.Helper()
		code, out, errb := runCmd(t, env, append([]string{"token"}, args...)...)
		if code != want || !strings.Contains(errb, wantErr) || out != "" {
			t.Errorf("cabinet token %v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, out, errb, want, wantErr)
		}
	}

	fails(exitError, "cabinet token new", "show")
	def, _ := tok("new")
	if shown, _ := tok("show"); shown != def || len(def) != 43 {
		t.Errorf("show %q after new %q", shown, def)
	}
	if fi, err := os.Stat(filepath.Join(state, "token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the default token's file: %v %v", err, fi)
	}

	laptop, msg := tok("new", "--name", "laptop")
	if len(laptop) != 43 || laptop == def || !strings.Contains(msg, "scopes read,play") || strings.Contains(msg, laptop) {
		t.Errorf("new --name laptop: %q, stderr %q", laptop, msg)
	}
	power, msg := tok("new", "--name", "kitchen", "--scope", "power,read")
	if !strings.Contains(msg, "scopes read,power") {
		t.Errorf("new --scope power,read: stderr %q", msg)
	}
	if shown, _ := tok("show"); shown != def {
		t.Error("show no longer prints the default token")
	}
	b, err := os.ReadFile(filepath.Join(state, "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), laptop) || strings.Contains(string(b), power) {
		t.Error("tokens.json holds a token")
	}
	if fi, _ := os.Stat(filepath.Join(state, "tokens.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens.json mode %v", fi.Mode().Perm())
	}

	list, _ := tok("list")
	lines := strings.Split(list, "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("list:\n%s", list)
	}
	for i, want := range [][]string{{"default", "read,play,library", "never", "-"}, {"laptop", "read,play", "never"}, {"kitchen", "read,power"}} {
		f := strings.Fields(lines[i+1])
		if f[0] != want[0] || f[1] != want[1] || !strings.Contains(lines[i+1], want[len(want)-1]) {
			t.Errorf("list line %d: %q, want %v", i+1, lines[i+1], want)
		}
	}
	js, _ := tok("list", "--json")
	var got []struct {
		Name     string   `json:"name"`
		Scopes   []string `json:"scopes"`
		LastUsed *string  `json:"last_used"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil || len(got) != 3 || got[2].Name != "kitchen" || got[2].LastUsed != nil {
		t.Errorf("list --json: %v\n%s", err, js)
	}
	if strings.Contains(js, "sha256") {
		t.Error("list --json shows hashes")
	}

	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"new", "--name", "Bad Name"}, "a-z, 0-9"},
		{[]string{"new", "--name", strings.Repeat("a", 33)}, "1 to 32"},
		{[]string{"new", "--name", "x", "--scope", "admin"}, `unknown scope "admin"`},
		{[]string{"new", "--name", "x", "--scope", ""}, "no scope given"},
		{[]string{"new", "--scope", "power"}, "--scope needs --name"},
		{[]string{"new", "--name", "default", "--scope", "power"}, "the default token's scopes"},
		{[]string{"show", "--name", "laptop"}, "--name does not go with"},
		{[]string{"revoke"}, "cabinet token revoke NAME"},
		{[]string{"revoke", "laptop", "kitchen"}, "cabinet token revoke NAME"},
		{[]string{"list", "--all"}, "--all does not go with"},
		{[]string{"frob"}, "want `cabinet token new`"},
	} {
		code, _, errb := runCmd(t, env, append([]string{"token"}, tc.args...)...)
		if code == exitOK || !strings.Contains(errb, tc.wantErr) {
			t.Errorf("token %q: exit %d stderr %q, want a failure saying %q", tc.args, code, errb, tc.wantErr)
		}
	}
	fails(exitError, "no such token", "revoke", "nobody")

	// Replacing a named token.
	laptop2, msg := tok("new", "--name", "laptop", "--scope", "read")
	if laptop2 == laptop || !strings.Contains(msg, "replaced the token laptop (scopes read)") {
		t.Errorf("replace laptop: stderr %q", msg)
	}

	if _, msg := tok("revoke", "laptop"); !strings.Contains(msg, "revoked laptop") {
		t.Errorf("revoke: %q", msg)
	}
	if list, _ := tok("list"); strings.Contains(list, "laptop") || !strings.Contains(list, "kitchen") {
		t.Errorf("after revoke laptop:\n%s", list)
	}
	// new without --name replaces the default token, as before.
	def2, msg := tok("new")
	if def2 == def || !strings.Contains(msg, "old one stops working") {
		t.Errorf("new again: %q %q", def2, msg)
	}
	if _, msg := tok("revoke", "--all"); !strings.Contains(msg, "revoked 2 token(s)") {
		t.Errorf("revoke --all: %q", msg)
	}
	if _, msg := tok("list"); !strings.Contains(msg, "no tokens") {
		t.Errorf("list after revoke --all: %q", msg)
	}
	fails(exitError, "no MCP token yet", "show")
	// Flags before the verb work too.
	if code, out, errb := runCmd(t, env, "token", "--name", "tv", "new"); code != exitOK || len(strings.TrimSpace(out)) != 43 {
		t.Errorf("token --name tv new: %d %q %q", code, out, errb)
	}
}
