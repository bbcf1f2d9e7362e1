package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// initialize is an MCP initialize request.
const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// TestHTTPGuard: MCP over HTTP refuses a request without the token, with a
// wrong token, for a foreign Host (DNS rebinding), from a foreign browser
// Origin and with an oversized body, even when the right token comes with
// it; a thousand bad tokens from twenty addresses are refused (401, then
// 429 once an address has failed ten times) and the daemon still answers a
// good call from another address at once; no token ever reaches a log
// line.
func TestHTTPGuard(t *testing.T) {
	t.Parallel()
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.start()
	d.waitLog("MCP over HTTP listening", 20*time.Second)
	base := r.mcpURL()
	tok := r.token()
	bad := func() string {
		var b [32]byte
		rand.Read(b[:])
		return base64.RawURLEncoding.EncodeToString(b[:])
	}
	firstBad := bad()
	big := bytes.Repeat([]byte("x"), 2<<20)

	tests := []struct {
		name    string
		host    string
		auth    string
		origin  string
		body    []byte
		chunked bool
		want    int
		alt     int // also accepted
	}{
		{name: "no token", body: []byte(initialize), want: 401},
		{name: "wrong token", auth: "Bearer " + firstBad, body: []byte(initialize), want: 401},
		{name: "token without Bearer", auth: tok, body: []byte(initialize), want: 401},
		{name: "foreign Host, good token", host: "evil.example:8717", auth: "Bearer " + tok, body: []byte(initialize), want: 421},
		{name: "foreign Origin, good token", origin: "http://evil.example", auth: "Bearer " + tok, body: []byte(initialize), want: 403},
		{name: "oversized body, good token", auth: "Bearer " + tok, body: big, want: 413},
		// Without a Content-Length the cap cuts the body while MCP reads
		// it: refused by the MCP handler as unreadable.
		{name: "oversized chunked body, good token", auth: "Bearer " + tok, body: big, chunked: true, want: 413, alt: 400},
		{name: "good", auth: "Bearer " + tok, body: []byte(initialize), want: 200},
	}
	for _, tt := range tests {
		resp := post(t, base+"/mcp", tt.host, tt.auth, tt.origin, tt.body, tt.chunked)
		if resp.status != tt.want && resp.status != tt.alt {
			t.Errorf("%s: status %d (%.200s), want %d", tt.name, resp.status, resp.body, tt.want)
		}
	}

	// A thousand bad tokens from twenty addresses: each address gets 401
	// for its first ten and 429 with Retry-After after them, even with the
	// good token; a good token from another address still goes through at
	// once.
	const peers, each, limit = 20, 50, 10
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan string, peers)
	for p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := clientFrom(fmt.Sprintf("127.0.0.%d", 10+p))
			for i := range each {
				resp, err := postFrom(c, base+"/mcp", "Bearer "+bad(), []byte(initialize))
				want := 401
				if i >= limit {
					want = 429
				}
				switch {
				case err != nil:
					errs <- fmt.Sprintf("peer %d, bad token %d: %v", p, i, err)
					return
				case resp.status != want || (want == 429 && resp.retryAfter == ""):
					errs <- fmt.Sprintf("peer %d, bad token %d: status %d (Retry-After %q), want %d", p, i, resp.status, resp.retryAfter, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	took := time.Since(start)
	good := post(t, base+"/mcp", "", "Bearer "+tok, "", []byte(initialize), false)
	if good.status != 200 || !strings.Contains(good.body, "serverInfo") {
		t.Fatalf("good call from another address right after 1000 bad tokens: status %d %.300s", good.status, good.body)
	}
	if good.took > 2*time.Second {
		t.Errorf("the good call after the storm took %v", good.took)
	}
	t.Logf("1000 bad tokens from %d addresses refused in %v (%v each); the good call after them took %v", peers, took.Round(time.Millisecond), (took / 1000).Round(time.Microsecond), good.took.Round(time.Microsecond))
	if resp, err := postFrom(clientFrom("127.0.0.10"), base+"/mcp", "Bearer "+tok, []byte(initialize)); err != nil || resp.status != 429 {
		t.Errorf("the good token from a throttled address: %v, %+v; want 429", err, resp)
	}
	if resp := get(t, base+"/healthz"); resp.status != 200 {
		t.Errorf("GET /healthz without a token: %d, want 200", resp.status)
	}

	// Refusals are logged, but few (a flood must not flood the log), and
	// no token, good or bad, appears in any log line.
	if n := d.log.Count("MCP request refused"); n < 1 || n > 1+int(time.Since(start)/(10*time.Second))+1 {
		t.Errorf("%d \"MCP request refused\" lines for 1008 refusals, want at least one and about one per 10 s", n)
	}
	hookLog, _ := os.ReadFile(filepath.Join(r.state, "cabinet.log"))
	for name, log := range map[string]string{"daemon": r.logs.String(), "cabinet.log": string(hookLog)} {
		for _, secret := range []string{tok, firstBad} {
			if strings.Contains(log, secret) {
				t.Errorf("the %s log shows a token (%.6s…)", name, secret)
			}
		}
	}
}

// TestHTTPMCPCheck: the independent MCP client (the official TypeScript
// SDK) lists the tools over Streamable HTTP with the token and calls
// batocera_play_history; --strict fails on any conformance warning.
func TestHTTPMCPCheck(t *testing.T) {
	cabinettest.Long(t, "the official MCP SDK in Node against the daemon (TestHTTPGuard stays in -short)")
	t.Parallel()
	check := cabinettest.NewMCPCheck(t)
	r := newRig(t, nil)
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	r.hook("game-start", "/userdata/roms/nes/Check.nes", "Check", "Check Game")
	r.hook("game-end")
	url, token := r.mcpURL(), r.token()
	start := time.Now()
	out, stderr, code := check.Run(t, 120*time.Second, nil, "--strict", "--url", url+"/mcp", "--token", token,
		"--expect-tool", "batocera_play_history", "--expect-tool", "batocera_get_status",
		"--call", "batocera_play_history", "--fail-on-tool-error")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("mcpcheck exit %d:\n%s%s", code, out, stderr)
	}
	var rep cabinettest.MCPReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("mcpcheck output: %v\n%s", err, out)
	}
	if callErr := rep.Call != nil && rep.Call.IsError; !rep.OK || callErr || len(rep.Warnings) != 0 {
		t.Errorf("mcpcheck: ok %v, call error %v, warnings %q", rep.OK, callErr, rep.Warnings)
	}
	t.Logf("mcpcheck: %d tools listed, play history called, in %v", len(rep.Tools), took.Round(time.Millisecond))
}

// mcpURL is http://host:port of MCP over HTTP, from the daemon's log line.
// It waits for the line: the rig's log gets each line a moment after the
// daemon's own buffer, which the caller may have waited on.
func (r *rig) mcpURL() string {
	r.t.Helper()
	var url string
	cabinettest.Await(r.t, `"MCP over HTTP listening" in the log`, r.logs.Changed, func() (bool, string) {
		for _, l := range strings.Split(r.logs.String(), "\n") {
			var line struct {
				Message, URL string
			}
			if json.Unmarshal([]byte(l), &line) == nil && line.Message == "MCP over HTTP listening" {
				url = strings.TrimSuffix(line.URL, "/mcp")
				return true, ""
			}
		}
		return false, "no such line yet"
	})

	return url
}

// token is `cabinet token show`.
func (r *rig) token() string {
	r.t.Helper()
	out, code, _ := runCabinet(r.t, r.env(), "token", "show")
	tok := strings.TrimSpace(out)
	if code != 0 || len(tok) < 32 {
		r.t.Fatalf("cabinet token show: exit %d, %q", code, out)
	}
	return tok
}

type reply struct {
	status     int
	body       string
	took       time.Duration
	retryAfter string
}

// clientFrom is an HTTP client whose connections come from the loopback
// address ip (127.0.0.n), so one test can be many peers.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// postFrom is post through c; it returns errors (it runs off the test's
// goroutine).
func postFrom(c *http.Client, url, auth string, body []byte) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return reply{status: resp.StatusCode, body: string(b), took: time.Since(start), retryAfter: resp.Header.Get("Retry-After")}, nil
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func post(t *testing.T, url, host, auth, origin string, body []byte, chunked bool) reply {
	t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // unknown length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return do(t, req)
}

func get(t *testing.T, url string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) reply {
	t.Helper()
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return reply{status: resp.StatusCode, body: string(b), took: time.Since(start)}
}
