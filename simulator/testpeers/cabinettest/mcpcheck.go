package cabinettest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// MCPCheck is the independent MCP client on the official TypeScript SDK,
// kept in the repository for CI (.ci/mcpcheck/README.md), set up for one
// test.
type MCPCheck struct {
	// Path is the script.
	Path string
	// home is the test's own MCPCHECK_HOME: every run copies mcpcheck.mjs
	// into its home, and a copy rewritten while a parallel test's node
	// reads it would be a flake. It shares the installed node_modules.
	home string
}

// MCPReport is the part of mcpcheck's JSON document the tests read.
type MCPReport struct {
	OK              bool     `json:"ok"`
	ProtocolVersion string   `json:"protocolVersion"`
	Warnings        []string `json:"warnings"`
	Tools           []struct {
		Name            string         `json:"name"`
		Title           string         `json:"title"`
		Annotations     map[string]any `json:"annotations"`
		HasOutputSchema bool           `json:"hasOutputSchema"`
	} `json:"tools"`
	Call *struct {
		IsError bool `json:"isError"`
		// Progress are the notifications/progress received (with --progress).
		Progress []map[string]any `json:"progress"`
		// Logs are the params of the notifications/message received (the
		// client sets the level with --log-level).
		Logs   []map[string]any `json:"logs"`
		Result struct {
			Content           []map[string]any `json:"content"`
			StructuredContent map[string]any   `json:"structuredContent"`
		} `json:"result"`
	} `json:"call"`
	Error *struct {
		Name    string `json:"name"`
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// OAuth is the sign-in's account (with MCPOAuth's options); nil without
	// --oauth.
	OAuth *MCPOAuthReport `json:"oauth"`
	// Steps are the --steps run, in order; the first whose OK is false is
	// the last (FailedStep).
	Steps []MCPStep `json:"steps"`
	// Updates are the notifications/resources/updated received, in order.
	Updates []MCPUpdate `json:"updates"`
	// Elicitations are the elicitation/create requests received (with
	// --elicit).
	Elicitations []MCPElicitation `json:"elicitations"`
}

// MCPStep is one step of --steps (build them with Steps).
type MCPStep struct {
	Op string `json:"op"`
	// OK: the step went as expected (succeeded, or failed with
	// ExpectError).
	OK bool `json:"ok"`
	// Ms is how long it took.
	Ms          float64 `json:"ms"`
	ExpectError bool    `json:"expectError"`
	// Result is the op's result when it succeeded: read: the contents
	// ([{uri, mimeType, text}] or [{uri, mimeType, blobBytes, blobMagic}]);
	// waitUpdate: {uri, at} (ms after the step started); getPrompt: the
	// GetPromptResult; complete: the completion ({values, total, hasMore});
	// call: the CallToolResult; the list ops: the listed objects.
	// subscribe, unsubscribe, noUpdate and mark have none.
	Result json.RawMessage `json:"result"`
	// Error is what the op got when it failed (a timeout is code -32001).
	Error *MCPStepError `json:"error"`
	// Failure says why OK is false.
	Failure string `json:"failure"`
}

// MCPStepError is a step's error: Code is the JSON-RPC code (or an HTTP
// status), 0 when there is none (a waitUpdate that timed out, a noUpdate
// that found one).
type MCPStepError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// MCPUpdate is a notifications/resources/updated: At is when it came, in
// ms after mcpcheck started.
type MCPUpdate struct {
	URI string  `json:"uri"`
	At  float64 `json:"at"`
}

// MCPElicitation is an elicitation/create request mcpcheck answered.
type MCPElicitation struct {
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema"`
	// Mode is as sent: "" when absent (form).
	Mode string `json:"mode"`
	// Action is the answer (--elicit): accept, decline, cancel or hang;
	// Content what accept sent.
	Action  string         `json:"action"`
	Content map[string]any `json:"content"`
	// Cancelled: the server cancelled the request (notifications/cancelled).
	Cancelled bool `json:"cancelled"`
}

// FailedStep is the step that did not go as expected, or nil.
func (r MCPReport) FailedStep() *MCPStep {
	for i := range r.Steps {
		if !r.Steps[i].OK {
			return &r.Steps[i]
		}
	}
	return nil
}

// Steps is mcpcheck's --steps argument: the steps as a JSON array, e.g.
//
//	cabinettest.Steps(
//		map[string]any{"op": "subscribe", "uri": "cabinet://status"},
//		map[string]any{"op": "mark", "name": "subscribed"},
//		map[string]any{"op": "waitUpdate", "uri": "cabinet://status", "timeoutMs": 5000},
//		map[string]any{"op": "read", "uri": "cabinet://status"},
//	)
//
// A step that cannot be marshalled panics.
func Steps(steps ...map[string]any) string {
	if steps == nil {
		steps = []map[string]any{}
	}
	b, err := json.Marshal(steps)
	if err != nil {
		panic(fmt.Sprintf("cabinettest.Steps: %v", err))
	}
	return string(b)
}

// NewMCPCheck finds the script and makes sure node and the SDK are there,
// installing the SDK once (mcpcheck's first run does `npm ci` into its
// cache) under a lock so that parallel test processes do not race to
// install it. A missing node, npm or SDK skips t, or fails it with
// CABINET_REQUIRE_PEERS=1: call it before starting anything.
func NewMCPCheck(t testing.TB) *MCPCheck {
	t.Helper()
	path, cache, err := installMCPCheck()
	peertest.RequirePeer(t, err)
	home := t.TempDir()
	if err := os.Symlink(filepath.Join(cache, "node_modules"), filepath.Join(home, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return &MCPCheck{Path: path, home: home}
}

// Command is mcpcheck with args, env (nil: this process's environment)
// plus the test's MCPCHECK_HOME.
func (m *MCPCheck) Command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.CommandContext(ctx, m.Path, args...)
	cmd.Env = append(append([]string(nil), env...), "MCPCHECK_HOME="+m.home)
	return cmd
}

// Run runs mcpcheck with args for at most d and returns its stdout (the
// JSON document), its stderr (its diagnostics and a stdio server's) and its
// exit code. A run that cannot start or hangs fails t.
func (m *MCPCheck) Run(t testing.TB, d time.Duration, env []string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := m.Command(ctx, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || ctx.Err() != nil {
			t.Fatalf("mcpcheck %v: %v\nstderr: %s", args, err, errb.String())
		}
		code = exit.ExitCode()
	}
	return out.Bytes(), errb.Bytes(), code
}

// Report runs mcpcheck like Run and parses the one JSON document it prints;
// output that is not one fails t.
func (m *MCPCheck) Report(t testing.TB, d time.Duration, env []string, args ...string) (rep MCPReport, code int, stderr string) {
	t.Helper()
	out, errb, code := m.Run(t, d, env, args...)
	return parseReport(t, args, out, errb, code), code, string(errb)
}

// parseReport is mcpcheck's JSON document; output that is not one fails t.
func parseReport(t testing.TB, args []string, out, errb []byte, code int) (rep MCPReport) {
	t.Helper()
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("mcpcheck %v: exit %d, output is not its JSON report (%v)\nstdout: %s\nstderr: %s", args, code, err, out, errb)
	}
	return rep
}

// MCPRun is mcpcheck running in the background (Start), its stderr read
// as it comes so that a test can wait for the --steps marks.
type MCPRun struct {
	args   []string
	cancel context.CancelFunc
	ctx    context.Context
	stdout bytes.Buffer
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's, set before done is closed

	mu      sync.Mutex
	stderr  bytes.Buffer
	line    []byte          // the stderr line being written
	marks   map[string]bool // the MCPCHECK MARK names seen
	changed chan struct{}   // closed (and replaced) at each mark
}

// Start runs mcpcheck with args in the background for at most d (then it
// is killed and Wait fails t). Its stderr is kept (Stderr) and watched for
// the "MCPCHECK MARK <name>" lines of --steps' mark op (WaitMark). Call
// Wait for the report; a run not waited for is killed when t ends.
func (m *MCPCheck) Start(t testing.TB, d time.Duration, env []string, args ...string) *MCPRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	r := &MCPRun{args: args, cancel: cancel, ctx: ctx, done: make(chan struct{}),
		marks: map[string]bool{}, changed: make(chan struct{})}
	cmd := m.Command(ctx, env, args...)
	cmd.Stdout, cmd.Stderr = &r.stdout, (*mcpStderr)(r)
	// A stdio server that outlives node must not keep Wait waiting for the pipe.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("mcpcheck %v: %v", args, err)
	}
	go func() {
		r.err = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// mcpStderr is MCPRun's stderr writer.
type mcpStderr MCPRun

func (w *mcpStderr) Write(p []byte) (int, error) {
	r := (*MCPRun)(w)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stderr.Write(p)
	r.line = append(r.line, p...)
	for {
		i := bytes.IndexByte(r.line, '\n')
		if i < 0 {
			break
		}
		if name, ok := strings.CutPrefix(strings.TrimRight(string(r.line[:i]), "\r"), "MCPCHECK MARK "); ok {
			r.marks[name] = true
			close(r.changed)
			r.changed = make(chan struct{})
		}
		r.line = r.line[i+1:]
	}
	return len(p), nil
}

// Stderr is mcpcheck's stderr so far (its diagnostics, its marks and a
// stdio server's stderr).
func (r *MCPRun) Stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// WaitMark waits until mcpcheck has written the mark name (at any time
// since it started: give each mark its own name), for at most timeout. It
// fails if mcpcheck exits first.
func (r *MCPRun) WaitMark(name string, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		r.mu.Lock()
		seen, changed := r.marks[name], r.changed
		r.mu.Unlock()
		if seen {
			return nil
		}
		select {
		case <-changed:
		case <-r.done:
			r.mu.Lock()
			seen = r.marks[name]
			r.mu.Unlock()
			if seen {
				return nil
			}
			return fmt.Errorf("mcpcheck exited without the mark %q (%v)%s\nstderr: %s", name, r.err, r.why(), lastLines(r.Stderr(), 20))
		case <-timer.C:
			return fmt.Errorf("mcpcheck wrote no mark %q within %v\nstderr: %s", name, timeout, lastLines(r.Stderr(), 20))
		}
	}
}

// why is what the report of a finished run says went wrong, for messages.
func (r *MCPRun) why() string {
	var rep MCPReport
	if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
		return "\nstdout: " + lastLines(r.stdout.String(), 10)
	}
	if f := rep.FailedStep(); f != nil {
		return ": step " + f.Op + ": " + f.Failure
	}
	if rep.Error != nil {
		return ": " + rep.Error.Message
	}
	return ""
}

// Wait waits for mcpcheck to exit and returns its report, its exit code
// and its stderr, like Report. A run that hung past Start's d, or whose
// output is not its report, fails t.
func (r *MCPRun) Wait(t testing.TB) (rep MCPReport, code int, stderr string) {
	t.Helper()
	<-r.done
	r.cancel()
	if r.err != nil {
		var exit *exec.ExitError
		if !errors.As(r.err, &exit) || errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("mcpcheck %v: %v\nstderr: %s", r.args, r.err, r.Stderr())
		}
		code = exit.ExitCode()
	}
	errb := r.Stderr()
	return parseReport(t, r.args, r.stdout.Bytes(), []byte(errb), code), code, errb
}

// installMCPCheck returns the script and the cache holding the SDK,
// installing it first if it is not there.
func installMCPCheck() (path, cache string, err error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", "", fmt.Errorf("node is not installed; mcpcheck needs Node 18+: %w", err)
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(root, ".ci", "mcpcheck", "mcpcheck")
	if _, err := os.Stat(path); err != nil {
		return "", "", fmt.Errorf("mcpcheck not found: %w", err)
	}
	// Where the script installs the SDK (its own rule).
	cache = os.Getenv("MCPCHECK_HOME")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			base = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		cache = filepath.Join(base, "mcpcheck")
	}
	sdk := filepath.Join(cache, "node_modules", "@modelcontextprotocol", "sdk")
	if _, err := os.Stat(sdk); err == nil {
		return path, cache, nil
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "cabinet-mcpcheck-install.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", "", err
	}
	if _, err := os.Stat(sdk); err == nil {
		return path, cache, nil // another process installed it meanwhile
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", "", fmt.Errorf("npm is not installed; mcpcheck needs it to install the SDK: %w", err)
	}
	// --help exits 1 after the install; the help text proves node runs the SDK client.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("--stdio")) {
		// mcpcheck silences npm; say where to look.
		return "", "", fmt.Errorf("mcpcheck could not install @modelcontextprotocol/sdk from npm (is the registry reachable? "+
			"run `npm ci` in $MCPCHECK_HOME or ~/.cache/mcpcheck to see why) %s", lastLines(string(out), 5))
	}
	if _, err := os.Stat(sdk); err != nil {
		return "", "", fmt.Errorf("mcpcheck ran, but its SDK is not where expected: %w", err)
	}
	return path, cache, nil
}

// lastLines is the end of s, for messages.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// MCPOAuth are mcpcheck's OAuth options: it signs in through the cabinet's
// authorization server both as the MCP client (the SDK's
// OAuthClientProvider) and as the person at the consent page, who reads
// the PIN from PINURL. Pass Args after the other arguments:
//
//	rep, code, stderr := check.Report(t, d, env, append([]string{"--url", url, "--call", "batocera_get_status"},
//		cabinettest.MCPOAuth{PINURL: pins.URL, Grant: []string{"read"}, StepUpCall: "batocera_pause_game", StepUpComplete: true}.Args()...)...)
//
// The server's certificate must be trusted by node: with a test CA, put
// NODE_EXTRA_CA_CERTS=<ca.pem> in env.
type MCPOAuth struct {
	// PINURL answers the PIN shown on the TV as plain text (PINs.URL);
	// needed unless Deny.
	PINURL string
	// Grant are the scopes to tick on the consent page; nil: those the
	// page ticks by default.
	Grant []string
	// CIMD is a Client ID Metadata Document URL the client uses as its
	// client_id when the server supports them (else it registers).
	CIMD string
	// Refresh: after signing in, the stored access token is made invalid,
	// so the next request is refused and the SDK refreshes (the report
	// says whether the tokens changed and the refresh token rotated).
	Refresh bool
	// StepUpCall is a tool outside the granted scopes, called after the
	// main call (--oauth-step-up): the 403 insufficient_scope must come
	// back as a new authorization asking for its scope. StepUpArgs are its
	// arguments (JSON; default {}).
	StepUpCall string
	StepUpArgs string
	// StepUpComplete: consent again (a new PIN), then the call must pass.
	StepUpComplete bool
	// StepUpSDKOnly leaves the step-up to the SDK alone, which refreshes
	// instead of asking for the scope (1.32.2): the report then says
	// stepUp.status "refused".
	StepUpSDKOnly bool
	// Deny presses Deny: the run ends with the client told access_denied.
	Deny bool
	// WrongPIN types a wrong PIN once before the right one.
	WrongPIN bool
}

// Args are o as mcpcheck's arguments, --oauth first.
func (o MCPOAuth) Args() []string {
	args := []string{"--oauth"}
	add := func(k, v string) {
		if v != "" {
			args = append(args, k, v)
		}
	}
	add("--oauth-pin-url", o.PINURL)
	if o.Grant != nil {
		args = append(args, "--oauth-grant", strings.Join(o.Grant, " "))
	}
	add("--oauth-cimd", o.CIMD)
	flags := []struct {
		on   bool
		name string
	}{{o.Refresh, "--oauth-refresh"}, {o.StepUpCall != "", "--oauth-step-up"}, {o.StepUpComplete, "--oauth-step-up-complete"},
		{o.StepUpSDKOnly, "--oauth-step-up-sdk-only"}, {o.Deny, "--oauth-deny"}, {o.WrongPIN, "--oauth-wrong-pin"}}
	for _, f := range flags {
		if f.on {
			args = append(args, f.name)
		}
	}
	add("--step-up-call", o.StepUpCall)
	add("--step-up-args", o.StepUpArgs)
	return args
}

// MCPOAuthReport is the "oauth" part of mcpcheck's report. It never holds
// a token, a code or the PIN.
type MCPOAuthReport struct {
	// Issuer is the authorization server metadata's; AuthorizationServer
	// the protected resource metadata's (they must be the same).
	Issuer              string `json:"issuer"`
	AuthorizationServer string `json:"authorizationServer"`
	// Resource is what the SDK sent as the authorization request's
	// resource (RFC 8707); "" when it sent none.
	Resource string `json:"resource"`
	ClientID string `json:"clientId"`
	// Registration is "dcr" or "cimd".
	Registration  string `json:"registration"`
	CIMDSupported bool   `json:"cimdSupported"`
	// AuthorizationURL is the first authorization request (its state
	// hidden); RequestedScope its scope.
	AuthorizationURL string `json:"authorizationUrl"`
	RequestedScope   string `json:"requestedScope"`
	// Offered are the consent page's checkboxes; Ticked those sent.
	Offered []MCPConsentScope `json:"offered"`
	Ticked  []string          `json:"ticked"`
	// GrantedScope is the token answer's scope; Iss the callback's iss
	// (checked against Issuer: a mismatch is exit 4).
	GrantedScope string `json:"grantedScope"`
	Iss          string `json:"iss"`
	// Refreshed: with Refresh, the SDK got new tokens after the 401;
	// RefreshRotated: the refresh token changed too.
	Refreshed      bool `json:"refreshed"`
	RefreshRotated bool `json:"refreshRotated"`
	// WrongPIN is the consent page's answer to the wrong PIN.
	WrongPIN *struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	} `json:"wrongPin"`
	// Denied is the error the client got back after Deny.
	Denied *struct {
		Error       string `json:"error"`
		Description string `json:"description"`
		Iss         string `json:"iss"`
	} `json:"denied"`
	StepUp *MCPStepUp `json:"stepUp"`
	// Invalidated is what the SDK told the provider to forget
	// (invalidateCredentials: "tokens" after invalid_grant, "all" after
	// invalid_client).
	Invalidated []string `json:"invalidated"`
	// Failures are the --oauth-* expectations that failed (exit 4).
	Failures []string `json:"failures"`
	// Requests are the OAuth requests and the MCP endpoint's 401 and 403,
	// in order (to see what the SDK did).
	Requests []MCPOAuthRequest `json:"requests"`
}

// MCPConsentScope is one checkbox of the consent page.
type MCPConsentScope struct {
	Scope   string `json:"scope"`
	Checked bool   `json:"checked"`
}

// MCPStepUp is what became of the call outside the granted scopes.
type MCPStepUp struct {
	Tool string `json:"tool"`
	// Status is "challenged" (the SDK asked for a new authorization that
	// includes ChallengeScope), "completed" (with StepUpComplete: consented
	// again and the call passed), "refused" (the SDK gave up with the
	// 403), "allowed" (no 403: the call was within the scopes) or
	// "failed".
	Status string `json:"status"`
	// ChallengeScope is the 403's WWW-Authenticate scope.
	ChallengeScope   string `json:"challengeScope"`
	AuthorizationURL string `json:"authorizationUrl"`
	RequestedScope   string `json:"requestedScope"`
	// SDKRefreshed: the SDK spent the refresh token on the 403 first.
	SDKRefreshed bool   `json:"sdkRefreshed"`
	Completed    bool   `json:"completed"`
	GrantedScope string `json:"grantedScope"`
	Error        string `json:"error"`
	Call         *struct {
		IsError bool `json:"isError"`
	} `json:"call"`
}

// MCPOAuthRequest is one request mcpcheck saw: no query or secret values;
// Params are a form's or a registration's parameter names, with the
// values of grant_type and scope.
type MCPOAuthRequest struct {
	Method string   `json:"method"`
	Path   string   `json:"path"`
	Status int      `json:"status"`
	Params []string `json:"params"`
	// WWWAuthenticate is a 401's or 403's challenge.
	WWWAuthenticate string `json:"wwwAuthenticate"`
}

// pinRE finds the PIN in what the cabinet shows on the TV ("Cabinet
// sign-in: "mcpcheck" asks to connect. PIN 123 456").
var pinRE = regexp.MustCompile(`PIN (\d{3}) ?(\d{3})`)

// PINIn is the PIN in a text the cabinet showed, without its space.
func PINIn(text string) (string, bool) {
	m := pinRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// PINHandler answers mcpcheck's --oauth-pin-url from shown (the texts the
// cabinet put on the TV so far, oldest first): each GET gets, as
// text/plain, the newest PIN among them that no GET got before (every
// sign-in shows a new one; the TV repeats it while it waits), waiting up
// to wait for one and otherwise answering 425 Too Early, which mcpcheck
// retries until its timeout.
func PINHandler(shown func() []string, wait time.Duration) http.Handler {
	var (
		mu     sync.Mutex
		served = map[string]bool{}
	)
	next := func() (string, bool) {
		texts := shown()
		mu.Lock()
		defer mu.Unlock()
		for i := len(texts) - 1; i >= 0; i-- {
			if pin, ok := PINIn(texts[i]); ok && !served[pin] {
				served[pin] = true
				return pin, true
			}
		}
		return "", false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "GET only", http.StatusMethodNotAllowed)
			return
		}
		deadline := time.Now().Add(wait)
		for {
			if pin, ok := next(); ok {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.Header().Set("Cache-Control", "no-store")
				fmt.Fprintln(w, pin)
				return
			}
			if time.Now().After(deadline) {
				http.Error(w, "no new PIN on the TV yet", http.StatusTooEarly)
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// PINs serves PINHandler on a loopback HTTP server for the test's life.
type PINs struct {
	// URL is mcpcheck's --oauth-pin-url (MCPOAuth.PINURL).
	URL string
}

// ServePINs serves the PINs in shown until t ends. With the fake ES (this
// package cannot import it: its tests import this one), shown is the
// bodies of its /notify calls:
//
//	pins := cabinettest.ServePINs(t, func() (texts []string) {
//		for _, c := range es.Calls() {
//			if c.Route == fakees.RouteNotify {
//				texts = append(texts, c.Body)
//			}
//		}
//		return texts
//	})
func ServePINs(t testing.TB, shown func() []string) *PINs {
	t.Helper()
	srv := httptest.NewServer(PINHandler(shown, 2*time.Second))
	t.Cleanup(srv.Close)
	return &PINs{URL: srv.URL + "/pin"}
}
