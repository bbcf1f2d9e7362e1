package cimd

import (
	"crypto/x509"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestGetValid(t *testing.T) {
	r := newRig(t)
	f := r.fetcher(Options{})
	doc, err := f.Get(cabinettest.Context(t), claudeID)
	if err != nil {
		t.Fatal(err)
	}
	want := Document{
		ClientID:                claudeID,
		ClientName:              "Claude",
		ClientURI:               "https://claude.ai",
		LogoURI:                 "https://claude.ai/images/claude_app_icon.png",
		RedirectURIs:            []string{"https://claude.ai/api/mcp/auth_callback"},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: "none",
	}
	if !equalDocs(doc, want) {
		t.Errorf("Get = %+v, want %+v", doc, want)
	}
	req := r.request()
	if req.TLS == nil || req.TLS.ServerName != "claude.ai" {
		t.Errorf("TLS server name = %v, want claude.ai", req.TLS)
	}
	if req.Host != "claude.ai" || req.URL.Path != "/oauth/mcp-oauth-client-metadata" {
		t.Errorf("request for %s%s, want claude.ai/oauth/mcp-oauth-client-metadata", req.Host, req.URL.Path)
	}
	if got := req.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept = %q, want application/json", got)
	}
	if got := r.dials(); !slices.Equal(got, []string{claudeIP + ":443"}) {
		t.Errorf("dialed %v, want the checked address %s:443 only", got, claudeIP)
	}
}

func equalDocs(a, b Document) bool {
	return a.ClientID == b.ClientID && a.ClientName == b.ClientName && a.ClientURI == b.ClientURI &&
		a.LogoURI == b.LogoURI && slices.Equal(a.RedirectURIs, b.RedirectURIs) &&
		slices.Equal(a.GrantTypes, b.GrantTypes) && slices.Equal(a.ResponseTypes, b.ResponseTypes) &&
		a.TokenEndpointAuthMethod == b.TokenEndpointAuthMethod && a.Scope == b.Scope &&
		a.SoftwareID == b.SoftwareID && a.SoftwareVersion == b.SoftwareVersion
}

// TestGet runs one Get per case against the rig and checks the refusal, what the server saw,
// and where the dialer went.
func TestGet(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	status := func(code int, header ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			for i := 0; i+1 < len(header); i += 2 {
				w.Header().Set(header[i], header[i+1])
			}
			w.WriteHeader(code)
		}
	}
	for _, c := range []struct {
		name     string
		clientID string
		hosts    []string
		answer   []string // the resolver's addresses for the client_id's host; nil: the rig's
		down     []string // addresses whose dial fails
		handler  func(r *rig) http.HandlerFunc
		want     error  // nil: a document
		says     string // in the error
		hits     int64  // requests the server saw
		dialed   []string
	}{
		{name: "claude code", clientID: "https://claude.ai/oauth/claude-code-client-metadata", hits: 1},
		{name: "vscode", clientID: "https://vscode.dev/oauth/client-metadata.json", hits: 1, dialed: []string{"13.107.246.40:443"}},
		{name: "port", clientID: "https://claude.ai:8443/oauth/x", hits: 1, dialed: []string{claudeIP + ":8443"}},
		{name: "IPv4 dialed first", clientID: claudeID, answer: []string{"2607:6bc0::10", claudeIP}, hits: 1, dialed: []string{claudeIP + ":443"}},
		{name: "next address when one is down", clientID: claudeID, answer: []string{claudeIP, "2607:6bc0::10"}, down: []string{claudeIP + ":443"},
			hits: 1, dialed: []string{claudeIP + ":443", "[2607:6bc0::10]:443"}},
		{name: "+json type", clientID: claudeID, hits: 1,
			handler: func(r *rig) http.HandlerFunc {
				return r.serveDoc(nil, "Content-Type", "application/oauth-client-metadata+json; charset=utf-8")
			}},

		{name: "client_id mismatch", clientID: claudeID, want: ErrDocument, says: "not the URL it was fetched from", hits: 1,
			handler: func(r *rig) http.HandlerFunc {
				return r.serveDoc(func(m map[string]any) { m["client_id"] = "https://claude.ai/oauth/other" })
			}},
		{name: "no client_name", clientID: claudeID, want: ErrDocument, says: "no client_name", hits: 1,
			handler: func(r *rig) http.HandlerFunc { return r.serveDoc(func(m map[string]any) { delete(m, "client_name") }) }},
		{name: "no redirect_uris", clientID: claudeID, want: ErrDocument, says: "no redirect_uris", hits: 1,
			handler: func(r *rig) http.HandlerFunc {
				return r.serveDoc(func(m map[string]any) { delete(m, "redirect_uris") })
			}},
		{name: "a secret", clientID: claudeID, want: ErrDocument, says: "client_secret", hits: 1,
			handler: func(r *rig) http.HandlerFunc {
				return r.serveDoc(func(m map[string]any) { m["client_secret"] = "s3cret" })
			}},
		{name: "1 MB body announced", clientID: claudeID, want: ErrDocument, says: "1048576 bytes", hits: 1,
			handler: func(*rig) http.HandlerFunc {
				return func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", strconv.Itoa(len(big)))
					w.Write([]byte(big))
				}
			}},
		{name: "1 MB body chunked", clientID: claudeID, want: ErrDocument, says: "longer than 5 KiB", hits: 1,
			handler: func(*rig) http.HandlerFunc {
				return func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					w.(http.Flusher).Flush() // no Content-Length
					w.Write([]byte(`{"client_id":"` + big + `"}`))
				}
			}},
		{name: "redirect", clientID: claudeID, want: ErrDocument, says: "redirects (HTTP 302)", hits: 1,
			handler: func(*rig) http.HandlerFunc {
				return status(http.StatusFound, "Location", "https://claude.ai/oauth/claude-code-client-metadata")
			}},
		{name: "permanent redirect", clientID: claudeID, want: ErrDocument, says: "HTTP 308", hits: 1,
			handler: func(*rig) http.HandlerFunc { return status(http.StatusPermanentRedirect, "Location", "/elsewhere") }},
		{name: "not found", clientID: claudeID, want: ErrDocument, says: "HTTP 404", hits: 1,
			handler: func(*rig) http.HandlerFunc { return status(http.StatusNotFound) }},
		{name: "no content", clientID: claudeID, want: ErrDocument, says: "HTTP 204", hits: 1,
			handler: func(*rig) http.HandlerFunc { return status(http.StatusNoContent) }},
		{name: "server error", clientID: claudeID, want: ErrUnavailable, says: "HTTP 503", hits: 1,
			handler: func(*rig) http.HandlerFunc { return status(http.StatusServiceUnavailable) }},
		{name: "forbidden", clientID: claudeID, want: ErrUnavailable, says: "HTTP 403", hits: 1,
			handler: func(*rig) http.HandlerFunc { return status(http.StatusForbidden) }},
		{name: "html", clientID: claudeID, want: ErrDocument, says: `"text/html; charset=utf-8"`, hits: 1,
			handler: func(r *rig) http.HandlerFunc { return r.serveDoc(nil, "Content-Type", "text/html; charset=utf-8") }},
		{name: "no content type", clientID: claudeID, want: ErrDocument, says: "no Content-Type", hits: 1,
			handler: func(*rig) http.HandlerFunc {
				return func(w http.ResponseWriter, req *http.Request) {
					w.Header()["Content-Type"] = nil // no sniffing either
					w.Write(docFor(claudeID, nil))
				}
			}},
		{name: "hostile content type", clientID: claudeID, want: ErrDocument, hits: 1,
			handler: func(r *rig) http.HandlerFunc {
				return r.serveDoc(nil, "Content-Type", "text/plain\u202e"+strings.Repeat("A", 5000))
			}},

		{name: "10.0.0.1", clientID: claudeID, answer: []string{"10.0.0.1"}, want: ErrAddress, says: "a private network address"},
		{name: "127.0.0.1", clientID: claudeID, answer: []string{"127.0.0.1"}, want: ErrAddress, says: "loopback"},
		{name: "::1", clientID: claudeID, answer: []string{"::1"}, want: ErrAddress, says: "loopback"},
		{name: "cloud metadata", clientID: claudeID, answer: []string{"169.254.169.254"}, want: ErrAddress, says: "link-local"},
		{name: "fd00::1", clientID: claudeID, answer: []string{"fd00::1"}, want: ErrAddress, says: "unique local"},
		{name: "fe80::1%eth0", clientID: claudeID, answer: []string{"fe80::1%eth0"}, want: ErrAddress, says: "scoped"},
		{name: "public then private", clientID: claudeID, answer: []string{claudeIP, "192.168.1.20"}, want: ErrAddress, says: "192.168.1.20"},
		{name: "private then public", clientID: claudeID, answer: []string{"fd12::3", claudeIP}, want: ErrAddress},
		{name: "IPv4-mapped private", clientID: claudeID, answer: []string{"::ffff:10.1.2.3"}, want: ErrAddress, says: "private"},
		{name: "NAT64 of loopback", clientID: claudeID, answer: []string{"64:ff9b::7f00:1"}, want: ErrAddress, says: "NAT64"},
		{name: "CGNAT", clientID: claudeID, answer: []string{"100.64.1.1"}, want: ErrAddress, says: "carrier-grade"},
		{name: "NAT64 of a public address", clientID: claudeID, answer: []string{"64:ff9b::a04f:680a"}, hits: 1, dialed: []string{"[64:ff9b::a04f:680a]:443"}},
		{name: "no address", clientID: claudeID, answer: []string{}, want: ErrUnavailable, says: "no address"},
		{name: "unknown name", clientID: "https://nowhere.example.net/x", hosts: []string{"*"}, want: ErrUnavailable, says: "no such host"},

		{name: "host not allowed", clientID: "https://evil.example.net/client.json", want: ErrHost, says: "claude.ai"},
		{name: "host not on a custom list", clientID: claudeID, hosts: []string{"vscode.dev"}, want: ErrHost},
		{name: "empty list allows none", clientID: claudeID, hosts: []string{}, want: ErrHost},
		{name: "star allows a public host", clientID: "https://client.example.net/client.json", hosts: []string{"*"}, answer: []string{"93.184.215.14"}, hits: 1},
		{name: "star keeps the address check", clientID: "https://client.example.net/client.json", hosts: []string{"*"}, answer: []string{"192.168.1.1"}, want: ErrAddress},
		{name: "list in capitals", clientID: claudeID, hosts: []string{"Claude.AI"}, hits: 1},
		{name: "certificate for another host", clientID: "https://zed.dev/oauth/client-metadata.json", hosts: []string{"zed.dev"}, answer: []string{"104.21.1.1"},
			want: ErrUnavailable, says: "not valid for zed.dev", hits: 0},
		{name: "bad URL", clientID: "https://claude.ai/a/../b", want: ErrClientID},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			host := "claude.ai"
			if tg, err := parseClientID(c.clientID); err == nil {
				host = tg.host
			}
			if c.answer != nil {
				r.resolve(host, c.answer...)
			}
			for _, d := range c.down {
				r.down[d] = true
			}
			if c.handler != nil {
				r.serve(c.handler(r))
			}
			f := r.fetcher(Options{Hosts: c.hosts})
			doc, err := f.Get(cabinettest.Context(t), c.clientID)
			switch {
			case c.want == nil && err != nil:
				t.Fatalf("Get: %v", err)
			case c.want == nil && doc.ClientID != c.clientID:
				t.Errorf("Get = %+v, want the document of %s", doc, c.clientID)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("Get = %+v, %v; want an error wrapping %q", doc, err, c.want)
			case c.want != nil && !strings.Contains(err.Error(), c.says):
				t.Errorf("Get: %v; want it to say %q", err, c.says)
			}
			if err != nil {
				t.Logf("error: %v", err)
				checkMessage(t, err)
			}
			if got := r.hits.Load(); got != c.hits {
				t.Errorf("server saw %d requests, want %d", got, c.hits)
			}
			if c.dialed != nil && !slices.Equal(r.dials(), c.dialed) {
				t.Errorf("dialed %v, want %v", r.dials(), c.dialed)
			}
			if errors.Is(err, ErrAddress) || errors.Is(err, ErrHost) || errors.Is(err, ErrClientID) {
				if d := r.dials(); len(d) != 0 {
					t.Errorf("dialed %v after refusing the host", d)
				}
			}
		})
	}
}

// checkMessage holds every error to what a person may be shown: one line, no control or
// bidi characters, bounded.
func checkMessage(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if len(msg) > 800 {
		t.Errorf("error is %d bytes long: %.200s…", len(msg), msg)
	}
	for _, r := range msg {
		if r < 0x20 || r == 0x7f || r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("error has character %U: %q", r, msg)
			return
		}
	}
}

// TestSlowServerFailsFast: a server that never answers, or answers forever, costs the fetch's
// timeout and no more.
func TestSlowServerFailsFast(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler func(release <-chan struct{}) http.HandlerFunc
	}{
		{"no headers", func(release <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, req *http.Request) {
				select {
				case <-req.Context().Done():
				case <-release:
				}
			}
		}},
		{"endless body", func(release <-chan struct{}) http.HandlerFunc {
			return func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"client_id":`))
				w.(http.Flusher).Flush()
				select {
				case <-req.Context().Done():
				case <-release:
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			release := make(chan struct{})
			t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
			r.serve(c.handler(release))
			f := r.fetcher(Options{Timeout: 200 * time.Millisecond})
			start := time.Now()
			_, err := f.Get(cabinettest.Context(t), claudeID)
			took := time.Since(start)
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no answer in time") {
				t.Fatalf("Get: %v; want ErrUnavailable saying no answer in time", err)
			}
			// The bound is the option (200 ms) and not the default (5 s); the margin is for a
			// loaded machine, not for the server.
			if took >= defaultTimeout {
				t.Errorf("Get took %v with a 200ms timeout", took)
			}
		})
	}
}

func TestWrongRoots(t *testing.T) {
	r := newRig(t)
	other, _ := testCert(t)
	pool := x509.NewCertPool()
	pool.AddCert(other.Leaf)
	f := r.fetcher(Options{RootCAs: pool})
	_, err := f.Get(cabinettest.Context(t), claudeID)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not signed by an authority") {
		t.Fatalf("Get: %v; want the certificate refused", err)
	}
	if r.hits.Load() != 0 {
		t.Errorf("server saw %d requests over an untrusted connection", r.hits.Load())
	}
}
