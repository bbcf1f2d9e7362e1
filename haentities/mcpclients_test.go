package haentities

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenMCPClients are the sign-in states whose payloads are pinned: nobody signed in, two clients
// (a registered one that has made requests, a metadata document's that has not yet), locked after
// wrong PINs, and a hostile client.
func goldenMCPClients() []MCPClientsState {
	ends := time.Date(2026, 2, 1, 20, 0, 0, 0, time.UTC)
	two := []MCPClient{
		{ID: "cabinet-3f9a1c", Name: "Claude", Kind: "registered", Scopes: []string{"read", "play"},
			LastRequest: time.Date(2026, 1, 2, 20, 59, 0, 0, time.UTC), Expires: ends},
		{ID: "https://app.example.com/oauth/client.json", Name: "Example App", Kind: "metadata", Scopes: []string{"read"}, Expires: ends},
	}
	return []MCPClientsState{
		{},
		{Clients: two},
		{Clients: two[:1], Locked: true},
		{Clients: []MCPClient{{ID: "cabinet-\x1b[31mx", Name: "\u202eevil\x00\n" + strings.Repeat("name ", 30), Kind: "registered\u200b",
			Scopes: []string{"read", "", "play\u2066"}}, {ID: "cabinet-y", Name: " \u200b "}}},
	}
}

func mcpClientsStates(s Settings) []Message {
	var out []Message
	for _, st := range goldenMCPClients() {
		out = append(out, MCPClientsStates(s, st, goldenNow)...)
	}
	return out
}

func TestGoldenMCPClients(t *testing.T) {
	checkGolden(t, "states_mcpclients", render(mcpClientsStates(daemonSettings())))
}

// TestMCPClientsEntityID: the name makes HA derive sensor.batocera_mcp_clients with the default device
// name, and the unique_id follows the catalogue's pattern.
func TestMCPClientsEntityID(t *testing.T) {
	es := MCPClientsEntities()
	if len(es) != 1 {
		t.Fatalf("%d entities, want 1", len(es))
	}
	e := es[0]
	if id := e.Component + "." + haSlug("Batocera "+e.Name); id != "sensor.batocera_mcp_clients" || id != e.Component+".batocera_"+e.Key {
		t.Errorf("HA derives %s from the name %q (key %s), want sensor.batocera_mcp_clients", id, e.Name, e.Key)
	}
	if got := (Settings{ID: "0a1b2c3d"}).UniqueID(e.Key); got != "batocera_0a1b2c3d_mcp_clients" {
		t.Errorf("unique_id %s", got)
	}
}

// TestMCPClientsConfig: a diagnostic sensor counting clients, with attributes and the availability
// topic; published on change, so no expire_after, and no unit or device class (a count).
func TestMCPClientsConfig(t *testing.T) {
	s := daemonSettings()
	m := Config(s, MCPClientsEntities()[0], goldenNow)
	if m.Topic != "homeassistant/sensor/batocera_0a1b2c3d/mcp_clients/config" || !m.Retain || m.QoS != 1 || m.Kind != KindDiscovery {
		t.Fatalf("%s: retain=%v qos=%d kind=%v", m.Topic, m.Retain, m.QoS, m.Kind)
	}
	var cfg map[string]any
	if err := json.Unmarshal(m.Payload, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "MCP clients", "unique_id": "batocera_0a1b2c3d_mcp_clients",
		"state_topic": "batocera/0a1b2c3d/mcp_clients", "json_attributes_topic": "batocera/0a1b2c3d/mcp_clients/attributes",
		"availability_topic": "batocera/0a1b2c3d/status", "state_class": "measurement", "entity_category": "diagnostic",
		"icon": "mdi:account-key", "qos": float64(1)}
	for k, v := range want {
		if got, _ := json.Marshal(cfg[k]); string(got) != mustJSON(v) {
			t.Errorf("%s = %s, want %s", k, got, mustJSON(v))
		}
	}
	for _, absent := range []string{"command_topic", "unit_of_measurement", "device_class", "expire_after", "options"} {
		if _, ok := cfg[absent]; ok {
			t.Errorf("has %s", absent)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestMCPClientsDiscovery: sign-in on announces the sensor from the daemon; off, it leaves the
// daemon's set (the outbox clears its config) and its states are not built; a hook never announces
// nor clears it.
func TestMCPClientsDiscovery(t *testing.T) {
	tests := []struct {
		name            string
		daemon, on      bool
		announced, kept bool
	}{
		{"daemon, on", true, true, true, false},
		{"daemon, off", true, false, false, false},
		{"hook, on", false, true, false, true},
		{"hook, off", false, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := goldenSettings()
			s.Daemon, s.MCPClients = tt.daemon, tt.on
			topic := s.ConfigTopic(ComponentSensor, MCPClientsKey)
			if got := slices.Contains(DiscoveryTopics(s), topic); got != tt.announced {
				t.Errorf("announced %v, want %v", got, tt.announced)
			}
			if got := slices.Contains(KeptTopics(s), topic); got != tt.kept {
				t.Errorf("kept %v, want %v", got, tt.kept)
			}
			if got := len(MCPClientsStates(s, MCPClientsState{}, goldenNow)); (got > 0) != tt.announced {
				t.Errorf("MCPClientsStates gave %d messages with announced=%v", got, tt.announced)
			}
		})
	}
}

// mcpClientsFixture is n signed-in clients, each id padded to idLen bytes.
func mcpClientsFixture(n, idLen int) []MCPClient {
	out := make([]MCPClient, n)
	for i := range out {
		id := fmt.Sprintf("https://c%02d.example/", i)
		id += strings.Repeat("x", max(idLen-len(id), 0))
		out[i] = MCPClient{ID: id, Name: fmt.Sprintf("Client %02d", i), Kind: "metadata", Scopes: []string{"read"},
			Expires: time.Date(2026, 2, 1, 20, 0, 0, 0, time.UTC)}
	}
	return out
}

// TestMCPClientsStates checks the count and the attributes HA gets: every key always there, text
// cleaned, and the list bounded (64 clients, 12 KiB) with the clients left out counted.
func TestMCPClientsStates(t *testing.T) {
	claude := MCPClient{ID: "cabinet-3f9a1c", Name: "Claude", Kind: "registered", Scopes: []string{"read", "play"},
		LastRequest: time.Date(2026, 1, 2, 20, 59, 0, 0, time.UTC), Expires: time.Date(2026, 2, 1, 20, 0, 0, 0, time.UTC)}
	tests := []struct {
		name      string
		st        MCPClientsState
		wantState string
		wantAttrs string // "" checks only the bounds below
		listed    int
		unlisted  int
	}{
		{"nobody", MCPClientsState{}, "0", `{"names":[],"clients":[],"locked":false,"unlisted":0}`, 0, 0},
		{"locked", MCPClientsState{Locked: true}, "0", `{"names":[],"clients":[],"locked":true,"unlisted":0}`, 0, 0},
		{"one", MCPClientsState{Clients: []MCPClient{claude}}, "1",
			`{"names":["Claude"],"clients":[{"name":"Claude","id":"cabinet-3f9a1c","kind":"registered","scopes":["read","play"],` +
				`"last_request":"2026-01-02T20:59:00Z","expires":"2026-02-01T20:00:00Z"}],"locked":false,"unlisted":0}`, 1, 0},
		{"no request yet, no expiry known", MCPClientsState{Clients: []MCPClient{{ID: "cabinet-a", Name: "A", Kind: "registered"}}}, "1",
			`{"names":["A"],"clients":[{"name":"A","id":"cabinet-a","kind":"registered","scopes":[],"last_request":null,` +
				`"expires":null}],"locked":false,"unlisted":0}`, 1, 0},
		{"hostile text", MCPClientsState{Clients: []MCPClient{{ID: "cabinet-\x1b[31mx\u202e", Name: "\u202eevil\x00\n  name\u200b",
			Kind: "registered\u2066", Scopes: []string{"read", "", " ", "play\x00", "a", "b", "c", "d", "e", "f", "g"}}}}, "1",
			`{"names":["evil name"],"clients":[{"name":"evil name","id":"cabinet-[31mx","kind":"registered",` +
				`"scopes":["read","play","a","b","c","d","e","f"],"last_request":null,"expires":null}],"locked":false,"unlisted":0}`, 1, 0},
		{"no name", MCPClientsState{Clients: []MCPClient{{ID: "cabinet-b", Name: "\u200b \t"}}}, "1",
			`{"names":["Unnamed client"],"clients":[{"name":"Unnamed client","id":"cabinet-b","kind":"","scopes":[],` +
				`"last_request":null,"expires":null}],"locked":false,"unlisted":0}`, 1, 0},
		{"a long name is cut", MCPClientsState{Clients: []MCPClient{{ID: "cabinet-c", Name: strings.Repeat("ア", 100)}}}, "1",
			`{"names":["` + strings.Repeat("ア", 63) + `…"],"clients":[{"name":"` + strings.Repeat("ア", 63) + `…","id":"cabinet-c",` +
				`"kind":"","scopes":[],"last_request":null,"expires":null}],"locked":false,"unlisted":0}`, 1, 0},
		{"64 short clients all listed", MCPClientsState{Clients: mcpClientsFixture(64, 0)}, "64", "", 64, 0},
		{"more than 64: the count is all of them", MCPClientsState{Clients: mcpClientsFixture(70, 0)}, "70", "", 64, 6},
		{"long ids: the list stops at 12 KiB", MCPClientsState{Clients: mcpClientsFixture(64, 512)}, "64", "", 19, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := daemonSettings()
			msgs := MCPClientsStates(s, tt.st, goldenNow)
			if len(msgs) != 2 {
				t.Fatalf("%d messages, want 2", len(msgs))
			}
			for _, m := range msgs {
				if !m.Retain || m.QoS != 1 || m.Kind != KindState || len(m.Payload) == 0 {
					t.Errorf("%s: retain=%v qos=%d kind=%v payload %q", m.Topic, m.Retain, m.QoS, m.Kind, m.Payload)
				}
			}
			if msgs[0].Topic != s.StateTopic(MCPClientsKey) || msgs[1].Topic != s.AttributesTopic(MCPClientsKey) {
				t.Errorf("topics %s, %s", msgs[0].Topic, msgs[1].Topic)
			}
			if got := string(msgs[0].Payload); got != tt.wantState {
				t.Errorf("state %q, want %q", got, tt.wantState)
			}
			attrs := string(msgs[1].Payload)
			if tt.wantAttrs != "" && attrs != tt.wantAttrs {
				t.Errorf("attributes\n%s\nwant\n%s", attrs, tt.wantAttrs)
			}
			var a struct {
				Names    []string         `json:"names"`
				Clients  []map[string]any `json:"clients"`
				Unlisted int              `json:"unlisted"`
			}
			if err := json.Unmarshal(msgs[1].Payload, &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Names) != tt.listed || len(a.Clients) != tt.listed || a.Unlisted != tt.unlisted {
				t.Errorf("listed %d names, %d clients, unlisted %d; want %d listed, %d unlisted", len(a.Names), len(a.Clients),
					a.Unlisted, tt.listed, tt.unlisted)
			}
			if len(attrs) > maxMCPClientsAttrSize {
				t.Errorf("attributes are %d bytes, over %d", len(attrs), maxMCPClientsAttrSize)
			}
		})
	}
}
