package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

func TestMetadata(t *testing.T) {
	k := newKit(t)
	for _, p := range []string{PathPRM, PathPRM + ResourcePath} {
		resp, body := k.get(p)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, resp.Header)
		}
		var prm protectedResource
		json.Unmarshal([]byte(body), &prm)
		if prm.Resource != k.ts.URL+"/mcp" || !slices.Equal(prm.AuthorizationServers, []string{k.ts.URL}) ||
			!slices.Equal(prm.ScopesSupported, httpauth.Scopes) {
			t.Errorf("%s: %+v", p, prm)
		}
	}
	resp, body := k.get(PathASMetadata)
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.StatusCode, body)
	}
	m := mustJSON(t, body)
	want := map[string]any{"issuer": k.ts.URL, "authorization_endpoint": k.ts.URL + PathAuthorize, "token_endpoint": k.ts.URL + PathToken,
		"registration_endpoint": k.ts.URL + PathRegister, "revocation_endpoint": k.ts.URL + PathRevoke,
		"authorization_response_iss_parameter_supported": true, "client_id_metadata_document_supported": false}
	for key, v := range want {
		if m[key] != v {
			t.Errorf("%s = %v, want %v", key, m[key], v)
		}
	}
	for key, v := range map[string]string{"code_challenge_methods_supported": "S256", "token_endpoint_auth_methods_supported": "none",
		"grant_types_supported": "refresh_token", "response_types_supported": "code"} {
		if !slices.Contains(toStrings(m[key]), v) {
			t.Errorf("%s = %v, want it to list %s", key, m[key], v)
		}
	}
	resp, body = k.get("/.well-known/openid-configuration")
	if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("other well-known: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// Over plain HTTP from the LAN nothing is served (OAuth needs HTTPS); a
// proxy on the cabinet (loopback) is served.
func TestServedOnlyOverTLSOrLoopback(t *testing.T) {
	k := newKit(t)
	mux := http.NewServeMux()
	k.srv.Routes(mux)
	for _, tc := range []struct {
		remote string
		want   int
	}{{"192.168.1.20:5000", http.StatusNotFound}, {"[fd00::3]:5000", http.StatusNotFound}, {"127.0.0.1:5000", http.StatusOK}, {"[::1]:5000", http.StatusOK}} {
		for _, p := range []string{PathPRM, PathASMetadata} {
			r := httptest.NewRequest(http.MethodGet, "http://cabinet.example"+p, nil)
			r.RemoteAddr = tc.remote
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != tc.want || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s from %s: %d %s", p, tc.remote, w.Code, w.Header().Get("Content-Type"))
			}
		}
	}
}

func TestIssuer(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://Cabinet.Example.ts.net:8717", "https://cabinet.example.ts.net:8717"},
		{"https://cabinet.example/", "https://cabinet.example"},
		{"http://cabinet.example", ""}, {"https://cabinet.example/mcp", ""}, {"https://u@cabinet.example", ""},
		{"https://cabinet.example?x=1", ""}, {"cabinet.example", ""}, {"", ""},
	} {
		got, err := Issuer(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("Issuer(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestSignInRefreshRevoke(t *testing.T) {
	k := newKit(t)
	redirect := "http://127.0.0.1:33418/callback"
	client := k.register(redirect)
	tok := k.signIn(client, redirect, "read play library power", []string{"read", "play"})
	if str(tok, "token_type") != "Bearer" || tok["expires_in"] != float64(3600) || str(tok, "scope") != "read play" {
		t.Fatalf("token answer %v", tok)
	}
	at, rt := str(tok, "access_token"), str(tok, "refresh_token")
	caller, err := k.srv.Verify(at)
	if err != nil || !caller.OAuth || !slices.Equal(caller.Scopes, []string{"read", "play"}) || caller.Name != CallerPrefix+client {
		t.Fatalf("Verify = %+v, %v", caller, err)
	}
	// Nothing secret is kept: the file has hashes only.
	b, _ := os.ReadFile(k.state)
	if strings.Contains(string(b), at) || strings.Contains(string(b), rt) || strings.Contains(string(b), at[len(AccessPrefix):]) {
		t.Fatal("a token is kept in clear in oauth.json")
	}
	// Refresh rotates; the old refresh token used again revokes the family.
	resp, tok2 := k.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}, "resource": {k.srv.Resource() + "/"}})
	if resp.StatusCode != http.StatusOK || str(tok2, "refresh_token") == rt || str(tok2, "access_token") == at {
		t.Fatalf("refresh: %d %v", resp.StatusCode, tok2)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token answer Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
	at2 := str(tok2, "access_token")
	if _, err := k.srv.Verify(at2); err != nil {
		t.Fatal(err)
	}
	// The session does not grow with rotation.
	_, grants, _, _ := Clients(k.state, k.clock.Now())
	if len(grants) != 1 || !grants[0].Expires.Equal(grants[0].Created.Add(SessionLife)) {
		t.Fatalf("grants %+v", grants)
	}
	resp, e := k.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}})
	if resp.StatusCode != http.StatusBadRequest || str(e, "error") != "invalid_grant" {
		t.Fatalf("reused refresh: %d %v", resp.StatusCode, e)
	}
	for _, tk := range []string{at, at2} {
		if _, err := k.srv.Verify(tk); err == nil {
			t.Error("an access token of a revoked family still passes")
		}
	}
	resp, e = k.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok2, "refresh_token")}, "client_id": {client}})
	if str(e, "error") != "invalid_grant" {
		t.Fatalf("the family's newest refresh token after a reuse: %d %v", resp.StatusCode, e)
	}

	// A new sign-in, revoked through RFC 7009 by its refresh token.
	k.clock.Advance(time.Minute)
	tok = k.signIn(client, "http://127.0.0.1:40001/callback", "read", []string{"read"}) // any loopback port
	resp, _ = k.postForm(PathRevoke, url.Values{"token": {str(tok, "refresh_token")}, "token_type_hint": {"refresh_token"}, "client_id": {client}})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	if _, err := k.srv.Verify(str(tok, "access_token")); err == nil {
		t.Error("the access token of a revoked refresh token still passes")
	}
	resp, _ = k.postForm(PathRevoke, url.Values{"token": {"cabinet_rt_unknown"}})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("revoking an unknown token: %d, want 200", resp.StatusCode)
	}

	// `cabinet clients revoke` (the file changed by another process) takes
	// effect at the next request, access tokens included.
	k.clock.Advance(time.Minute)
	tok = k.signIn(client, redirect, "read", []string{"read"})
	if _, err := k.srv.Verify(str(tok, "access_token")); err != nil {
		t.Fatal(err)
	}
	if n, err := Revoke(k.state, client, k.clock.Now()); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if _, err := k.srv.Verify(str(tok, "access_token")); err == nil {
		t.Error("a revoked client's access token still passes")
	}
}

func TestAccessTokenExpires(t *testing.T) {
	k := newKit(t)
	redirect := "https://client.example/cb"
	client := k.register(redirect)
	tok := k.signIn(client, redirect, "read", []string{"read"})
	k.clock.Advance(AccessLife)
	if _, err := k.srv.Verify(str(tok, "access_token")); err == nil {
		t.Fatal("an access token passes after its hour")
	}
	resp, tok2 := k.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok, "refresh_token")}, "client_id": {client}})
	if resp.StatusCode != http.StatusOK {
		t.Fatal(tok2)
	}
	k.clock.Advance(SessionLife)
	resp, e := k.postForm(PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {str(tok2, "refresh_token")}, "client_id": {client}})
	if str(e, "error") != "invalid_grant" {
		t.Fatalf("refresh after the 30-day session: %d %v", resp.StatusCode, e)
	}
}

func TestRegistration(t *testing.T) {
	k := newKit(t)
	post := func(body string, ctype string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, k.ts.URL+PathRegister, strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		resp, b := k.do(req)
		var m map[string]any
		json.Unmarshal([]byte(b), &m)
		return resp, m
	}
	// Cursor's registration: one private-use scheme, one https, one
	// loopback — and a bad one, which is dropped, not the registration.
	resp, m := post(`{"client_name":"Cursor\u202e evil","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://cursor.com/oauth/cb","http://localhost:8787/callback","http://evil.example/cb","javascript:alert(1)"],"token_endpoint_auth_method":"client_secret_post"}`, "application/json")
	if resp.StatusCode != http.StatusCreated {
		t.Fatal(resp.StatusCode, m)
	}
	if got := toStrings(m["redirect_uris"]); !slices.Equal(got, []string{"cursor://anysphere.cursor-mcp/oauth/callback", "https://cursor.com/oauth/cb", "http://localhost:8787/callback"}) {
		t.Errorf("redirect_uris %v", got)
	}
	if m["token_endpoint_auth_method"] != "none" || strings.ContainsRune(str(m, "client_name"), '\u202e') || strings.HasPrefix(str(m, "client_id"), "https://") {
		t.Errorf("registration %v", m)
	}
	for _, tc := range []struct{ body, ctype, code string }{
		{`{"redirect_uris":["http://evil.example/cb"]}`, "application/json", "invalid_redirect_uri"},
		{`{"redirect_uris":[]}`, "application/json", "invalid_client_metadata"},
		{`{"redirect_uris":"https://x.example/cb"}`, "application/json", "invalid_client_metadata"},
		{`[1]`, "application/json", "invalid_client_metadata"},
		{`{"redirect_uris":["https://x.example/cb"]}`, "text/plain", "invalid_client_metadata"},
		{`{"redirect_uris":["https://x.example/cb"],"grant_types":["client_credentials"]}`, "application/json", "invalid_client_metadata"},
		{`{"redirect_uris":["https://x.example/cb"],"x":"` + strings.Repeat("a", 20<<10) + `"}`, "application/json", "invalid_client_metadata"},
	} {
		resp, m := post(tc.body, tc.ctype)
		if resp.StatusCode != http.StatusBadRequest || str(m, "error") != tc.code {
			t.Errorf("%.60s: %d %v, want %s", tc.body, resp.StatusCode, m, tc.code)
		}
	}
	// A flood is refused; nothing more is kept.
	for i := 1; i < registrationsPerHour; i++ {
		k.register("https://x.example/cb")
	}
	resp, m = post(`{"redirect_uris":["https://x.example/cb"]}`, "application/json")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("registration %d in an hour: %d %v", registrationsPerHour+1, resp.StatusCode, m)
	}
	clients, _, _, _ := Clients(k.state, k.clock.Now())
	if len(clients) != registrationsPerHour {
		t.Errorf("%d clients kept", len(clients))
	}
	// Registrations no code exchange followed are dropped after an hour.
	k.clock.Advance(UnusedClientTTL)
	if clients, _, _, _ := Clients(k.state, k.clock.Now()); len(clients) != 0 {
		t.Errorf("%d unused registrations kept after an hour", len(clients))
	}
}

func TestCheckRedirect(t *testing.T) {
	for _, tc := range []struct{ uri, class string }{
		{"https://claude.ai/api/mcp/auth_callback", RedirectHTTPS},
		{"http://127.0.0.1:33418/callback", RedirectLoopback},
		{"http://localhost/callback", RedirectLoopback},
		{"http://[::1]:8080/cb", RedirectLoopback},
		{"cursor://anysphere.cursor-mcp/oauth/callback", RedirectApp},
		{"com.example.app:/oauth2redirect", RedirectApp},
		{"http://192.168.1.5/cb", ""}, {"http://localhost.evil.example/cb", ""}, {"https://x.example/cb#frag", ""},
		{"https://user@x.example/cb", ""}, {"/relative", ""}, {"javascript:alert(1)", ""}, {"data:text/html,hi", ""},
		{"file:///etc/passwd", ""}, {"https://x.example/c b", ""}, {"https:///cb", ""}, {"", ""},
	} {
		got, err := CheckRedirect(tc.uri)
		if got != tc.class || (err == nil) != (tc.class != "") {
			t.Errorf("CheckRedirect(%q) = %q, %v; want %q", tc.uri, got, err, tc.class)
		}
	}
}
