package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/oauth/cimd"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// consentCookie binds the browser that opened a consent to it: the
// __Host- prefix makes browsers keep it Secure, on this host and path /.
const consentCookie = "__Host-cabinet_consent"

// pending is the one consent waiting for its PIN.
type pending struct {
	id        string
	csrf      string
	cookie    string // hash of the browser's cookie
	pin       string
	client    Client
	verified  string // for a metadata document, the host that served it
	redirect  string
	state     string
	challenge string
	asked     []string
	created   time.Time
	expires   time.Time
	tries     int
	stop      chan struct{}
}

func (p *pending) alive(now time.Time) bool { return p != nil && now.Before(p.expires) }

// code is an authorization code (by its hash in Server.codes).
type code struct {
	clientID  string
	client    Client
	redirect  string
	challenge string
	scopes    []string
	expires   time.Time
	used      bool
	grantID   string // set at the exchange: a second use revokes it
}

// authRequest is an authorization request's parameters.
type authRequest struct {
	responseType, clientID, redirect, challenge, method, state, scope, resource string
}

// singleParams reads the parameters of an authorization request, refusing
// any of them repeated (RFC 6749 §3.1).
func singleParams(q url.Values) (authRequest, error) {
	for _, k := range []string{"response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"} {
		if len(q[k]) > 1 {
			return authRequest{}, fmt.Errorf("the parameter %s is repeated", k)
		}
		if len(q.Get(k)) > 4096 {
			return authRequest{}, fmt.Errorf("the parameter %s is too long", k)
		}
	}
	return authRequest{responseType: q.Get("response_type"), clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"),
		challenge: q.Get("code_challenge"), method: q.Get("code_challenge_method"), state: q.Get("state"),
		scope: q.Get("scope"), resource: q.Get("resource")}, nil
}

// knownScopes are the Cabinet scopes named in a space-separated scope
// parameter, in the order of httpauth.Scopes; others (openid,
// offline_access) are ignored.
func knownScopes(scope string) []string {
	fields := strings.Fields(scope)
	out := []string{}
	for _, k := range httpauth.Scopes {
		if slices.Contains(fields, k) {
			out = append(out, k)
		}
	}
	return out
}

// defaultGranted: power and household are never ticked for the person.
func defaultGranted(scope string) bool {
	return scope != httpauth.ScopePower && scope != httpauth.ScopeHousehold
}

// validChallenge: a PKCE S256 challenge is 43 base64url characters.
func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for i := 0; i < len(c); i++ {
		ch := c[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		s.authorizeGet(w, r)
	case http.MethodPost:
		s.authorizePost(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		s.page(w, http.StatusMethodNotAllowed, pageData{Title: "Not allowed", Message: "Open this page from your app's sign-in."})
	}
}

// resolveClient finds the client of a client_id: a registered one, the
// test client, or the metadata document at its URL.
func (s *Server) resolveClient(ctx context.Context, id string) (Client, string, error) {
	if id == "" {
		return Client{}, "", errors.New("the request names no client (client_id)")
	}
	if cimd.IsURL(id) {
		if s.cfg.Metadata == nil {
			return Client{}, "", errors.New("this cabinet does not read client metadata documents")
		}
		doc, err := s.cfg.Metadata.Get(ctx, id)
		if err != nil {
			return Client{}, "", fmt.Errorf("the client's metadata document could not be used: %v", err)
		}
		good, _ := goodRedirects(doc.RedirectURIs)
		if len(good) == 0 {
			return Client{}, "", errors.New("the client's metadata document has no acceptable redirect URI")
		}
		u, _ := url.Parse(id)
		return Client{ID: id, Name: untrusted.Clean(doc.ClientName, maxClientName), Kind: KindMetadata, RedirectURIs: good}, u.Host, nil
	}
	if ix := s.store.read(); ix != nil {
		if c := ix.file.client(id); c != nil {
			return *c, "", nil
		}
	}
	return Client{}, "", errors.New("this client is not registered here (it may have been removed after an hour unused, or revoked): connect it again from the app")
}

func (s *Server) authorizeGet(w http.ResponseWriter, r *http.Request) {
	req, err := singleParams(r.URL.Query())
	if err != nil {
		s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid", Message: err.Error()})
		return
	}
	client, verified, err := s.resolveClient(r.Context(), req.clientID)
	if err != nil {
		s.page(w, http.StatusBadRequest, pageData{Title: "This app cannot sign in", Message: err.Error()})
		return
	}
	redirect := req.redirect
	if redirect == "" && len(client.RedirectURIs) == 1 {
		redirect = client.RedirectURIs[0]
	}
	if redirect == "" || !redirectMatches(client.RedirectURIs, redirect) {
		// Never redirect to an address the client did not register.
		s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid",
			Message: "The app asked to return to an address it did not register; nothing was sent there."})
		return
	}
	fail := func(code, desc string) { s.redirectError(w, r, redirect, req.state, code, desc) }
	switch {
	case req.responseType != "code":
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	case req.challenge == "" || req.method != "S256":
		fail("invalid_request", "PKCE with code_challenge_method=S256 is required")
		return
	case !validChallenge(req.challenge):
		fail("invalid_request", "code_challenge must be 43 base64url characters (S256)")
		return
	case req.resource != "" && !s.sameResource(req.resource):
		fail("invalid_target", "the resource must be "+s.resource)
		return
	}
	asked := knownScopes(req.scope)
	if strings.TrimSpace(req.scope) == "" {
		asked = slices.DeleteFunc(slices.Clone(httpauth.Scopes), func(k string) bool { return !defaultGranted(k) })
	}
	if len(asked) == 0 {
		fail("invalid_scope", "ask for one of the scopes "+strings.Join(httpauth.Scopes, ", "))
		return
	}
	s.startConsent(w, r, client, verified, redirect, req, asked)
}

// startConsent makes the pending consent, or shows the one this browser
// already has, and puts its PIN on the TV.
func (s *Server) startConsent(w http.ResponseWriter, r *http.Request, client Client, verified, redirect string, req authRequest, asked []string) {
	now := s.clock.Now()
	browser := ""
	if c, err := r.Cookie(consentCookie); err == nil {
		browser = hashOf(c.Value)
	}
	if ix := s.store.read(); ix != nil && ix.file.Limits.Locked {
		s.page(w, http.StatusForbidden, pageData{Title: "Sign-in is locked", Message: lockedMessage})
		return
	}
	s.mu.Lock()
	p := s.pending
	if p.alive(now) && browser != "" && subtle.ConstantTimeCompare([]byte(browser), []byte(p.cookie)) == 1 &&
		p.client.ID == client.ID && p.redirect == redirect && p.state == req.state && p.challenge == req.challenge {
		// The same browser reloading its page: the same request.
		s.mu.Unlock()
		s.consentPage(w, http.StatusOK, p, "")
		return
	}
	if p.alive(now) {
		left := p.expires.Sub(now).Round(time.Second)
		s.mu.Unlock()
		s.page(w, http.StatusTooManyRequests, pageData{Title: "Another sign-in is waiting",
			Message: fmt.Sprintf("Someone is already signing in an app; its PIN is on the TV. Finish or cancel it, or try again in %s.", left)})
		return
	}
	if s.lastHeld && now.Sub(s.lastNew) < RequestGap && !now.Before(s.lastNew) {
		left := (RequestGap - now.Sub(s.lastNew)).Round(time.Second)
		s.mu.Unlock()
		s.page(w, http.StatusTooManyRequests, pageData{Title: "Please wait", Message: fmt.Sprintf("A sign-in was just tried. Try again in %s.", left)})
		return
	}
	// The day's count is kept in the file, so a restart does not reset it.
	var limited, locked bool
	err := s.store.update(func(f *stateFile) error {
		f.Limits.roll(now.Format(time.DateOnly))
		if f.Limits.Locked {
			locked = true
			return nil
		}
		if f.Limits.Requests >= RequestsPerDay {
			limited = true
			return nil
		}
		f.Limits.Requests++
		return nil
	})
	switch {
	case err != nil:
		s.mu.Unlock()
		s.cfg.Log.Error().Err(err).Msg("OAuth: a sign-in could not start")
		s.page(w, http.StatusInternalServerError, pageData{Title: "Sign-in is not available", Message: "The cabinet could not keep the request; its log says why."})
		return
	case locked:
		s.mu.Unlock()
		s.page(w, http.StatusForbidden, pageData{Title: "Sign-in is locked", Message: lockedMessage})
		return
	case limited:
		s.mu.Unlock()
		s.page(w, http.StatusTooManyRequests, pageData{Title: "Too many sign-ins today",
			Message: fmt.Sprintf("The cabinet takes %d sign-in requests a day. Try again tomorrow.", RequestsPerDay)})
		return
	}
	cookie := newSecret()
	p = &pending{id: newID(), csrf: newSecret(), cookie: hashOf(cookie), pin: newPIN(), client: client, verified: verified,
		redirect: redirect, state: req.state, challenge: req.challenge, asked: asked, created: now,
		expires: now.Add(RequestLife), stop: make(chan struct{})}
	s.pending, s.lastNew, s.lastHeld = p, now, true
	s.mu.Unlock()
	go s.showPIN(p)
	s.cfg.Log.Info().Str("client", client.ID).Str("name", client.Name).Str("redirect_host", redirectHost(redirect)).
		Strs("scopes", asked).Msg("OAuth: a sign-in waits for the PIN shown on the TV")
	http.SetCookie(w, &http.Cookie{Name: consentCookie, Value: cookie, Path: "/", MaxAge: int(RequestLife / time.Second),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	s.consentPage(w, http.StatusOK, p, "")
}

const lockedMessage = "Too many wrong PINs were typed today, so the cabinet refuses new sign-ins. Whoever runs the cabinet can allow them again with `cabinet clients unlock`."

// newPIN is 6 random digits.
func newPIN() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic("oauth: no randomness: " + err.Error())
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// showPIN puts the PIN on the TV now and every PINRepeat while the request
// lives (a message over a game lasts about 3 s).
func (s *Server) showPIN(p *pending) {
	if s.cfg.Screen == nil {
		return
	}
	text := fmt.Sprintf("Cabinet sign-in: %q asks to connect. PIN %s %s", p.client.Name, p.pin[:3], p.pin[3:])
	t, tick := s.clock.NewTicker(PINRepeat)
	defer t.Stop()
	for {
		if err := s.cfg.Screen.Show(context.Background(), text); err != nil {
			s.cfg.Log.Warn().Err(err).Msg("OAuth: the sign-in PIN could not be shown on the TV")
		}
		select {
		case <-p.stop:
			return
		case now := <-tick:
			if !now.Before(p.expires) {
				s.end(p)
				return
			}
		}
	}
}

// end closes a pending consent (once).
func (s *Server) end(p *pending) {
	if p == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == p {
		s.pending = nil
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
}

func (s *Server) authorizePost(w http.ResponseWriter, r *http.Request) {
	// POSTs only from the cabinet's own page: the browser names its origin.
	if o := r.Header.Get("Origin"); !strings.EqualFold(strings.TrimSuffix(o, "/"), s.issuer) {
		s.page(w, http.StatusForbidden, pageData{Title: "Not allowed", Message: "The answer must come from the cabinet's own sign-in page."})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		s.page(w, http.StatusBadRequest, pageData{Title: "Not understood", Message: "The form could not be read."})
		return
	}
	now := s.clock.Now()
	browser := ""
	if c, err := r.Cookie(consentCookie); err == nil {
		browser = hashOf(c.Value)
	}
	s.mu.Lock()
	p := s.pending
	valid := p.alive(now) && r.PostForm.Get("request") == p.id &&
		subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(p.csrf)) == 1 &&
		browser != "" && subtle.ConstantTimeCompare([]byte(browser), []byte(p.cookie)) == 1
	s.mu.Unlock()
	if !valid {
		s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in has ended",
			Message: "It expired, was answered, or was opened in another browser. Start again from your app."})
		return
	}
	if r.PostForm.Get("action") == "deny" {
		s.end(p)
		s.mu.Lock()
		s.lastHeld = true
		s.mu.Unlock()
		s.cfg.Log.Info().Str("client", p.client.ID).Msg("OAuth: a sign-in was refused on the consent page")
		s.redirectError(w, r, p.redirect, p.state, "access_denied", "the person refused")
		return
	}
	if ix := s.store.read(); ix != nil && ix.file.Limits.Locked {
		s.end(p)
		s.page(w, http.StatusForbidden, pageData{Title: "Sign-in is locked", Message: lockedMessage})
		return
	}
	pin := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, r.PostForm.Get("pin"))
	if subtle.ConstantTimeCompare([]byte(pin), []byte(p.pin)) != 1 {
		s.wrongPIN(w, r, p)
		return
	}
	granted := []string{}
	for _, k := range p.asked {
		if slices.Contains(r.PostForm["scope"], k) {
			granted = append(granted, k)
		}
	}
	if len(granted) == 0 {
		s.consentPage(w, http.StatusOK, p, "Tick at least one permission, or press Deny.")
		return
	}
	s.end(p)
	s.mu.Lock()
	s.lastHeld = false
	s.mu.Unlock()
	s.cfg.Log.Info().Str("client", p.client.ID).Str("name", p.client.Name).Strs("scopes", granted).Msg("OAuth: a sign-in was approved with the PIN")
	s.issueCode(w, r, p.client, p.redirect, p.state, p.challenge, granted)
}

// wrongPIN counts a wrong PIN: the request dies after PINTries, and sign-in
// locks after WrongPINsPerDay in a day.
func (s *Server) wrongPIN(w http.ResponseWriter, r *http.Request, p *pending) {
	now := s.clock.Now()
	locked := false
	if err := s.store.update(func(f *stateFile) error {
		f.Limits.roll(now.Format(time.DateOnly))
		f.Limits.WrongPINs++
		if f.Limits.WrongPINs >= WrongPINsPerDay {
			f.Limits.Locked = true
		}
		locked = f.Limits.Locked
		return nil
	}); err != nil {
		s.cfg.Log.Error().Err(err).Msg("OAuth: a wrong PIN could not be counted; the request is ended")
		locked = true // fail closed
	}
	s.mu.Lock()
	p.tries++
	tries := p.tries
	s.mu.Unlock()
	if locked {
		s.end(p)
		s.cfg.Log.Warn().Msg("OAuth: sign-in is locked after too many wrong PINs today; `cabinet clients unlock` allows it again")
		s.page(w, http.StatusForbidden, pageData{Title: "Sign-in is locked", Message: lockedMessage})
		return
	}
	if tries >= PINTries {
		s.end(p)
		s.cfg.Log.Warn().Str("client", p.client.ID).Msg("OAuth: a sign-in ended after 5 wrong PINs")
		s.redirectError(w, r, p.redirect, p.state, "access_denied", "the PIN was wrong 5 times")
		return
	}
	s.consentPage(w, http.StatusOK, p, fmt.Sprintf("That PIN is not the one on the TV. %d tries left.", PINTries-tries))
}

// issueCode answers with a fresh authorization code.
func (s *Server) issueCode(w http.ResponseWriter, r *http.Request, client Client, redirect, state, challenge string, scopes []string) {
	tok := newSecret()
	now := s.clock.Now()
	s.mu.Lock()
	for h, c := range s.codes {
		if !now.Before(c.expires) {
			delete(s.codes, h)
		}
	}
	if len(s.codes) >= 32 { // unused codes of a minute: a handful at most
		clear(s.codes)
	}
	s.codes[hashOf(tok)] = &code{clientID: client.ID, client: client, redirect: redirect, challenge: challenge,
		scopes: scopes, expires: now.Add(CodeLife)}
	s.mu.Unlock()
	s.redirectTo(w, r, redirect, url.Values{"code": {tok}, "state": optional(state), "iss": {s.issuer}})
}

// redirectError sends an authorization error to the client's redirect
// URI, with state and iss (RFC 9207: errors too).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, redirect, state, code, desc string) {
	s.redirectTo(w, r, redirect, url.Values{"error": {code}, "error_description": {desc}, "state": optional(state), "iss": {s.issuer}})
}

func optional(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}

func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, redirect string, params url.Values) {
	u, err := url.Parse(redirect)
	if err != nil { // checked when registered: cannot happen
		s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid", Message: "The app's return address is not valid."})
		return
	}
	q := u.Query()
	for k, v := range params {
		if len(v) > 0 {
			q[k] = v
		}
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}
