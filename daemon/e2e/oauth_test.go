package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/conformance"
)

// oauthRig is a cabinet serving OAuth sign-in over HTTPS with a test CA's
// certificate, at a public URL that is its own loopback address.
type oauthRig struct {
	*rig
	ca     *testCA
	caFile string
	issuer string
	https  *http.Client // trusts the CA alone
}

func newOAuthRig(t *testing.T, extra ...string) *oauthRig {
	t.Helper()
	ca := newTestCA(t)
	dir := cabinettest.TempDir(t, "oauth")
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o644); err != nil {
		t.Fatal(err)
	}
	// The issuer names the port the clients dial, so it is chosen first.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	issuer := "https://" + addr
	conf := append([]string{"cabinet.mcp.listen=" + addr, "cabinet.mcp.tls_cert_file=/userdata/system/tls/cabinet.crt",
		"cabinet.mcp.tls_key_file=/userdata/system/tls/cabinet.key", "cabinet.mcp.oauth=1", "cabinet.mcp.public_url=" + issuer}, extra...)
	r := newRig(t, nil, conf...)
	certFile, keyFile := r.cab.Path("/userdata/system/tls/cabinet.crt"), r.cab.Path("/userdata/system/tls/cabinet.key")
	os.MkdirAll(filepath.Dir(certFile), 0o700)
	certPEM, keyPEM := ca.issue(t, 1)
	replace(t, certFile, certPEM)
	replace(t, keyFile, keyPEM)
	r.start().waitLog("MCP over HTTP listening", 20*time.Second)
	return &oauthRig{rig: r, ca: ca, caFile: caFile, issuer: issuer,
		https: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.pool}}}}
}

// person approves sign-ins in the browser with the PIN the fake ES showed.
func (o *oauthRig) person(grant []string) cabinettest.Consent {
	seen := len(o.tvTexts())
	return cabinettest.Consent{Client: o.https, Issuer: o.issuer, Grant: grant, PIN: func() string {
		pin, _ := cabinettest.TVPIN(o.t, o.tvTexts, seen)
		return pin
	}}
}

// tvTexts are the fake ES's notifications, oldest first.
func (o *oauthRig) tvTexts() []string {
	var out []string
	for _, c := range o.cab.ES.Calls() {
		if c.Route == fakees.RouteNotify {
			out = append(out, c.Body)
		}
	}
	return out
}

// TestOAuthMCPGoClient: mcp-go's own OAuth client finds the cabinet's
// authorization server from the 401 (PRM), registers (DCR), sends PKCE and
// the resource, checks iss, and calls tools within the scopes the person
// granted; outside them the cabinet answers 403 insufficient_scope (while
// a static token keeps today's error naming the scope); the refresh token
// rotates, a reused one revokes the sign-in, and `cabinet clients revoke`
// signs a client out at its next request.
func TestOAuthMCPGoClient(t *testing.T) {
	t.Parallel()
	o := newOAuthRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store := client.NewMemoryTokenStore()
	c, err := client.NewOAuthStreamableHttpClient(o.issuer+"/mcp", client.OAuthConfig{
		RedirectURI: "http://127.0.0.1:47213/callback", TokenStore: store, PKCEEnabled: true, HTTPClient: o.https,
		Scopes: []string{"read", "play"}}, transport.WithHTTPBasicClient(o.https))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go e2e", Version: "1"}
	_, err = c.Initialize(ctx, init)
	if !client.IsOAuthAuthorizationRequiredError(err) {
		t.Fatalf("initialize without a token: %v, want an OAuth authorization error", err)
	}
	h := client.GetOAuthHandler(err)
	if err := h.RegisterClient(ctx, "mcp-go e2e"); err != nil {
		t.Fatalf("DCR: %v", err)
	}
	verifier, _ := client.GenerateCodeVerifier()
	state, _ := client.GenerateState()
	authURL, err := h.GetAuthorizationURL(ctx, state, client.GenerateCodeChallenge(verifier))
	if err != nil {
		t.Fatal(err)
	}
	au, _ := url.Parse(authURL)
	if q := au.Query(); q.Get("resource") != o.issuer+"/mcp" || q.Get("code_challenge_method") != "S256" || !strings.HasPrefix(authURL, o.issuer+"/oauth/authorize?") {
		t.Fatalf("authorization URL %s", authURL)
	}
	// The person grants read only, though play was asked.
	q, err := o.person([]string{"read"}).Approve(authURL)
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("iss") != o.issuer || q.Get("code") == "" {
		t.Fatalf("callback %v", q)
	}
	if err := h.ProcessAuthorizationCallback(ctx, q, verifier); err != nil { // checks state and iss (RFC 9207)
		t.Fatalf("code exchange: %v", err)
	}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize signed in: %v", err)
	}
	call := mcp.CallToolRequest{}
	call.Params.Name = "batocera_get_status"
	res, err := c.CallTool(ctx, call)
	if err != nil || res.IsError {
		t.Fatalf("batocera_get_status with read: %v %+v", err, res)
	}
	tok, err := store.GetToken(ctx)
	if err != nil || !strings.HasPrefix(tok.AccessToken, "cabinet_at_") {
		t.Fatalf("token %v", err)
	}

	// Outside the granted scopes: 403 with the step-up challenge.
	status, hdr, _ := o.toolCall(tok.AccessToken, "batocera_pause_game", "")
	if status != http.StatusForbidden || !strings.Contains(hdr, `error="insufficient_scope"`) || !strings.Contains(hdr, `scope="read play"`) ||
		!strings.Contains(hdr, `resource_metadata="`+o.issuer+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Fatalf("play tool with a read token: %d %q", status, hdr)
	}
	// A static token (the default: read play library) is not challenged:
	// a power tool gives today's tool error naming the scope.
	status, hdr, body := o.toolCall(o.token(), "batocera_power", `{"action":"restart_es"}`)
	if status != http.StatusOK || hdr != "" || !strings.Contains(body, "power") {
		t.Fatalf("power tool with the default token: %d %q %s", status, hdr, body)
	}
	// Without a token: 401 pointing at the metadata.
	status, hdr, _ = o.toolCall("", "batocera_get_status", "")
	if status != http.StatusUnauthorized || !strings.Contains(hdr, "resource_metadata=") {
		t.Fatalf("no token: %d %q", status, hdr)
	}

	// Refresh rotates; the old refresh token used again revokes it all.
	fresh := o.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {h.GetClientID()}, "resource": {o.issuer + "/mcp"}})
	if fresh["refresh_token"] == "" || fresh["refresh_token"] == tok.RefreshToken || fresh["scope"] != "read" {
		t.Fatalf("refresh: %v", fresh)
	}
	if status, _, _ := o.toolCall(fresh["access_token"], "batocera_get_status", ""); status != http.StatusOK {
		t.Fatalf("refreshed token: %d", status)
	}
	reuse := o.tokenRequest(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {h.GetClientID()}})
	if reuse["error"] != "invalid_grant" {
		t.Fatalf("reused refresh: %v", reuse)
	}
	if status, hdr, _ := o.toolCall(fresh["access_token"], "batocera_get_status", ""); status != http.StatusUnauthorized || !strings.Contains(hdr, "invalid_token") {
		t.Fatalf("after the reuse the family's access token: %d %q", status, hdr)
	}

	// Sign in again (a new PIN), then `cabinet clients revoke` at the CLI.
	verifier, _ = client.GenerateCodeVerifier()
	authURL, _ = h.GetAuthorizationURL(ctx, state, client.GenerateCodeChallenge(verifier))
	q, err = o.person(nil).Approve(authURL)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessAuthorizationCallback(ctx, q, verifier); err != nil {
		t.Fatal(err)
	}
	tok, _ = store.GetToken(ctx)
	out, code, _ := runCabinet(t, o.env(), "clients", "list", "--json")
	var list []struct {
		ID, Name     string
		Scopes       []string
		LastExchange *time.Time `json:"last_token_exchange"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 1 || list[0].Name != "mcp-go e2e" || list[0].LastExchange == nil {
		t.Fatalf("cabinet clients list: %d %v %s", code, err, out)
	}
	if _, code, _ := runCabinet(t, o.env(), "clients", "revoke", list[0].ID); code != 0 {
		t.Fatal("cabinet clients revoke failed")
	}
	if status, _, _ := o.toolCall(tok.AccessToken, "batocera_get_status", ""); status != http.StatusUnauthorized {
		t.Fatalf("a revoked client's access token: %d", status)
	}
	if st, detail := doctorCheck(t, o.rig, "mcp-oauth"); st != "ok" || !strings.Contains(detail, "issuer "+o.issuer) {
		t.Errorf("doctor mcp-oauth: %s %q", st, detail)
	}
}

// toolCall initializes and calls a tool with a bearer token over HTTPS,
// returning the call's status, WWW-Authenticate and body.
func (o *oauthRig) toolCall(token, tool, args string) (int, string, string) {
	o.t.Helper()
	if args == "" {
		args = "{}"
	}
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, o.issuer+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := o.https.Do(req)
		if err != nil {
			o.t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), ""
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	resp = post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// tokenRequest posts to the token endpoint and returns the answer's
// string fields.
func (o *oauthRig) tokenRequest(form url.Values) map[string]string {
	o.t.Helper()
	resp, err := o.https.PostForm(o.issuer+"/oauth/token", form)
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	out := map[string]string{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// TestOAuthConformance runs the official conformance suite's
// authorization-server scenarios (0.2.0-alpha.12 on Node 22): the metadata
// endpoint, and the authorization-code grant for a client registered
// before the run (the "pre-registered" client), its consent given by the
// person with the PIN the TV showed.
func TestOAuthConformance(t *testing.T) {
	cabinettest.Long(t, "the daemon and the conformance suite's authorization scenarios on Node 22")
	t.Parallel()
	suite := conformance.RequireAuth(t)
	o := newOAuthRig(t)
	port := conformance.CallbackPort(t)
	reg := o.register("conformance suite", conformance.RedirectURI(port))
	person := o.person(nil)
	checks, out := conformance.RunAuth(t, suite, o.issuer, "", conformance.AuthOptions{
		ClientID: reg, Resource: o.issuer + "/mcp", Port: port, Env: []string{"NODE_EXTRA_CA_CERTS=" + o.caFile},
		Browser: func(ctx context.Context, authURL string) error {
			q, err := person.Approve(authURL)
			if err != nil {
				return err
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, conformance.RedirectURI(port)+"?"+q.Encode(), nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return nil
		}})
	scenarios := map[string]bool{}
	for _, c := range checks {
		scenarios[c.Scenario] = true
		switch c.Status {
		case "SUCCESS", "INFO":
		case "WARNING":
			t.Logf("conformance warning %s: %s %s", c.ID, c.Description, c.ErrorMessage)
		default:
			t.Errorf("conformance %s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
		}
	}
	if len(scenarios) < 2 {
		t.Errorf("checks of %d scenario(s), want the metadata's and the grant's", len(scenarios))
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", out)
	}
}

// register registers a client by DCR and returns its id.
func (o *oauthRig) register(name string, redirects ...string) string {
	o.t.Helper()
	b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": redirects, "token_endpoint_auth_method": "none"})
	resp, err := o.https.Post(o.issuer+"/oauth/register", "application/json", strings.NewReader(string(b)))
	if err != nil {
		o.t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		ClientID string `json:"client_id"`
	}
	if json.NewDecoder(resp.Body).Decode(&r); resp.StatusCode != http.StatusCreated || r.ClientID == "" {
		o.t.Fatalf("register: %d", resp.StatusCode)
	}
	return r.ClientID
}

// TestOAuthSDKClient: the official TypeScript SDK's client (mcpcheck's
// OAuth provider) signs in through the PRM the 401 names, registers,
// completes the consent with the PIN from the TV, calls a tool of its
// grant, refreshes (the refresh token rotates), and steps up: a tool
// outside the grant gets 403 insufficient_scope, the SDK asks for the
// wider scope, the person approves again with a new PIN, and the call
// passes.
func TestOAuthSDKClient(t *testing.T) {
	t.Parallel()
	check := cabinettest.NewMCPCheck(t)
	o := newOAuthRig(t)
	pins := cabinettest.ServePINs(t, o.tvTexts)
	opts := cabinettest.MCPOAuth{PINURL: pins.URL, Grant: []string{"read"}, Refresh: true,
		StepUpCall: "batocera_pause_game", StepUpComplete: true}
	args := append([]string{"--url", o.issuer + "/mcp", "--call", "batocera_get_status", "--fail-on-tool-error"}, opts.Args()...)
	rep, code, stderr := check.Report(t, 3*time.Minute, append(os.Environ(), "NODE_EXTRA_CA_CERTS="+o.caFile), args...)
	if code != 0 || !rep.OK || rep.OAuth == nil {
		t.Fatalf("mcpcheck --oauth: exit %d, report %+v\nstderr: %s", code, rep, stderr)
	}
	a := rep.OAuth
	if a.Issuer != o.issuer || a.Iss != o.issuer || a.Registration != "dcr" || a.GrantedScope != "read" || !a.Refreshed || !a.RefreshRotated {
		t.Errorf("oauth report %+v", a)
	}
	if s := a.StepUp; s == nil || s.Status != "completed" || !strings.Contains(s.ChallengeScope, "play") || s.Call == nil { // (the call may be a tool error: no game runs)
		t.Errorf("step-up %+v", s)
	}
	if len(a.Failures) != 0 {
		t.Errorf("failures %v", a.Failures)
	}
}
