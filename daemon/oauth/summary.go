package oauth

import (
	"slices"
	"time"
)

// Summary is one client joined with its grants, as `cabinet clients list`
// shows it (its JSON is a line of `--json`) and Home Assistant's
// sensor.batocera_mcp_clients lists it. Name is what the client said:
// unverified.
type Summary struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	Kind          string    `json:"kind"`
	RedirectHosts []string  `json:"redirect_hosts"`
	Scopes        []string  `json:"scopes"` // of all its grants; empty: not signed in
	Created       time.Time `json:"created"`
	// Expires is when the client is dropped unless used again, or the end
	// of its latest sign-in when that is later (ClientExpiry).
	Expires time.Time `json:"expires"`
	// SignInExpires is when its latest sign-in ends (nil: not signed in):
	// it must then sign in again with a new PIN.
	SignInExpires *time.Time `json:"sign_in_expires"`
	LastRequest   *time.Time `json:"last_request"`
	LastExchange  *time.Time `json:"last_token_exchange"`
	SignIns       int        `json:"sign_ins"` // its grants
}

// SignedIn says whether the client holds a sign-in (a grant approved with
// the PIN and not expired), not just a registration.
func (s Summary) SignedIn() bool { return s.SignIns > 0 }

// Summaries joins each client with its grants (as Clients returns them,
// pruned), in the clients' order: the scopes of all of them, the latest
// expiry, request and exchange.
func Summaries(clients []Client, grants []Grant) []Summary {
	out := make([]Summary, 0, len(clients))
	for _, cl := range clients {
		s := Summary{ID: cl.ID, Name: cl.Name, Kind: cl.Kind, Created: cl.Created, Scopes: []string{}, RedirectHosts: []string{},
			Expires: ClientExpiry(cl)}
		var req, exch, ends time.Time
		for _, g := range grants {
			if g.ClientID != cl.ID {
				continue
			}
			s.SignIns++
			for _, sc := range g.Scopes {
				if !slices.Contains(s.Scopes, sc) {
					s.Scopes = append(s.Scopes, sc)
				}
			}
			if !slices.Contains(s.RedirectHosts, g.RedirectHost) {
				s.RedirectHosts = append(s.RedirectHosts, g.RedirectHost)
			}
			if g.Expires.After(ends) {
				ends = g.Expires
			}
			if g.LastRequest.After(req) {
				req = g.LastRequest
			}
			if g.LastExchange.After(exch) {
				exch = g.LastExchange
			}
		}
		if ends.After(s.Expires) {
			s.Expires = ends
		}
		s.SignInExpires, s.LastRequest, s.LastExchange = timeOrNil(ends), timeOrNil(req), timeOrNil(exch)
		out = append(out, s)
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
