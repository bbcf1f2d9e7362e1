package haentities

import (
	"strconv"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// MCPClientsKey is the MCP clients sensor's key (issue 28: the clients signed in through the
// cabinet's own OAuth server). A contract with users' HA configurations: never rename it. With the
// name "MCP clients" HA derives exactly sensor.batocera_mcp_clients with the default device name.
const MCPClientsKey = "mcp_clients"

// Bounds of mcp_clients' attributes: the oauth file holds at most 64 clients; names are what a
// client said (untrusted) and ids may be URLs of up to 512 bytes, so the list also stops before
// the attributes pass 12 KiB, well under the 16 KiB HA's recorder stores.
const (
	maxMCPClients         = 64
	maxMCPClientNameRunes = 64
	maxMCPClientIDRunes   = 512
	maxMCPClientScopes    = 8
	maxMCPWordRunes       = 32 // a scope, a kind
	maxMCPClientsAttrSize = 12 << 10
)

// MCPClientsEntities is the catalogue of the sign-in entities: how many MCP clients are signed in,
// a diagnostic (it says who can reach the cabinet's tools, not what the cabinet does). Published on
// change only, so no expire_after: the availability topic covers a stopped daemon.
func MCPClientsEntities() []Entity {
	return []Entity{
		{Key: MCPClientsKey, Component: ComponentSensor, Name: "MCP clients", Icon: "mdi:account-key", StateClass: "measurement",
			EntityCategory: "diagnostic", Attributes: true},
	}
}

// MCPClient is one MCP client signed in through the cabinet's OAuth server (the daemon fills it in
// from oauth.Summary). Every text comes from the clients' file and is cleaned.
type MCPClient struct {
	ID          string   // its client_id: generated, or the URL of its metadata document
	Name        string   // what it said its name is: unverified
	Kind        string   // oauth.KindRegistered or oauth.KindMetadata
	Scopes      []string // granted at sign-in
	LastRequest time.Time
	Expires     time.Time // when its sign-in ends and it must sign in again
}

// MCPClientsState is the sign-in as the household sees it.
type MCPClientsState struct {
	Clients []MCPClient // the clients signed in, in the file's order
	Locked  bool        // sign-in refused after too many wrong PINs, until `cabinet clients unlock`
}

type mcpClientAttrs struct {
	Name        string   `json:"name"`
	ID          string   `json:"id"`
	Kind        string   `json:"kind"`
	Scopes      []string `json:"scopes"`
	LastRequest *string  `json:"last_request"` // RFC 3339; null before the first
	Expires     *string  `json:"expires"`
}

// mcpClientsAttrs are mcp_clients' attributes: every key always there.
type mcpClientsAttrs struct {
	Names   []string         `json:"names"`
	Clients []mcpClientAttrs `json:"clients"`
	Locked  bool             `json:"locked"`
	// Unlisted counts the signed-in clients left out of names and clients to keep them small.
	Unlisted int `json:"unlisted"`
}

// MCPClientsStates builds the retained state of mcp_clients (how many clients are signed in) and
// its attributes, when s announces it; nil otherwise.
func MCPClientsStates(s Settings, st MCPClientsState, now time.Time) []Message {
	if !s.announces(MCPClientsKey) {
		return nil
	}
	a := mcpClientsAttrs{Names: []string{}, Clients: []mcpClientAttrs{}, Locked: st.Locked}
	size := len(marshal(mcpClientsAttrs{Unlisted: maxMCPClients}))
	for _, c := range st.Clients[:min(len(st.Clients), maxMCPClients)] {
		e := mcpClientAttr(c)
		n := len(marshal(e)) + len(marshal(e.Name)) + 2 // and a comma in each list
		if size+n > maxMCPClientsAttrSize {
			break
		}
		size += n
		a.Names, a.Clients = append(a.Names, e.Name), append(a.Clients, e)
	}
	a.Unlisted = len(st.Clients) - len(a.Clients)
	return []Message{
		retained(s.StateTopic(MCPClientsKey), []byte(strconv.Itoa(len(st.Clients))), KindState, now),
		retained(s.AttributesTopic(MCPClientsKey), marshal(a), KindState, now),
	}
}

func mcpClientAttr(c MCPClient) mcpClientAttrs {
	e := mcpClientAttrs{Name: untrusted.Clean(c.Name, maxMCPClientNameRunes), ID: untrusted.Clean(c.ID, maxMCPClientIDRunes),
		Kind: untrusted.Clean(c.Kind, maxMCPWordRunes), Scopes: []string{},
		LastRequest: optional(formatTime(c.LastRequest)), Expires: optional(formatTime(c.Expires))}
	if e.Name == "" {
		e.Name = "Unnamed client"
	}
	for _, sc := range c.Scopes {
		if sc = untrusted.Clean(sc, maxMCPWordRunes); sc != "" && len(e.Scopes) < maxMCPClientScopes {
			e.Scopes = append(e.Scopes, sc)
		}
	}
	return e
}
