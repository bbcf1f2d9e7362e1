package httpauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseScopes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" : an error
	}{
		{"read", "read"},
		{"power,read, play", "read,play,power"},
		{"READ,read,,household", "read,household"},
		{"read,play,library,power,household", "read,play,library,power,household"},
		{"", ""},
		{",", ""},
		{"admin", ""},
		{"read,write", ""},
	} {
		got, err := ParseScopes(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseScopes(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != tc.want {
			t.Errorf("ParseScopes(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{"laptop": true, "kid-s_tablet2": true, strings.Repeat("a", 32): true,
		"": false, strings.Repeat("a", 33): false, "Laptop": false, "my laptop": false, "a/b": false, "é": false, "a.b": false} {
		if got := ValidName(name) == nil; got != ok {
			t.Errorf("ValidName(%q) ok = %v, want %v", name, got, ok)
		}
	}
}

// TestStore: named tokens are kept as hashes in a 0600 file apart from the
// default token's, with their scopes; they can be listed, replaced and
// revoked; the count is bounded.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	st := NewStore(filepath.Join(dir, "token"))
	st.Now = clock.Now
	if st.Path != filepath.Join(dir, "tokens.json") {
		t.Fatalf("tokens file %s", st.Path)
	}
	if l, err := st.List(); err != nil || len(l) != 0 {
		t.Fatalf("empty store lists %v, %v", l, err)
	}
	def, _, err := st.Create(DefaultName, nil)
	if err != nil {
		t.Fatal(err)
	}
	laptop, replaced, err := st.Create("laptop", nil)
	if err != nil || replaced || len(laptop) != 43 {
		t.Fatalf("Create laptop = %q, %v, %v", laptop, replaced, err)
	}
	clock.Advance(time.Hour)
	kitchen, _, err := st.Create("kitchen", []string{ScopePower, ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Create("Bad Name", nil); err == nil {
		t.Error("a bad name accepted")
	}
	if _, _, err := st.Create(DefaultName, []string{ScopePower}); err == nil {
		t.Error("the default token given other scopes")
	}
	if _, _, err := st.Create("x", []string{"bogus"}); err == nil {
		t.Error("a token without a known scope made")
	}

	fi, err := os.Stat(st.Path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(st.Path)
	for _, tok := range []string{def, laptop, kitchen} {
		if strings.Contains(string(b), tok) {
			t.Errorf("the tokens file holds a token")
		}
	}
	if !strings.Contains(string(b), sum(laptop)) {
		t.Errorf("the tokens file has no hash of the laptop token:\n%s", b)
	}

	l, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range l {
		got = append(got, i.Name+":"+strings.Join(i.Scopes, ","))
	}
	if want := "default:read,play,library laptop:read,play kitchen:read,power"; strings.Join(got, " ") != want {
		t.Errorf("List = %v, want %s", got, want)
	}
	if !l[1].Created.Equal(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)) || !l[2].LastUsed.IsZero() {
		t.Errorf("laptop created %v, kitchen last used %v", l[1].Created, l[2].LastUsed)
	}

	// Replacing a named token: the old secret's hash is gone.
	laptop2, replaced, err := st.Create("laptop", []string{ScopeRead})
	if err != nil || !replaced {
		t.Fatalf("replace laptop: %v, replaced %v", err, replaced)
	}
	b, _ = os.ReadFile(st.Path)
	if strings.Contains(string(b), sum(laptop)) || !strings.Contains(string(b), sum(laptop2)) {
		t.Error("replacing laptop left the old hash or lost the new one")
	}

	if err := st.Revoke("nobody"); !errors.Is(err, ErrNoSuchToken) {
		t.Errorf("revoke nobody: %v", err)
	}
	if err := st.Revoke("kitchen"); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.List(); len(l) != 2 || l[1].Name != "laptop" {
		t.Errorf("after revoking kitchen: %+v", l)
	}
	if err := st.Revoke(DefaultName); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.DefaultPath); !os.IsNotExist(err) {
		t.Errorf("the default token's file after revoking it: %v", err)
	}
	if err := st.Revoke(DefaultName); !errors.Is(err, ErrNoSuchToken) {
		t.Errorf("revoking the default twice: %v", err)
	}

	// Bounded count.
	for i := range MaxTokens - 1 {
		if _, _, err := st.Create(fmt.Sprintf("t%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := st.Create("one-too-many", nil); !errors.Is(err, ErrTooManyTokens) {
		t.Errorf("token %d: %v, want ErrTooManyTokens", MaxTokens+1, err)
	}
	if _, _, err := st.Create("laptop", nil); err != nil {
		t.Errorf("replacing one in a full list: %v", err)
	}
	st.Create(DefaultName, nil)
	n, err := st.RevokeAll()
	if err != nil || n != MaxTokens+1 {
		t.Errorf("RevokeAll = %d, %v; want %d", n, err, MaxTokens+1)
	}
	if l, err := st.List(); err != nil || len(l) != 0 {
		t.Errorf("after RevokeAll: %v, %v", l, err)
	}
}

// TestNamedTokensOverHTTP: a named token authenticates with its scopes; a
// revoke takes effect at the next request; each token's last use and
// address are written, at most once a minute.
func TestNamedTokensOverHTTP(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	path := filepath.Join(dir, "token")
	st := NewStore(path)
	st.Now = clock.Now
	def, _, _ := st.Create(DefaultName, nil)
	laptop, _, _ := st.Create("laptop", nil)
	power, _, _ := st.Create("kitchen", []string{ScopeRead, ScopePower})
	s := newServer(t, Options{TokenPath: path, Now: clock.Now})
	from := clientFrom("127.0.0.7")

	for _, tc := range []struct{ tok, caller, scopes string }{
		{def, "default", "read,play,library"}, {laptop, "laptop", "read,play"}, {power, "kitchen", "read,power"},
	} {
		r := s.do(from, "POST", "/mcp", "", "Bearer "+tc.tok, "", []byte("{}"))
		if r.status != 200 || r.caller != tc.caller || r.scopes != tc.scopes {
			t.Errorf("%s: status %d caller %q scopes %q, want 200 %s %s", tc.caller, r.status, r.caller, r.scopes, tc.caller, tc.scopes)
		}
	}
	s.g.Flush()
	uses := func() map[string]TokenInfo {
		t.Helper()
		l, err := st.List()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]TokenInfo{}
		for _, i := range l {
			m[i.Name] = i
		}
		return m
	}
	t0 := clock.Now()
	for _, name := range []string{"default", "laptop", "kitchen"} {
		if u := uses()[name]; !u.LastUsed.Equal(t0) || u.LastAddr != "127.0.0.7" {
			t.Errorf("%s: last used %v from %q, want %v from 127.0.0.7", name, u.LastUsed, u.LastAddr, t0)
		}
	}
	// Within the minute nothing is written; after it, the new use is.
	before, _ := os.ReadFile(st.Path)
	clock.Advance(30 * time.Second)
	for range 20 {
		s.do(clientFrom("127.0.0.8"), "POST", "/mcp", "", "Bearer "+laptop, "", nil)
	}
	s.g.Flush()
	if after, _ := os.ReadFile(st.Path); string(after) != string(before) {
		t.Error("the tokens file was written again within the minute")
	}
	clock.Advance(31 * time.Second)
	s.do(clientFrom("127.0.0.8"), "POST", "/mcp", "", "Bearer "+laptop, "", nil)
	s.g.Flush()
	if u := uses()["laptop"]; !u.LastUsed.Equal(clock.Now()) || u.LastAddr != "127.0.0.8" {
		t.Errorf("laptop a minute later: %v from %q", u.LastUsed, u.LastAddr)
	}
	// A new default token starts unused.
	st.Create(DefaultName, nil)
	if u := uses()["default"]; !u.LastUsed.IsZero() {
		t.Errorf("a new default token shows the old one's use: %v", u.LastUsed)
	}

	// Revoke: refused at the next request, the others still work.
	if err := st.Revoke("laptop"); err != nil {
		t.Fatal(err)
	}
	if r := s.do(from, "POST", "/mcp", "", "Bearer "+laptop, "", nil); r.status != 401 {
		t.Errorf("a revoked token: %d", r.status)
	}
	if r := s.do(from, "POST", "/mcp", "", "Bearer "+power, "", nil); r.status != 200 {
		t.Errorf("the kitchen token after revoking laptop: %d", r.status)
	}
	// A use recorded after a revoke does not bring the token back.
	if err := s.g.store.recordUse("laptop", sum(laptop), clock.Now(), "127.0.0.9"); err != nil {
		t.Fatal(err)
	}
	if _, ok := uses()["laptop"]; ok {
		t.Error("recording a use brought a revoked token back")
	}
	if _, err := st.RevokeAll(); err != nil {
		t.Fatal(err)
	}
	if r := s.do(from, "POST", "/mcp", "", "Bearer "+power, "", nil); r.status != 401 {
		t.Errorf("after revoke --all: %d", r.status)
	}
}

// TestReloadSameSize: a file replaced by one of the same size within the
// same second is still read again.
func TestReloadSameSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	st := NewStore(path)
	a, _, _ := st.Create("same", nil)
	s := newServer(t, Options{TokenPath: path})
	if s.status("POST", "/mcp", "", "Bearer "+a, "", nil) != 200 {
		t.Fatal("first token refused")
	}
	fi1, _ := os.Stat(st.Path)
	b, _, _ := st.Create("same", nil)
	fi2, _ := os.Stat(st.Path)
	if fi1.Size() != fi2.Size() {
		t.Logf("sizes differ (%d, %d): the test is weaker", fi1.Size(), fi2.Size())
	}
	if s.status("POST", "/mcp", "", "Bearer "+a, "", nil) != 401 || s.status("POST", "/mcp", "", "Bearer "+b, "", nil) != 200 {
		t.Error("replacement not picked up")
	}
}

// TestTokensFileTolerance: entries that cannot authenticate are dropped,
// a damaged file authenticates no named token and is said to be damaged.
func TestTokensFileTolerance(t *testing.T) {
	good := sum("x")
	f, err := parseTokens([]byte(`{"version":1,"tokens":[
		{"name":"ok","sha256":"` + good + `","scopes":["read","admin","power"]},
		{"name":"ok","sha256":"` + good + `","scopes":["read"]},
		{"name":"default","sha256":"` + good + `","scopes":["read"]},
		{"name":"Bad","sha256":"` + good + `"},
		{"name":"short","sha256":"abcd"},
		{"name":"upper","sha256":"` + strings.ToUpper(good) + `"}],
		"default":{"sha256":"nope"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tokens) != 1 || f.Tokens[0].Name != "ok" || !slices.Equal(f.Tokens[0].Scopes, []string{"read", "power"}) || f.Default != nil {
		t.Errorf("parsed %+v", f)
	}
	for _, bad := range []string{`{`, `{"version":2,"tokens":[]}`, `[]`} {
		if _, err := parseTokens([]byte(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	dir := t.TempDir()
	st := NewStore(filepath.Join(dir, "token"))
	os.WriteFile(st.Path, []byte(strings.Repeat(" ", maxTokensFileBytes+1)), 0o600)
	if _, err := st.List(); err == nil {
		t.Error("an oversized tokens file accepted")
	}
	if _, _, err := st.Create("x", nil); err == nil {
		t.Error("a token added to an oversized tokens file")
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"version":1,"tokens":[{"name":"ok","sha256":"` + sum("x") + `","scopes":["read"]}]}`))
	f.Add([]byte(`{"version":1,"tokens":null,"default":{"sha256":"` + sum("y") + `"}}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		tf, err := parseTokens(b)
		if err != nil {
			return
		}
		if len(tf.Tokens) > MaxTokens {
			t.Fatalf("%d tokens kept", len(tf.Tokens))
		}
		seen := map[string]bool{}
		for _, tok := range tf.Tokens {
			if ValidName(tok.Name) != nil || tok.Name == DefaultName || seen[tok.Name] || !validSum(tok.SHA256) || len(tok.LastAddr) > maxAddrLen {
				t.Fatalf("kept %+v", tok)
			}
			seen[tok.Name] = true
			for _, s := range tok.Scopes {
				if !slices.Contains(Scopes, s) {
					t.Fatalf("kept scope %q", s)
				}
			}
		}
		if _, err := json.Marshal(tf); err != nil {
			t.Fatal(err)
		}
	})
}
