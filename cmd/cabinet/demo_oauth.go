//go:build !release

package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/tlsconf"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

// oauthDemo is an app signing in to the cabinet (cabinet.mcp.oauth): it
// registers, opens the sign-in page, the person types the PIN the
// simulated TV shows, and the app calls a tool with the token it got. The
// demo's daemon serves its own self-signed certificate, which the demo's
// app (and only it) trusts.
type oauthDemo struct {
	issuer   string // https://127.0.0.1:<port>
	stateDir string // where the self-signed certificate is
	out      io.Writer
}

// demoOAuthConfig picks the demo's MCP address, so the public URL can name
// it, and returns the config lines that turn sign-in on.
func demoOAuthConfig() (issuer string, lines []string, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	l.Close()
	issuer = "https://" + addr
	return issuer, []string{"cabinet.mcp.listen=" + addr, "cabinet.mcp.tls=self-signed", "cabinet.mcp.oauth=1", "cabinet.mcp.public_url=" + issuer}, nil
}

func (o oauthDemo) step() simulator.Step {
	return simulator.Step{Say: "an app signs in to the cabinet (OAuth, cabinet.mcp.oauth): no token to copy, a PIN on the TV",
		Do: func(ctx context.Context, cab *simulator.Cabinet) error { return o.run(ctx, cab) }, Wait: time.Second}
}

func (o oauthDemo) run(ctx context.Context, cab *simulator.Cabinet) error {
	say := func(format string, a ...any) { fmt.Fprintf(o.out, "           "+format+"\n", a...) }
	hc, err := o.client(ctx)
	if err != nil {
		return err
	}
	// 1. The app finds the authorization server from the MCP endpoint's 401.
	resp, err := hc.Post(o.issuer+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		return err
	}
	resp.Body.Close()
	say("the app calls %s/mcp without a token: %d, %s", o.issuer, resp.StatusCode, clipText(resp.Header.Get("WWW-Authenticate"), 110))
	// 2. It registers (dynamic client registration).
	const redirect = "http://127.0.0.1:33418/callback"
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if err := demoJSON(hc, o.issuer+"/oauth/register", `{"client_name":"Claude (demo)","redirect_uris":["`+redirect+`"]}`, &reg); err != nil {
		return err
	}
	say("it registers as \"Claude (demo)\": client id %s", reg.ClientID)
	// 3. The browser opens the sign-in page.
	verifier := demoSecret()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"demo"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"scope": {"read play library"}, "resource": {o.issuer + "/mcp"}}
	seen := len(tvTexts(cab))
	page, err := hc.Get(o.issuer + "/oauth/authorize?" + q.Encode())
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(page.Body, 1<<20))
	page.Body.Close()
	field := func(name string) string {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]+)"`).FindSubmatch(body)
		if m == nil {
			return ""
		}
		return string(m[1])
	}
	if page.StatusCode != http.StatusOK || field("request") == "" {
		return fmt.Errorf("the sign-in page: %d", page.StatusCode)
	}
	say("the browser shows the sign-in page: \"Claude (demo)\" (unverified name) asks to use this cabinet, returns to %s, may read, play, library", redirect)
	// 4. The TV shows the PIN; the person types it.
	demoPIN := regexp.MustCompile(`PIN (\d{3}) (\d{3})`)
	var pin, shown string
	for deadline := time.Now().Add(10 * time.Second); pin == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			return errors.New("no PIN was shown on the TV")
		}
		if texts := tvTexts(cab); len(texts) > seen {
			for _, t := range texts[seen:] {
				if m := demoPIN.FindStringSubmatch(t); m != nil {
					pin, shown = m[1]+m[2], t
				}
			}
		}
	}
	say("the TV shows: %s", shown)
	form := url.Values{"request": {field("request")}, "csrf": {field("csrf")}, "pin": {pin}, "action": {"approve"},
		"scope": {"read", "play", "library"}}
	post, _ := http.NewRequestWithContext(ctx, http.MethodPost, o.issuer+"/oauth/authorize", strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Origin", o.issuer)
	answer, err := hc.Do(post)
	if err != nil {
		return err
	}
	answer.Body.Close()
	back, _ := url.Parse(answer.Header.Get("Location"))
	if answer.StatusCode != http.StatusSeeOther || back.Query().Get("code") == "" {
		return fmt.Errorf("the approval: %d", answer.StatusCode)
	}
	say("the person types the PIN and approves: the browser returns to the app with a code (iss %s)", back.Query().Get("iss"))
	// 5. The app exchanges the code (with its PKCE verifier) for tokens.
	tok, err := hc.PostForm(o.issuer+"/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")},
		"client_id": {reg.ClientID}, "redirect_uri": {redirect}, "code_verifier": {verifier}, "resource": {o.issuer + "/mcp"}})
	if err != nil {
		return err
	}
	var tokens struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		Scope       string `json:"scope"`
	}
	json.NewDecoder(io.LimitReader(tok.Body, 1<<16)).Decode(&tokens)
	tok.Body.Close()
	if tokens.AccessToken == "" {
		return fmt.Errorf("the token exchange: %d", tok.StatusCode)
	}
	say("signed in: scopes %q, an access token for %d min (refreshed by the app within 30 days)", tokens.Scope, tokens.ExpiresIn/60)
	// 6. It calls a tool.
	init, _ := http.NewRequestWithContext(ctx, http.MethodPost, o.issuer+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"Claude (demo)","version":"1"}}}`))
	init.Header.Set("Authorization", "Bearer "+tokens.AccessToken)
	init.Header.Set("Content-Type", "application/json")
	init.Header.Set("Accept", "application/json, text/event-stream")
	ok, err := hc.Do(init)
	if err != nil {
		return err
	}
	ok.Body.Close()
	say("with it the app talks MCP: initialize answered %d; `cabinet clients list` shows it, `cabinet clients revoke` signs it out", ok.StatusCode)
	return nil
}

// client trusts the daemon's self-signed certificate, once it is made.
func (o oauthDemo) client(ctx context.Context) (*http.Client, error) {
	certFile, _ := tlsconf.SelfSignedPaths(o.stateDir)
	var pem []byte
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		b, err := os.ReadFile(certFile)
		if err == nil {
			pem = b
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("the cabinet's certificate: %w", err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

func demoJSON(hc *http.Client, u, body string, v any) error {
	resp, err := hc.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %d", u, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(v)
}

func demoSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// tvTexts are the simulated ES's notifications, oldest first.
func tvTexts(cab *simulator.Cabinet) []string {
	var out []string
	for _, c := range cab.ES.Calls() {
		if c.Route == fakees.RouteNotify {
			out = append(out, c.Body)
		}
	}
	return out
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
