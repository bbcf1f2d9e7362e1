package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/fakeaccess"
)

// tunnelHost is the public hostname of the simulated Cloudflare Tunnel:
// every tunnelled request carries it as its Host.
const tunnelHost = "cabinet.example.com"

// accessRig is a cabinet whose MCP over HTTP accepts Cloudflare Access
// assertions from a fake Access on loopback, with batocera_power on (so a
// tool outside an Access identity's scopes is registered).
func accessRig(t *testing.T, extra ...string) (*rig, *fakeaccess.Issuer) {
	t.Helper()
	iss := &fakeaccess.Issuer{}
	certs := httptest.NewServer(iss)
	t.Cleanup(certs.Close)
	conf := append([]string{
		"cabinet.mcp.cf_access.team_domain=" + iss.Team(),
		"cabinet.mcp.cf_access.aud=" + iss.AUD(),
		"cabinet.mcp.cf_access.allowed_emails=player@example.com",
		"cabinet.mcp.cf_access.certs_url=" + certs.URL + fakeaccess.CertsPath,
		"cabinet.mcp.allowed_hosts=" + tunnelHost,
		"cabinet.mcp.power=1",
	}, extra...)
	r := newRig(t, nil, conf...)
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	return r, iss
}

// postAssertion posts an MCP initialize to /mcp as the tunnel would pass
// it on: Host the public hostname, the assertion in its header (sent even
// when empty), auth ("" for none) as Authorization.
func postAssertion(c *http.Client, url, assertion, auth string) (reply, error) {
	return postInitialize(c, url, func(req *http.Request) {
		req.Host = tunnelHost
		req.Header.Set("Cf-Access-Jwt-Assertion", assertion)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
	})
}

// postInitialize posts an MCP initialize to url through c, set changing
// the request, and returns the status and the first 64 KiB of the body.
func postInitialize(c *http.Client, url string, set func(*http.Request)) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(initialize)))
	if err != nil {
		return reply{}, err
	}
	set(req)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return reply{status: resp.StatusCode, body: string(b)}, nil
}

// accessSession is an MCP client through the simulated tunnel with the
// given headers.
func accessSession(t *testing.T, url string, headers map[string]string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers), transport.WithStreamableHTTPHost(tunnelHost))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize through the tunnel: %v", err)
	}
	return c
}

// callText calls tool and returns whether it was an error result, and its
// text.
func callText(t *testing.T, c *client.Client, tool string, args map[string]any) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res.IsError, strings.Join(text, " ")
}

// TestRemoteAccess: a simulated tunnel request with a valid Access
// assertion, and no bearer token, reaches the tools (the independent SDK
// client lists them and calls a read tool, --strict); with a wrong
// Authorization beside it, it still does. The identity has read and play
// but not power. Every forgery gets 403 with a safe reason; a flood of
// 2000 forgeries from cloudflared's one address never gets the real user,
// from the same address, anything but 200. No assertion reaches a log
// line.
func TestRemoteAccess(t *testing.T) {
	cabinettest.Long(t, "remote access through the proxy end to end (TestRemoteAccessDoctor stays in -short)")
	t.Parallel()
	check := cabinettest.NewMCPCheck(t)
	r, iss := accessRig(t)
	base := r.mcpURL()
	valid := iss.Assertion("player@example.com")

	rep, code, stderr := check.Report(t, 2*time.Minute, nil, "--strict", "--url", base+"/mcp",
		"--header", "Cf-Access-Jwt-Assertion: "+valid,
		"--expect-tool", "batocera_get_status", "--expect-tool", "batocera_power",
		"--call", "batocera_get_status", "--fail-on-tool-error")
	if code != 0 || !rep.OK || len(rep.Warnings) != 0 || rep.Call == nil || rep.Call.IsError {
		t.Fatalf("mcpcheck with an assertion and no token: exit %d, report %+v\nstderr: %s", code, rep, stderr)
	}

	c := accessSession(t, base+"/mcp", map[string]string{"Cf-Access-Jwt-Assertion": valid, "Authorization": "Bearer not-the-token"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	cancel()
	if err != nil || !slices.ContainsFunc(tools.Tools, func(tl mcp.Tool) bool { return tl.Name == "batocera_power" }) {
		t.Fatalf("tools/list through the tunnel: %v, %d tools (want batocera_power among them)", err, len(tools.Tools))
	}
	if isErr, text := callText(t, c, "batocera_find_games", map[string]any{"query": "sonic", "limit": 1}); isErr {
		t.Errorf("read tool as the Access identity: %s", text)
	}
	if _, text := callText(t, c, "batocera_pause_game", map[string]any{"paused": true}); strings.Contains(text, "lacks the scope") {
		t.Errorf("play tool as the Access identity (read play): %s", text)
	}
	if isErr, text := callText(t, c, "batocera_power", map[string]any{"action": "reboot"}); !isErr || !strings.Contains(text, "lacks the scope power") {
		t.Errorf("batocera_power as the Access identity: error %v, %q; want refused for the scope power", isErr, text)
	}

	// Each forgery, through the tunnel, with no token.
	now := time.Now()
	cur := iss.Current()
	attacker := iss.NewKey()
	impostor := *attacker
	impostor.Kid = cur.Kid
	claims := func(f func(*fakeaccess.Claims)) string {
		c := fakeaccess.Claims{Email: "player@example.com", Subject: "sub"}
		f(&c)
		return iss.Sign(cur, c)
	}
	forgeries := []struct{ name, assertion, reason string }{
		{"expired", claims(func(c *fakeaccess.Claims) {
			c.IssuedAt, c.NotBefore, c.Expiry = now.Add(-3*time.Hour), now.Add(-3*time.Hour), now.Add(-2*time.Hour)
		}), "assertion expired"},
		{"not yet valid", claims(func(c *fakeaccess.Claims) { c.NotBefore, c.Expiry = now.Add(time.Hour), now.Add(2*time.Hour) }), "assertion not yet valid"},
		{"wrong audience", claims(func(c *fakeaccess.Claims) { c.Audience = strings.Repeat("ab", 32) }), "wrong audience"},
		{"wrong issuer", claims(func(c *fakeaccess.Claims) { c.Issuer = "https://evil.cloudflareaccess.com" }), "wrong issuer"},
		{"alg none", iss.AlgNone("player@example.com"), "algorithm not allowed"},
		{"HS256 keyed with the public key", iss.HS256WithPublicKey("player@example.com"), "algorithm not allowed"},
		{"another key under the published kid", iss.Sign(&impostor, fakeaccess.Claims{Email: "player@example.com"}), "signature invalid"},
		{"unknown kid", iss.Sign(attacker, fakeaccess.Claims{Email: "player@example.com"}), "unknown signing key"},
		{"header without a token", "", "no assertion"},
		{"e-mail outside the list", iss.Assertion("stranger@example.com"), "e-mail not allowed"},
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, f := range forgeries {
		got, err := postAssertion(hc, base+"/mcp", f.assertion, "")
		if err != nil {
			t.Fatal(err)
		}
		if got.status != 403 || !strings.Contains(got.body, f.reason) {
			t.Errorf("%s: %d %s, want 403 %q", f.name, got.status, got.body, f.reason)
		}
	}
	if got, _ := postAssertion(hc, base+"/mcp", valid, "Bearer "+strings.Repeat("z", 43)); got.status != 200 || !strings.Contains(got.body, "serverInfo") {
		t.Errorf("valid assertion beside a wrong bearer: %d %.200s, want 200", got.status, got.body)
	}

	// The flood: 2000 forgeries from 127.0.0.1 (cloudflared's address)
	// while the real user, from the same address, keeps initializing.
	const flood, workers = 2000, 8
	start := time.Now()
	fc := clientFrom("127.0.0.1")
	var wg sync.WaitGroup
	errs := make(chan string, workers+1)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < flood; i += workers {
				f := forgeries[i%len(forgeries)]
				got, err := postAssertion(fc, base+"/mcp", f.assertion, "Bearer "+strings.Repeat("q", 43))
				if err != nil || got.status != 403 {
					errs <- fmt.Sprintf("forgery %d (%s): %v, status %d, want 403", i, f.name, err, got.status)
					return
				}
			}
		})
	}
	var valids int
	wg.Go(func() {
		for valids < 100 {
			got, err := postAssertion(fc, base+"/mcp", valid, "")
			if err != nil || got.status != 200 || !strings.Contains(got.body, "serverInfo") {
				errs <- fmt.Sprintf("valid assertion %d during the flood: %v, status %d %.200s, want 200", valids, err, got.status, got.body)
				return
			}
			valids++
		}
	})
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	t.Logf("%d forgeries and %d valid assertions from 127.0.0.1 in %v", flood, valids, time.Since(start).Round(time.Millisecond))
	if got := post(t, base+"/mcp", "", "Bearer "+r.token(), "", []byte(initialize), false); got.status != 200 {
		t.Errorf("the LAN bearer from the flooded address: %d, want 200 (assertions do not count against it)", got.status)
	}

	hookLog, _ := os.ReadFile(filepath.Join(r.state, "cabinet.log"))
	logs := r.logs.String() + string(hookLog)
	for _, f := range append(forgeries, struct{ name, assertion, reason string }{"valid", valid, ""}) {
		if f.assertion != "" && strings.Contains(logs, f.assertion) {
			t.Errorf("a log shows the %s assertion", f.name)
		}
	}
	if !strings.Contains(logs, "a flood of invalid Cloudflare Access assertions") && !strings.Contains(logs, "MCP request refused") {
		t.Error("no refusal logged")
	}
}

// TestRemoteAccessRotation: an assertion under a key Access has not
// published yet is refused; once Access publishes it, the same assertion
// is accepted at the first refetch the verifier allows (a minute after the
// last).
func TestRemoteAccessRotation(t *testing.T) {
	t.Parallel()
	cabinettest.Long(t, "Access's keys are refetched at most once a minute")
	r, iss := accessRig(t)
	base := r.mcpURL()
	hc := &http.Client{Timeout: 10 * time.Second}
	if got, err := postAssertion(hc, base+"/mcp", iss.Assertion("player@example.com"), ""); err != nil || got.status != 200 {
		t.Fatalf("before the rotation: %v %+v", err, got)
	}
	next := iss.NewKey()
	rotated := iss.Sign(next, fakeaccess.Claims{Email: "player@example.com", Expiry: time.Now().Add(3 * time.Hour)})
	if got, _ := postAssertion(hc, base+"/mcp", rotated, ""); got.status != 403 || !strings.Contains(got.body, "unknown signing key") {
		t.Fatalf("unknown kid: %d %s, want 403 unknown signing key", got.status, got.body)
	}
	iss.Publish(next)
	start := time.Now()
	deadline := time.After(90 * time.Second)
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		got, err := postAssertion(hc, base+"/mcp", rotated, "")
		if err == nil && got.status == 200 {
			break
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("the rotated key was not accepted within 90 s: %v %+v", err, got)
		}
	}
	t.Logf("the rotated key accepted %v after it was published (%d fetches of the keys)", time.Since(start).Round(time.Second), iss.Hits())
	if hits := iss.Hits(); hits > 3 {
		t.Errorf("the keys were fetched %d times; want at most 3 (start, the first unknown kid, a minute later)", hits)
	}
}

// doctorCheck runs `cabinet doctor --json` and returns the named check.
func doctorCheck(t *testing.T, r *rig, name string) (status, detail string) {
	t.Helper()
	out, _, _ := runCabinet(t, r.env(), "doctor", "--json")
	var rep struct {
		Checks []struct{ Name, Status, Detail string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("cabinet doctor --json: %v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c.Name == name {
			return c.Status, c.Detail
		}
	}
	t.Fatalf("cabinet doctor has no %s check:\n%s", name, out)
	return "", ""
}

// TestRemoteAccessDoctor: doctor shows Access's settings without the whole
// audience tag, and that it fetched the team's keys.
func TestRemoteAccessDoctor(t *testing.T) {
	t.Parallel()
	r, iss := accessRig(t)
	status, detail := doctorCheck(t, r, "cf-access")
	want := fmt.Sprintf("on (team %s, aud …%s, 1 e-mail(s), scopes read play); 1 signing key(s) fetched", iss.Team(), iss.AUD()[60:])
	if status != "ok" || detail != want {
		t.Errorf("doctor cf-access: %s %q, want ok %q", status, detail, want)
	}
}
