package romm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestAuthMappingPerVersion: RomM up to 5.1 answers 403 for a missing token and for a missing
// scope; from 5.2 a missing token is 401 and 403 means the scope is missing.
func TestAuthMappingPerVersion(t *testing.T) {
	tests := []struct {
		name       string
		version    string
		sendToken  string          // what the client sends
		scopes     map[string]bool // what the fake's token has
		wantStatus int
		wantErr    error
		wantText   []string
	}{
		{"5.1 wrong token is 403", "5.1.0", "rmm_wrong", nil, 403, ErrUnauthorized,
			[]string{"RomM refused the token", "Profile → Client tokens", "cabinet.romm.token_file", "roms.read"}},
		{"5.1 missing scope is 403 too", "5.1.0", testToken, map[string]bool{"platforms.read": true}, 403, ErrUnauthorized,
			[]string{"answers 403 both", "roms.read"}},
		{"4.8 wrong token", "4.8.0", "rmm_wrong", nil, 403, ErrUnauthorized, []string{"RomM refused the token"}},
		{"5.3 wrong token is 401", "5.3.1", "rmm_wrong", nil, 401, ErrUnauthorized,
			[]string{"RomM refused the token", "roms.read, platforms.read, collections.read"}},
		{"5.3 no token is 401", "5.3.1", "", nil, 401, ErrUnauthorized, []string{"cabinet.romm.token is empty"}},
		{"5.3 missing scope is a scope error", "5.3.1", testToken, map[string]bool{"platforms.read": true}, 403, ErrMissingScope,
			[]string{"lacks the scope roms.read", "GET /api/roms", "Client tokens"}},
		{"development missing scope", "development", testToken, map[string]bool{}, 403, ErrMissingScope, []string{"roms.read"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.scopes = tt.scopes
			c := newClient(t, srv.URL, func(c *Config) { c.Token = tt.sendToken })
			_, err := c.SearchROMs(context.Background(), SearchQuery{})
			mustErr(t, err, tt.wantErr)
			for _, s := range tt.wantText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if tt.wantErr == ErrMissingScope {
				var se *ScopeError
				if !errors.As(err, &se) || se.Scope != "roms.read" {
					t.Errorf("errors.As ScopeError = %+v, want scope roms.read", se)
				}
				if errors.Is(err, ErrUnauthorized) {
					t.Errorf("a scope error must not also be ErrUnauthorized")
				}
			}
			var ae *AuthError
			if tt.wantErr == ErrUnauthorized && (!errors.As(err, &ae) || ae.Status != tt.wantStatus) {
				t.Errorf("AuthError = %+v, want status %d", ae, tt.wantStatus)
			}
		})
	}
}

func TestProbeScopes(t *testing.T) {
	tests := []struct {
		version string
		want    map[string]error // nil value: works
	}{
		{"5.3.1", map[string]error{"platforms.read": nil, "roms.read": ErrMissingScope, "collections.read": ErrMissingScope}},
		{"5.1.0", map[string]error{"platforms.read": nil, "roms.read": ErrUnauthorized, "collections.read": ErrUnauthorized}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.scopes = map[string]bool{"platforms.read": true}
			c := newClient(t, srv.URL)
			got := c.ProbeScopes(context.Background())
			if len(got) != len(tt.want) {
				t.Fatalf("ProbeScopes = %v, want keys of %v", got, tt.want)
			}
			for scope, want := range tt.want {
				err, ok := got[scope]
				switch {
				case !ok:
					t.Errorf("%s missing from the probe", scope)
				case want == nil && err != nil:
					t.Errorf("%s: %v, want it to work", scope, err)
				case want != nil && !errors.Is(err, want):
					t.Errorf("%s: %v, want %v", scope, err, want)
				}
			}
			if q := f.last("/api/roms").URL.Query(); q.Get("limit") != "1" || q.Get("with_char_index") != "false" {
				t.Errorf("roms probe query %q is not the cheap one", f.last("/api/roms").URL.RawQuery)
			}
			for _, r := range f.requests {
				if r.Method != "GET" {
					t.Errorf("probe sent %s %s: probes read only", r.Method, r.URL.Path)
				}
			}
		})
	}
}

func TestProbeScopesVersionFailure(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.version = 53
	c := newClient(t, srv.URL)
	got := c.ProbeScopes(context.Background())
	for _, s := range []string{"platforms.read", "roms.read", "collections.read"} {
		if !errors.Is(got[s], ErrBadData) {
			t.Errorf("%s: %v, want the heartbeat's error", s, got[s])
		}
	}
}
