package romm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"4.8.0", Version{Major: 4, Minor: 8, Raw: "4.8.0"}, false},
		{"5.0.0", Version{Major: 5, Raw: "5.0.0"}, false},
		{"5.1.0-beta.3", Version{Major: 5, Minor: 1, Pre: "beta.3", Raw: "5.1.0-beta.3"}, false},
		{"5.2.0", Version{Major: 5, Minor: 2, Raw: "5.2.0"}, false},
		{"5.3.1", Version{Major: 5, Minor: 3, Patch: 1, Raw: "5.3.1"}, false},
		{"5.4.0", Version{Major: 5, Minor: 4, Raw: "5.4.0"}, false},
		{"development", Version{Development: true, Raw: "development"}, false},
		{" v5.2 ", Version{Major: 5, Minor: 2, Raw: "v5.2"}, false},
		{"5.3.1+abc123", Version{Major: 5, Minor: 3, Patch: 1, Raw: "5.3.1+abc123"}, false},
		{"", Version{}, true},
		{"string", Version{}, true}, // what a schema mock sends
		{"<version>", Version{}, true},
		{"5", Version{}, true},
		{"5.x.1", Version{}, true},
		{"5.3.1.2", Version{}, true},
		{"-5.3.1", Version{}, true},
		{"+5.3.1", Version{}, true},
		{"5.3.1-", Version{}, true},
		{"5.3.1-beta 3", Version{}, true},
		{"5.3.1-bet\u202ea", Version{}, true},
		{"1234567.0.0", Version{}, true},
		{"5.3.1" + string(make([]byte, 70)), Version{}, true},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseVersion(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && got != tt.want {
			t.Errorf("ParseVersion(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestAtLeastAndVerified(t *testing.T) {
	tests := []struct {
		in                     string
		at48, at50, at51, at52 bool
		verified               bool
	}{
		{"4.7.0", false, false, false, false, false},
		{"4.8.0", true, false, false, false, true},
		{"5.0.0", true, true, false, false, true},
		{"5.1.0-beta.3", true, true, true, false, true}, // a pre-release has its minor's features
		{"5.2.0", true, true, true, true, true},
		{"5.3.1", true, true, true, true, true},
		{"5.4.0", true, true, true, true, false}, // best effort
		{"6.0.0", true, true, true, true, false},
		{"development", true, true, true, true, false},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.in)
		if err != nil {
			t.Fatalf("ParseVersion(%q): %v", tt.in, err)
		}
		got := [5]bool{v.AtLeast(4, 8), v.AtLeast(5, 0), v.AtLeast(5, 1), v.AtLeast(5, 2), v.Verified()}
		want := [5]bool{tt.at48, tt.at50, tt.at51, tt.at52, tt.verified}
		if got != want {
			t.Errorf("%s: AtLeast(4.8, 5.0, 5.1, 5.2), Verified = %v, want %v", tt.in, got, want)
		}
	}
}

func TestDecodeHeartbeat(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr error
	}{
		{"5.3.1", `{"SYSTEM":{"VERSION":"5.3.1","SHOW_SETUP_WIZARD":false},"TASKS":{}}`, "5.3.1", nil},
		{"development", `{"SYSTEM":{"VERSION":"development"}}`, "development", nil},
		{"number", `{"SYSTEM":{"VERSION":5.3}}`, "", ErrBadData},
		{"null", `{"SYSTEM":{"VERSION":null}}`, "", ErrBadData},
		{"object", `{"SYSTEM":{"VERSION":{"x":1}}}`, "", ErrBadData},
		{"garbage text", `{"SYSTEM":{"VERSION":"string"}}`, "", ErrBadData},
		{"no SYSTEM", `{"status":"ok"}`, "", ErrNotRomM},
		{"not JSON", `hello`, "", ErrBadData},
		{"array", `[1,2]`, "", ErrBadData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeHeartbeat([]byte(tt.body))
			if tt.wantErr != nil {
				mustErr(t, err, tt.wantErr)
				return
			}
			if err != nil || v.String() != tt.want {
				t.Fatalf("decodeHeartbeat = %v, %v; want %s", v, err, tt.want)
			}
		})
	}
}

func TestPrismHeartbeatIsRefusedClearly(t *testing.T) {
	// A schema-shaped heartbeat says VERSION "string": the gates cannot work, so it is an error
	// that names the problem rather than a guess.
	_, err := decodeHeartbeat(readTestdata(t, "prism_heartbeat.json"))
	mustErr(t, err, ErrBadData)
}

func TestVersionIsCached(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	c := newClient(t, srv.URL, func(c *Config) { c.Now = func() time.Time { return now } })
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Version(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.count("/api/heartbeat"); n != 1 {
		t.Fatalf("3 calls within the TTL made %d heartbeats, want 1", n)
	}
	if got := f.last("/api/heartbeat").Header.Get("Authorization"); got != "" {
		t.Errorf("heartbeat sent Authorization %q; it is open and should not carry the token", got)
	}
	f.version = "5.4.0"
	now = now.Add(versionTTL + time.Second)
	v, err := c.Version(ctx)
	if err != nil || v.Raw != "5.4.0" || f.count("/api/heartbeat") != 2 {
		t.Fatalf("after the TTL: %v, %v, %d heartbeats; want 5.4.0 from a second heartbeat", v, err, f.count("/api/heartbeat"))
	}
}

func TestVersionGates(t *testing.T) {
	tests := []struct {
		version string
		token   string
		call    func(*Client) error
		wantErr error
	}{
		{"4.7.0", testToken, func(c *Client) error { _, err := c.Platforms(context.Background()); return err }, ErrUnsupported},
		{"3.10.3", "", func(c *Client) error { _, err := c.Platforms(context.Background()); return err }, ErrUnsupported},
		{"4.5.0", "", func(c *Client) error { _, err := c.Platforms(context.Background()); return err }, nil}, // kiosk mode
		{"4.0.1", "", func(c *Client) error { _, err := c.Collections(context.Background(), "smart"); return err }, ErrUnsupported},
		{"4.8.0", testToken, func(c *Client) error {
			_, err := c.SearchROMs(context.Background(), SearchQuery{WithFiles: true})
			return err
		}, ErrUnsupported},
		{"4.9.0", testToken, func(c *Client) error {
			_, err := c.SearchROMs(context.Background(), SearchQuery{WithFiles: true})
			return err
		}, nil},
		{"4.5.0", "", func(c *Client) error {
			_, err := c.SearchROMs(context.Background(), SearchQuery{PlatformIDs: []int{1, 2}})
			return err
		}, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.token = tt.token
			c := newClient(t, srv.URL, func(c *Config) { c.Token = tt.token })
			err := tt.call(c)
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			mustErr(t, err, tt.wantErr)
			if !errors.Is(err, ErrUnsupported) || !containsAny(err.Error(), "upgrade", "read each ROM", "search each") {
				t.Errorf("refusal %q does not say what to do", err)
			}
		})
	}
}
