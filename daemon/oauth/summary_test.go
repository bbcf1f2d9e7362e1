package oauth

import (
	"encoding/json"
	"testing"
	"time"
)

// TestSummaries: each client joined with its grants, in the clients'
// order: the scopes and redirect hosts of all of them once each, the
// latest sign-in end, request and exchange; a registration no sign-in
// followed is not signed in and expires an hour after it was made.
func TestSummaries(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	clients := []Client{
		{ID: "cabinet-a", Name: "A", Kind: KindRegistered, Created: t0, LastUsed: at(30)},
		{ID: "https://b.example/c.json", Name: "B", Kind: KindMetadata, Created: t0, LastUsed: at(5)},
		{ID: "cabinet-c", Name: "C", Kind: KindRegistered, Created: at(10)},
	}
	grants := []Grant{
		{ID: "g1", ClientID: "cabinet-a", Scopes: []string{"read", "play"}, RedirectHost: "claude.ai", Created: t0,
			Expires: t0.Add(SessionLife), LastRequest: at(20), LastExchange: at(1)},
		{ID: "g2", ClientID: "https://b.example/c.json", Scopes: []string{"read"}, RedirectHost: "b.example", Created: at(5),
			Expires: at(5).Add(SessionLife), LastExchange: at(5)},
		{ID: "g3", ClientID: "cabinet-a", Scopes: []string{"play", "library"}, RedirectHost: "claude.ai", Created: at(2),
			Expires: at(2).Add(SessionLife), LastRequest: at(30), LastExchange: at(3)},
		{ID: "g4", ClientID: "cabinet-gone", Scopes: []string{"power"}, Created: t0, Expires: t0.Add(SessionLife)},
	}
	ptr := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		name string
		want Summary
	}{
		{"two sign-ins", Summary{ID: "cabinet-a", Name: "A", Kind: KindRegistered, RedirectHosts: []string{"claude.ai"},
			Scopes: []string{"read", "play", "library"}, Created: t0, Expires: at(30).Add(IdleClientTTL),
			SignInExpires: ptr(at(2).Add(SessionLife)), LastRequest: ptr(at(30)), LastExchange: ptr(at(3)), SignIns: 2}},
		{"signed in, no request yet", Summary{ID: "https://b.example/c.json", Name: "B", Kind: KindMetadata,
			RedirectHosts: []string{"b.example"}, Scopes: []string{"read"}, Created: t0, Expires: at(5).Add(IdleClientTTL),
			SignInExpires: ptr(at(5).Add(SessionLife)), LastExchange: ptr(at(5)), SignIns: 1}},
		{"registered only", Summary{ID: "cabinet-c", Name: "C", Kind: KindRegistered, RedirectHosts: []string{}, Scopes: []string{},
			Created: at(10), Expires: at(10).Add(UnusedClientTTL)}},
	}
	got := Summaries(clients, grants)
	if len(got) != len(tests) {
		t.Fatalf("%d summaries, want %d (one per client, in order)", len(got), len(tests))
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, w := summaryJSON(t, got[i]), summaryJSON(t, tt.want)
			if g != w {
				t.Errorf("got  %s\nwant %s", g, w)
			}
			if got[i].SignedIn() != (tt.want.SignIns > 0) {
				t.Errorf("SignedIn = %v", got[i].SignedIn())
			}
		})
	}
	if s := Summaries(nil, grants); s == nil || len(s) != 0 {
		t.Errorf("no clients: %#v, want an empty list (JSON [])", s)
	}
}

func summaryJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
