package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
)

// claudeDoc is Claude's client metadata document, as its client id URL
// serves it.
const (
	claudeID       = "https://claude.ai/oauth/mcp-oauth-client-metadata"
	claudeRedirect = "https://claude.ai/api/mcp/auth_callback"
	claudeDoc      = `{"client_id":"` + claudeID + `","client_name":"Claude","redirect_uris":["` + claudeRedirect + `"],` +
		`"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`
)

// publicIP stands for the client host's address: the fetcher checks it is
// public, then the test's dialer sends the connection to loopback.
type fakeDNS struct{ ip string }

func (f fakeDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.ParseIP(f.ip)}}, nil
}

// metadataHost serves documents as claude.ai over TLS on loopback and
// returns the fetcher's options reaching it (no test leaves loopback).
func metadataHost(t *testing.T, ip string, docs map[string]string) cimd.Options {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "claude.ai"}, DNSNames: []string{"claude.ai"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(doc))
	}))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	return cimd.Options{Resolver: fakeDNS{ip}, RootCAs: pool,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, ts.Listener.Addr().String())
		}}
}

// TestClientMetadataDocument: claude.ai's client signs in by its client id
// URL (CIMD), its document fetched through the pinned public address; the
// page names the host the document came from.
func TestClientMetadataDocument(t *testing.T) {
	opts := metadataHost(t, "160.79.104.10", map[string]string{"/oauth/mcp-oauth-client-metadata": claudeDoc})
	k := newKit(t, func(c *Config) { c.Metadata = cimd.New(opts) })
	_, body := k.get(PathASMetadata)
	if m := mustJSON(t, body); m["client_id_metadata_document_supported"] != true {
		t.Fatalf("metadata: %v", m)
	}
	v, ch := pkce()
	c := k.authorize(k.authQuery(claudeID, claudeRedirect, ch, "read play"), nil)
	if c.status != http.StatusOK || !strings.Contains(c.body, "came from <b>claude.ai</b>") || !strings.Contains(c.body, claudeRedirect) {
		t.Fatalf("consent page: %d %s", c.status, c.body)
	}
	if !strings.Contains(c.header.Get("Content-Security-Policy"), "form-action 'self' https://claude.ai") {
		t.Errorf("CSP %q", c.header.Get("Content-Security-Policy"))
	}
	q := k.callback(k.answer(c, k.screen.pin(t), []string{"read", "play"}))
	resp, tok := k.postForm(PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "client_id": {claudeID},
		"redirect_uri": {claudeRedirect}, "code_verifier": {v}})
	if resp.StatusCode != http.StatusOK {
		t.Fatal(tok)
	}
	caller, err := k.srv.Verify(str(tok, "access_token"))
	if err != nil || caller.Name != CallerPrefix+claudeID {
		t.Fatal(caller, err)
	}
	clients, _, _, _ := Clients(k.state, k.clock.Now())
	if len(clients) != 1 || clients[0].Kind != KindMetadata || clients[0].Name != "Claude" {
		t.Fatalf("clients %+v", clients)
	}
}

// A document's host on a private address, a host off the allow-list, or a
// redirect URI the document does not list: an error page, no PIN.
func TestClientMetadataRefused(t *testing.T) {
	for _, tc := range []struct{ name, ip, client, redirect string }{
		{"private address", "10.0.0.7", claudeID, claudeRedirect},
		{"loopback address", "127.0.0.1", claudeID, claudeRedirect},
		{"metadata service", "169.254.169.254", claudeID, claudeRedirect},
		{"host not allowed", "160.79.104.10", "https://evil.example.net/client.json", claudeRedirect},
		{"redirect not in the document", "160.79.104.10", claudeID, "https://claude.ai/other"},
		{"no document", "160.79.104.10", "https://claude.ai/oauth/missing", claudeRedirect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := metadataHost(t, tc.ip, map[string]string{"/oauth/mcp-oauth-client-metadata": claudeDoc})
			k := newKit(t, func(c *Config) { c.Metadata = cimd.New(opts) })
			_, ch := pkce()
			c := k.authorize(k.authQuery(tc.client, tc.redirect, ch, "read"), nil)
			if c.status != http.StatusBadRequest || c.header.Get("Location") != "" || c.request != "" {
				t.Fatalf("%d Location=%q", c.status, c.header.Get("Location"))
			}
			select {
			case text := <-k.screen.shown:
				t.Fatalf("a PIN was shown: %q", text)
			default:
			}
		})
	}
}
