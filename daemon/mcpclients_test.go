package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/oauth"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// writeOAuthFile writes the clients' file as the authorization server
// keeps it (oauth.json, version 1): Claude signed in for 30 days with an
// access token for tok, Example App signed in until soon, a registration
// no sign-in followed, and sign-in locked after wrong PINs.
func writeOAuthFile(t *testing.T, path, tok string, soon time.Time) {
	t.Helper()
	sum := sha256.Sum256([]byte(tok))
	created := rigEpoch.Add(-time.Hour)
	type obj = map[string]any
	f := obj{
		"version": 1,
		"clients": []obj{
			{"id": "cabinet-claude", "name": "Claude", "kind": oauth.KindRegistered, "redirect_uris": []string{"https://claude.ai/api/mcp/auth_callback"},
				"created": created, "last_used": created},
			{"id": "https://app.example.com/client.json", "name": "Example App", "kind": oauth.KindMetadata,
				"redirect_uris": []string{"https://app.example.com/cb"}, "created": created, "last_used": created},
			{"id": "cabinet-pending", "name": "Pending", "kind": oauth.KindRegistered, "redirect_uris": []string{"http://127.0.0.1/cb"},
				"created": rigEpoch.Add(-10 * time.Minute)},
		},
		"grants": []obj{
			{"id": "g-claude", "client_id": "cabinet-claude", "scopes": []string{"read", "play"}, "redirect_host": "claude.ai",
				"created": created, "expires": created.Add(oauth.SessionLife), "last_exchange": created,
				"access": []obj{{"sha256": hex.EncodeToString(sum[:]), "expires": rigEpoch.Add(oauth.AccessLife)}}, "refresh": "r1"},
			{"id": "g-app", "client_id": "https://app.example.com/client.json", "scopes": []string{"read"}, "redirect_host": "app.example.com",
				"created": created, "expires": soon, "last_exchange": created, "access": []obj{}, "refresh": "r2"},
		},
		"limits": obj{"day": "2026-12-01", "wrong_pins": oauth.WrongPINsPerDay, "locked": true},
	}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mcpClientsAttrs are the sensor's attributes as HA reads them.
type mcpClientsAttrs struct {
	Names   []string `json:"names"`
	Clients []struct {
		Name        string   `json:"name"`
		ID          string   `json:"id"`
		Kind        string   `json:"kind"`
		Scopes      []string `json:"scopes"`
		LastRequest *string  `json:"last_request"`
		Expires     *string  `json:"expires"`
	} `json:"clients"`
	Locked   bool `json:"locked"`
	Unlisted int  `json:"unlisted"`
}

// TestMCPClientsSensor: with sign-in on, the daemon announces
// sensor.batocera_mcp_clients and publishes the clients signed in (not a
// bare registration) and the lock at start; a request with a client's
// token, which the authorization server records in the file, shows as its
// last request a moment later; a sign-in that ends drops out at the next
// poll without the file changing; `cabinet clients revoke` and `unlock`,
// run by another process, show at the next poll.
func TestMCPClientsSensor(t *testing.T) {
	const tok = oauth.AccessPrefix + "mcp-clients-test-token"
	soon := rigEpoch.Add(5 * time.Minute)
	var path string
	r := newRig(t, func(c *Config) {
		c.HTTP.OAuth = &OAuth{PublicURL: "https://cabinet.example:8717"}
		c.Rules.Settings.MCPClients = true // what cmd/cabinet derives from HTTP.OAuth
		path = c.Layout.OAuth()
	}, func(r *rig) { writeOAuthFile(t, path, tok, soon) })
	s := r.settings
	state, attrTopic := s.StateTopic(haentities.MCPClientsKey), s.AttributesTopic(haentities.MCPClientsKey)
	r.retained(s.ConfigTopic(haentities.ComponentSensor, haentities.MCPClientsKey), func(v string) bool {
		return strings.Contains(v, `"entity_category":"diagnostic"`) && strings.Contains(v, `"json_attributes_topic":"`+attrTopic+`"`)
	})
	attrs := func(ok func(a mcpClientsAttrs) bool) mcpClientsAttrs {
		t.Helper()
		var a mcpClientsAttrs
		r.retained(attrTopic, func(v string) bool {
			a = mcpClientsAttrs{}
			return json.Unmarshal([]byte(v), &a) == nil && ok(a)
		})
		return a
	}

	r.retained(state, func(v string) bool { return v == "2" })
	a := attrs(func(a mcpClientsAttrs) bool { return len(a.Clients) == 2 })
	if strings.Join(a.Names, ",") != "Claude,Example App" || !a.Locked || a.Unlisted != 0 {
		t.Errorf("at start: %+v, want Claude and Example App (not the bare registration), locked", a)
	}
	if c := a.Clients[0]; c.ID != "cabinet-claude" || c.Kind != oauth.KindRegistered || strings.Join(c.Scopes, " ") != "read play" ||
		c.LastRequest != nil || c.Expires == nil || *c.Expires != rigEpoch.Add(-time.Hour).Add(oauth.SessionLife).Format(time.RFC3339) {
		t.Errorf("Claude at start: %+v", c)
	}

	// The daemon's own server: a request with Claude's token is recorded
	// in the file, and the sensor follows once the burst has settled.
	changed := len(r.logs.entries(msgMCPClientsChanged))
	at := r.clock.Now().Format(time.RFC3339)
	httpSession(t, "http://"+r.d.HTTPAddr()+"/mcp", tok)
	r.waitLog("the server's change told", func() bool { return len(r.logs.entries(msgMCPClientsChanged)) > changed })
	r.clock.Advance(mcpClientsSettle)
	attrs(func(a mcpClientsAttrs) bool {
		return len(a.Clients) == 2 && a.Clients[0].LastRequest != nil && *a.Clients[0].LastRequest == at
	})

	// Example App's sign-in ends: no file changes, the poll sees it. (The
	// file is dated an hour back, as a file written long ago: one changed
	// within seconds of a look is read again at the next one.)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "Example App's sign-in over", r.broker.Changed, func() (bool, string) {
		b, _ := r.broker.Retained(state)
		if string(b) == "1" {
			return true, ""
		}
		r.clock.Advance(mcpClientsPoll)
		return false, "mcp_clients is " + string(b)
	})
	attrs(func(a mcpClientsAttrs) bool { return strings.Join(a.Names, ",") == "Claude" && a.Locked })

	// `cabinet clients unlock` and `revoke`, another process: the next
	// poll's look at the file sees them (the next expiry is 45 min away).
	if _, err := oauth.Unlock(path, r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := oauth.Revoke(path, "cabinet-claude", r.clock.Now()); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(mcpClientsPoll)
	r.retained(attrTopic, func(v string) bool { return v == `{"names":[],"clients":[],"locked":false,"unlisted":0}` })
	r.retained(state, func(v string) bool { return v == "0" })
	validate(t, r.capture())
}

// TestMCPClientsSensorOff: without sign-in the sensor is not announced and
// gets no state, even with a clients' file in the state dir.
func TestMCPClientsSensorOff(t *testing.T) {
	var path string
	r := newRig(t, func(c *Config) { path = c.Layout.OAuth() }, func(r *rig) {
		writeOAuthFile(t, path, oauth.AccessPrefix+"x", rigEpoch.Add(time.Hour))
	})
	s := r.settings
	r.retained(s.AvailabilityTopic(), func(v string) bool { return v == haentities.Online })
	r.retained(s.StateTopic(haentities.PowerState), func(v string) bool { return v != "" })
	r.clock.Advance(mcpClientsPoll)
	for _, topic := range []string{s.ConfigTopic(haentities.ComponentSensor, haentities.MCPClientsKey),
		s.StateTopic(haentities.MCPClientsKey), s.AttributesTopic(haentities.MCPClientsKey)} {
		if b, ok := r.broker.Retained(topic); ok {
			t.Errorf("%s = %q with sign-in off", topic, b)
		}
	}
}
