package cimd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// claudeIP is one of Anthropic's public addresses: the rig's resolver gives it for the hosts
// the tests impersonate, and the rig's dialer takes any address to the loopback server.
const claudeIP = "160.79.104.10"

const claudeID = "https://claude.ai/oauth/mcp-oauth-client-metadata"

// rig is a loopback HTTPS server that impersonates the clients' hosts: its certificate names
// them, the rig's resolver maps them to public-looking addresses, and the rig's dialer sends
// every connection to the server. Nothing a test does leaves the machine: fetcher injects the
// resolver and dialer into every Fetcher, and checks that New kept them.
type rig struct {
	t     *testing.T
	srv   *httptest.Server
	roots *x509.CertPool
	clock *clock.Fake

	hits    atomic.Int64 // requests the server saw
	lookups atomic.Int64

	mu      sync.Mutex
	handler http.HandlerFunc
	answers map[string][]string // host -> addresses the resolver gives
	dialed  []string            // addresses the dialer was asked for, in order
	down    map[string]bool     // addresses whose dial fails
	last    *http.Request       // the last request the server saw
}

func newRig(t *testing.T) *rig {
	t.Helper()
	cert, roots := testCert(t)
	r := &rig{
		t:       t,
		roots:   roots,
		clock:   clock.NewFake(time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)),
		answers: map[string][]string{"claude.ai": {claudeIP}, "vscode.dev": {"13.107.246.40"}},
		down:    map[string]bool{},
	}
	r.handler = r.serveDoc(nil)
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.hits.Add(1)
		r.mu.Lock()
		h := r.handler
		r.last = req
		r.mu.Unlock()
		h(w, req)
	}))
	r.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	r.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what some tests want
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	return r
}

// fetcher returns a Fetcher on o with the rig's resolver, dialer, roots and clock, whatever o
// says of them: a test cannot reach the network by forgetting one.
func (r *rig) fetcher(o Options) *Fetcher {
	r.t.Helper()
	o.Resolver = r
	o.Dial = r.dial
	if o.RootCAs == nil {
		o.RootCAs = r.roots
	}
	if o.Now == nil {
		o.Now = r.clock.Now
	}
	f := New(o)
	if f.resolver != HostResolver(r) || reflect.ValueOf(f.dial).Pointer() != reflect.ValueOf(o.Dial).Pointer() {
		r.t.Fatal("New did not keep the injected resolver and dialer; the test would reach the network")
	}
	return f
}

func (r *rig) serve(h http.HandlerFunc) {
	r.mu.Lock()
	r.handler = h
	r.mu.Unlock()
}

func (r *rig) resolve(host string, addrs ...string) {
	r.mu.Lock()
	r.answers[host] = addrs
	r.mu.Unlock()
}

func (r *rig) dials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.dialed...)
}

func (r *rig) request() *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// LookupIPAddr is the rig's resolver.
func (r *rig) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.lookups.Add(1)
	r.mu.Lock()
	addrs, ok := r.answers[host]
	r.mu.Unlock()
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, a := range addrs {
		ip, zone, _ := strings.Cut(a, "%")
		out = append(out, net.IPAddr{IP: net.ParseIP(ip), Zone: zone})
	}
	return out, nil
}

// dial is the rig's dialer: every address goes to the loopback server, unless marked down.
func (r *rig) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	r.dialed = append(r.dialed, addr)
	down := r.down[addr]
	r.mu.Unlock()
	if down {
		return nil, errors.New("connect: network is unreachable")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, r.srv.Listener.Addr().String())
}

// serveDoc answers with a valid document for the URL asked, changed by edit, with headers.
func (r *rig) serveDoc(edit func(map[string]any), headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		body := docFor("https://"+req.Host+req.URL.Path, edit)
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Write(body)
	}
}

// docFor is a valid document for clientID (Claude's, as published), changed by edit.
func docFor(clientID string, edit func(map[string]any)) []byte {
	m := map[string]any{
		"client_id":                  clientID,
		"client_name":                "Claude",
		"client_uri":                 "https://claude.ai",
		"logo_uri":                   "https://claude.ai/images/claude_app_icon.png",
		"redirect_uris":              []string{"https://claude.ai/api/mcp/auth_callback"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// testCert is a self-signed certificate for the hosts the tests impersonate, and a pool that
// trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "cimd test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		DNSNames:              []string{"claude.ai", "vscode.dev", "chatgpt.com", "example.net", "*.example.net"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
