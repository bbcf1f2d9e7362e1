package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// hostInitialize is an MCP initialize as a client sends it first.
const hostInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"hosts","version":"1"}}}`

// postHost posts an MCP initialize to url through c with host as its Host
// (and token, unless "", as its bearer token), and returns the status and
// the body.
func postHost(t *testing.T, c *http.Client, url, host, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(hostInitialize)))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s (Host %s): %v", url, host, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

// TestHTTPHostAllowList: mcp-go checks the Host against DNS rebinding
// too, behind the guard, with the guard's list (cabinet.mcp.allowed_hosts,
// the certificate's names, the machine's own). Through loopback, as
// cloudflared or tailscale serve on the cabinet pass requests on, a listed
// public Host and a certificate name get a whole MCP session; a Host off
// the list is refused by the guard (421), and by mcp-go as well (403) when
// it reaches mcp-go's handler without the guard. Without the list mcp-go
// would refuse the public Host through loopback: the list is what lets the
// tunnel in.
func TestHTTPHostAllowList(t *testing.T) {
	const public, certName, foreign = "cabinet.example.com", "cabinet.tail0000.ts.net", "evil.example"
	// A certificate for the tailnet name, as tailscale cert writes one
	// (tlsconf's self-signed maker, told the names), served from files.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	src, err := tlsconf.Open(ctx, tlsconf.Options{SelfSignedDir: dir, Hosts: []string{certName, "127.0.0.1"}, NoWatch: true})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	cert := src.Info()
	if !slices.Contains(cert.DNSNames, certName) {
		t.Fatalf("the test certificate's names: %v", cert.DNSNames)
	}
	certFile, keyFile := tlsconf.SelfSignedPaths(dir)
	r := newRig(t, func(c *Config) {
		c.HTTP.AllowedHosts = []string{"Cabinet.Example.com"}
		c.HTTP.TLS = TLS{CertFile: certFile, KeyFile: keyFile}
	}, nil)
	r.logged("MCP over HTTP listening", map[string]string{"url": "https://"})
	url := "https://" + r.d.HTTPAddr() + "/mcp"
	token, err := httpauth.ReadToken(r.cfg.Layout.Token())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if leaf, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		t.Fatal(err)
	} else {
		roots.AddCert(leaf.Leaf)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(hc.CloseIdleConnections)

	for _, host := range []string{public, certName} {
		tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPBasicClient(hc), transport.WithStreamableHTTPHost(host),
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			t.Fatal(err)
		}
		c := mcpSession(t, tr)
		res, err := c.CallTool(cabinettest.Context(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_get_status"}})
		if err != nil || res.IsError {
			t.Errorf("batocera_get_status with Host %s through loopback: %v %+v", host, err, res)
		}
	}
	if status, body := postHost(t, hc, url, foreign, token); status != http.StatusMisdirectedRequest || !strings.Contains(body, "cabinet.mcp.allowed_hosts") {
		t.Errorf("Host %s through the guard: %d %s, want 421 naming cabinet.mcp.allowed_hosts", foreign, status, body)
	}

	// mcp-go's handler alone, with the list serveHTTP gives it.
	hosts := httpauth.New(httpauth.Options{TokenPath: r.cfg.Layout.Token(), AllowedHosts: allowedHosts(r.cfg.HTTP, &cert)}).Hosts()
	for _, h := range []string{public, certName, "localhost"} {
		if !slices.Contains(hosts, h) {
			t.Errorf("the list lacks %s: %v", h, hosts)
		}
	}
	h, _ := r.d.mcpHTTP(hosts)
	bare := httptest.NewServer(h)
	t.Cleanup(bare.Close)
	for _, host := range []string{public, certName, strings.ToUpper(public) + ":443", "127.0.0.1"} {
		if status, body := postHost(t, bare.Client(), bare.URL+"/mcp", host, ""); status != http.StatusOK {
			t.Errorf("mcp-go and Host %s through loopback: %d %s, want 200", host, status, body)
		}
	}
	if status, body := postHost(t, bare.Client(), bare.URL+"/mcp", foreign, ""); status != http.StatusForbidden || !strings.Contains(body, "invalid Host header") {
		t.Errorf("mcp-go and Host %s: %d %s, want 403 invalid Host header", foreign, status, body)
	}
	h, _ = r.d.mcpHTTP(nil)
	unlisted := httptest.NewServer(h)
	t.Cleanup(unlisted.Close)
	if status, _ := postHost(t, unlisted.Client(), unlisted.URL+"/mcp", public, ""); status != http.StatusForbidden {
		t.Errorf("mcp-go without the list and Host %s through loopback: %d, want 403 (the test no longer shows the list matters)", public, status)
	}
}
