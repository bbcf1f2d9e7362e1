package romm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Outcomes of polling RomM's device authorization (RFC 8628 §3.5 names). RomM answers each as a 400
// whose detail is exactly the name (endpoints/device_auth.py, token()).
var (
	// ErrAuthorizationPending: the user has not approved yet; poll again after the interval.
	ErrAuthorizationPending = errors.New("RomM is waiting for the user to approve the cabinet")
	// ErrSlowDown: the cabinet polled inside the interval (or RomM's 60 polls a minute per address
	// were used up); wait 5 s longer between polls from now on (RFC 8628 §3.5).
	ErrSlowDown = errors.New("RomM asked the cabinet to poll less often")
	// ErrAccessDenied: the user refused the cabinet in RomM (or, for a pair code, the token's owner is
	// disabled).
	ErrAccessDenied = errors.New("RomM refused the cabinet")
	// ErrExpiredToken: the code expired, was already used, or RomM never issued it; start again.
	ErrExpiredToken = errors.New("the RomM sign-in code expired")
)

// DeviceInitRequest describes the cabinet to RomM when it asks to be approved. RomM shows these to
// the user on its approval page; Identifier is the stable id RomM uses to find the same device again
// (an install id), Scopes what the cabinet asks for (the user may narrow them).
type DeviceInitRequest struct {
	Identifier, Name, Client, Platform, ClientVersion string
	Scopes                                            []string
}

// DeviceCode is RomM's answer to DeviceInit. DeviceCode is the polling secret: it goes back to
// DeviceToken and nowhere else (not into logs). UserCode and VerificationURL are for the screen.
type DeviceCode struct {
	DeviceCode, UserCode string
	// VerificationURL is RomM's approval page with the user code filled in: the client's base URL
	// (scheme, host, port and any path prefix of cabinet.romm.url) joined with RomM's
	// verification_path_complete. It never holds the token or the device code.
	VerificationURL string
	// ExpiresIn is how long the code lives (RomM: 10 minutes; capped here at 30); Interval the
	// least time between polls (RomM: 5 s; 1–60 s here).
	ExpiresIn, Interval time.Duration
}

// String hides the polling secret.
func (d DeviceCode) String() string {
	return fmt.Sprintf("{UserCode:%s VerificationURL:%s ExpiresIn:%s Interval:%s}", d.UserCode, d.VerificationURL, d.ExpiresIn, d.Interval)
}

// GoString hides the polling secret from %#v.
func (d DeviceCode) GoString() string { return "romm.DeviceCode" + d.String() }

// DeviceToken is a client token RomM issued to the cabinet (by device authorization or a pair code).
// Token is the bearer secret itself: store it (0600), hand it to WithToken, never print it. The
// String, GoString and MarshalJSON methods leave it out, so %v, %+v, %#v and JSON logging show
// "[token]".
type DeviceToken struct {
	Token     string
	DeviceID  string // "" when RomM bound the token to no device (a pair code for an unbound token)
	Scopes    []string
	ExpiresAt time.Time // zero: never
}

func (t DeviceToken) String() string {
	exp := "never"
	if !t.ExpiresAt.IsZero() {
		exp = t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("{Token:[token] DeviceID:%s Scopes:%v ExpiresAt:%s}", t.DeviceID, t.Scopes, exp)
}

// GoString hides the token from %#v.
func (t DeviceToken) GoString() string { return "romm.DeviceToken" + t.String() }

// MarshalJSON hides the token from JSON (a logger's Interface field). To store it, write t.Token.
func (t DeviceToken) MarshalJSON() ([]byte, error) {
	var exp *time.Time
	if !t.ExpiresAt.IsZero() {
		exp = &t.ExpiresAt
	}
	return json.Marshal(struct {
		Token     string     `json:"token"`
		DeviceID  string     `json:"device_id"`
		Scopes    []string   `json:"scopes"`
		ExpiresAt *time.Time `json:"expires_at"`
	}{"[token]", t.DeviceID, t.Scopes, exp})
}

// Bounds of RomM's DeviceAuthInitPayload (endpoints/responses/device_auth.py), in characters.
const (
	maxIdentifier    = 255
	maxDeviceName    = 255
	maxClientField   = 50 // client, platform, client_version
	maxScopesPerAuth = 22 // len(Scope) in 5.3
	maxDeviceCode    = 128
	maxUserCode      = 32
	maxVerification  = 512
	maxCodeLifetime  = 30 * time.Minute
)

// DeviceInit starts RomM's device authorization (5.0+): show the returned UserCode and
// VerificationURL, then poll DeviceToken every Interval until it answers a token or an error other
// than ErrAuthorizationPending / ErrSlowDown. The route is open and rate limited by RomM (10 a
// minute per address); it sends no token.
func (c *Client) DeviceInit(ctx context.Context, r DeviceInitRequest) (DeviceCode, error) {
	body, err := r.payload()
	if err != nil {
		return DeviceCode{}, err
	}
	if err := c.requireDeviceAuth(ctx); err != nil {
		return DeviceCode{}, err
	}
	w := writeRequest{request: request{path: "/api/auth/device/init", noAuth: true, max: maxJSON}, method: http.MethodPost, body: body}
	status, resp, err := c.send(ctx, w)
	if err != nil {
		return DeviceCode{}, err
	}
	switch {
	case status == http.StatusTooManyRequests:
		return DeviceCode{}, newError(ErrSlowDown, nil, "RomM refused to start another sign-in (more than 10 a minute from this address): wait a minute and try again")
	case status == http.StatusUnprocessableEntity:
		return DeviceCode{}, newError(ErrInvalid, nil, "RomM rejected the sign-in request (422)%s: check the cabinet's name and the scopes it asks for", quoteDetail(scrubTokens(c.detail(resp))))
	case status < 200 || status > 299:
		return DeviceCode{}, c.writeStatusError(&w, status, resp)
	}
	return c.decodeDeviceCode(resp)
}

// requireDeviceAuth gates the device flow on 5.0 with advice for older RomM.
func (c *Client) requireDeviceAuth(ctx context.Context) error {
	v, err := c.Version(ctx)
	if err != nil {
		return err
	}
	switch {
	case !v.AtLeast(4, 8):
		return newError(ErrUnsupported, nil, "RomM %s has neither device sign-in (5.0) nor client tokens (4.8): upgrade RomM", v)
	case !v.AtLeast(5, 0):
		return newError(ErrUnsupported, nil,
			"RomM %s has no device sign-in (it came in 5.0): pair with a code instead (RomM → Profile → Client tokens → Pair), or put a client token in cabinet.romm.token_file", v)
	}
	return nil
}

type deviceInitPayload struct {
	Identifier    string   `json:"client_device_identifier"`
	Name          string   `json:"name"`
	Client        string   `json:"client"`
	Platform      *string  `json:"platform,omitempty"`
	ClientVersion *string  `json:"client_version,omitempty"`
	Scopes        []string `json:"requested_scopes"`
}

func (r DeviceInitRequest) payload() (deviceInitPayload, error) {
	p := deviceInitPayload{Identifier: r.Identifier, Name: r.Name, Client: r.Client}
	for _, f := range []struct {
		name, value string
		required    bool
		max         int
	}{
		{"identifier", r.Identifier, true, maxIdentifier},
		{"name", r.Name, true, maxDeviceName},
		{"client", r.Client, true, maxClientField},
		{"platform", r.Platform, false, maxClientField},
		{"client version", r.ClientVersion, false, maxClientField},
	} {
		if err := checkField("device sign-in", f.name, f.value, f.required, f.max); err != nil {
			return p, err
		}
	}
	if r.Platform != "" {
		p.Platform = &r.Platform
	}
	if r.ClientVersion != "" {
		p.ClientVersion = &r.ClientVersion
	}
	if len(r.Scopes) == 0 || len(r.Scopes) > maxScopesPerAuth {
		return p, newError(ErrInvalid, nil, "device sign-in asks for %d scopes: ask for 1 to %d of RomM's scopes", len(r.Scopes), maxScopesPerAuth)
	}
	seen := make(map[string]bool, len(r.Scopes))
	for _, s := range r.Scopes {
		if !knownScope(s) {
			return p, newError(ErrInvalid, nil, "device sign-in asks for %q, which is not a RomM scope (such as roms.read)", cleanLine(s, 40))
		}
		if !seen[s] {
			seen[s] = true
			p.Scopes = append(p.Scopes, s)
		}
	}
	return p, nil
}

// checkField bounds one text the cabinet sends: valid UTF-8, no control characters, at most max
// characters (RomM's limits count characters), not empty when required.
func checkField(op, name, s string, required bool, max int) error {
	switch {
	case s == "" && required:
		return newError(ErrInvalid, nil, "%s: the %s is empty", op, name)
	case !utf8.ValidString(s):
		return newError(ErrInvalid, nil, "%s: the %s is not valid UTF-8", op, name)
	case utf8.RuneCountInString(s) > max:
		return newError(ErrInvalid, nil, "%s: the %s is longer than %d characters", op, name, max)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return newError(ErrInvalid, nil, "%s: the %s holds a control character", op, name)
	}
	return nil
}

// knownScope reports RomM's Scope names (handler/auth/constants.py, 4.0–5.4).
func knownScope(s string) bool {
	switch s {
	case "me.read", "me.write", "roms.read", "roms.write", "roms.user.read", "roms.user.write",
		"platforms.read", "platforms.write", "assets.read", "assets.write", "devices.read", "devices.write",
		"firmware.read", "firmware.write", "collections.read", "collections.write",
		"playlists.read", "playlists.write", "users.read", "users.write", "tasks.run", "logs.read":
		return true
	}
	return false
}

// DeviceToken polls RomM once for the outcome of a device sign-in. Until the user approves, it
// returns an error that Is ErrAuthorizationPending (poll again after the interval) or ErrSlowDown
// (add 5 s to the interval); ErrAccessDenied and ErrExpiredToken end the flow. RomM hands the token
// out once: a second poll after success answers ErrExpiredToken.
func (c *Client) DeviceToken(ctx context.Context, deviceCode string) (DeviceToken, error) {
	if !deviceCodeOK(deviceCode) {
		return DeviceToken{}, newError(ErrInvalid, nil, "the device code is not one RomM issues (1–%d visible characters): start the sign-in again", maxDeviceCode)
	}
	if err := c.requireDeviceAuth(ctx); err != nil {
		return DeviceToken{}, err
	}
	w := writeRequest{request: request{path: "/api/auth/device/token", noAuth: true, max: maxJSON},
		method: http.MethodPost, body: map[string]string{"device_code": deviceCode}, secrets: []string{deviceCode}}
	status, body, err := c.send(ctx, w)
	if err != nil {
		return DeviceToken{}, err
	}
	if status >= 200 && status <= 299 {
		return decodeDeviceToken(body)
	}
	return DeviceToken{}, c.deviceTokenError(&w, status, body)
}

// deviceTokenError maps RomM's refusals of a poll. The 400 details are RomM's constants; anything
// else is reported as it is.
func (c *Client) deviceTokenError(w *writeRequest, status int, body []byte) error {
	if status == http.StatusTooManyRequests {
		return newError(ErrSlowDown, nil, "RomM refused the poll (more than 60 a minute from this address): wait a minute, then poll less often")
	}
	if status == http.StatusBadRequest {
		switch c.detail(body) {
		case "authorization_pending":
			return newError(ErrAuthorizationPending, nil, "RomM is waiting for the sign-in to be approved: keep showing the code and poll again after the interval")
		case "slow_down":
			return newError(ErrSlowDown, nil, "RomM asked the cabinet to poll less often: wait 5 s longer between polls")
		case "access_denied":
			return newError(ErrAccessDenied, nil, "the sign-in was refused in RomM: start again if that was a mistake")
		case "expired_token":
			return newError(ErrExpiredToken, nil, "the sign-in code expired or was already used (codes last 10 minutes): start the sign-in again")
		}
	}
	return c.writeStatusError(w, status, body)
}

// deviceCodeOK accepts what can be sent back verbatim: RomM issues 64 hex digits; up to 128 visible
// ASCII characters other than quotes and backslash are accepted (DeviceAuthTokenPayload).
func deviceCodeOK(s string) bool {
	if s == "" || len(s) > maxDeviceCode {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Pair codes (utils/client_tokens.py): 8 characters from PAIR_ALPHABET, which leaves out I, L, O,
// 0 and 1. RomM uppercases the code and drops dashes before looking it up.
const (
	pairAlphabet   = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
	pairCodeLength = 8
)

// normalizePairCode is RomM's normalisation (dashes out, upper case) plus spaces out; "" when the
// result is not a pair code.
func normalizePairCode(code string) string {
	if len(code) > 4*pairCodeLength {
		return ""
	}
	s := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(s) != pairCodeLength {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(pairAlphabet, s[i]) < 0 {
			return ""
		}
	}
	return s
}

// ExchangePairCode trades a pair code from RomM's web UI (Profile → Client tokens → Pair, 4.8+) for
// the token it stands for. The code is checked before anything is sent; RomM allows 5 tries a
// minute per address, and a code lives 60 s and works once. An unknown, expired or used code is
// ErrExpiredToken; a token whose owner is disabled is ErrAccessDenied.
func (c *Client) ExchangePairCode(ctx context.Context, code string) (DeviceToken, error) {
	norm := normalizePairCode(code)
	if norm == "" {
		return DeviceToken{}, newError(ErrInvalid, nil, "a RomM pair code is %d letters and digits (no I, L, O, 0 or 1): type the code RomM shows", pairCodeLength)
	}
	v, err := c.Version(ctx)
	if err != nil {
		return DeviceToken{}, err
	}
	if !v.AtLeast(4, 8) {
		return DeviceToken{}, newError(ErrUnsupported, nil, "RomM %s has no pair codes (they came in 4.8): upgrade RomM", v)
	}
	w := writeRequest{request: request{path: "/api/client-tokens/exchange", noAuth: true, max: maxJSON},
		method: http.MethodPost, body: map[string]string{"code": norm}, secrets: []string{norm, code}}
	status, body, err := c.send(ctx, w)
	if err != nil {
		return DeviceToken{}, err
	}
	switch {
	case status >= 200 && status <= 299:
		return decodeExchange(body)
	case status == http.StatusNotFound:
		// "Invalid or expired pairing code", or "Token no longer exists" (deleted meanwhile).
		return DeviceToken{}, newError(ErrExpiredToken, nil, "RomM does not know this pair code, or it expired or was used (codes last 60 s): press Pair in RomM again and type the new code")
	case status == http.StatusForbidden:
		return DeviceToken{}, newError(ErrAccessDenied, nil, "RomM refused the pair code: the user who owns the token is disabled; ask RomM's admin")
	case status == http.StatusTooManyRequests:
		return DeviceToken{}, newError(ErrSlowDown, nil, "RomM refused the pair code (more than 5 tries a minute from this address): wait a minute, then press Pair in RomM again")
	}
	return DeviceToken{}, c.writeStatusError(&w, status, body)
}

// WithToken is a copy of the client that sends another bearer token (a paired one): the same base
// URL, CA, transport, timeout and clock, and the version already read.
func (c *Client) WithToken(token string) (*Client, error) {
	if token == "" || checkToken(token) != nil {
		return nil, newError(ErrInvalid, nil, "the new RomM token cannot be used (empty, longer than %d characters, or holding characters a token cannot have): pair again", maxToken)
	}
	n := &Client{base: c.base, token: token, timeout: c.timeout, now: c.now}
	hc := *c.http
	hc.CheckRedirect = n.checkRedirect // bound to n: it redacts n's token
	n.http = &hc
	c.mu.Lock()
	n.version, n.versionAt, n.haveVersion = c.version, c.versionAt, c.haveVersion
	c.mu.Unlock()
	return n, nil
}

// verificationURL joins RomM's relative approval path with the client's base. A path that is not
// relative to RomM's origin (a scheme, a host, "//", a backslash) is refused: the screen would send
// the user elsewhere.
func (c *Client) verificationURL(path, userCode string) (string, bool) {
	if path == "" || len(path) > maxVerification || path[0] != '/' || strings.HasPrefix(path, "//") {
		return "", false
	}
	for i := 0; i < len(path); i++ {
		if ch := path[i]; ch <= ' ' || ch >= 0x7f || ch == '\\' || ch == '#' {
			return "", false
		}
	}
	p, err := url.Parse(path)
	if err != nil || p.Scheme != "" || p.Host != "" || p.User != nil || p.Opaque != "" {
		return "", false
	}
	u := *c.base
	u.Path = c.base.Path + p.Path
	u.RawPath = ""
	q := p.Query()
	q.Set("user_code", userCode) // the code on the screen and in the link are the same
	u.RawQuery = q.Encode()
	return u.String(), true
}

func quoteDetail(d string) string {
	if d == "" {
		return ""
	}
	return fmt.Sprintf(": RomM says %q", d)
}
