package oauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// tokenResponse is a successful token answer (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// tokenError is an error of the token endpoint, with its status.
type tokenError struct {
	status      int
	code, descr string
}

func (e *tokenError) Error() string { return e.code + ": " + e.descr }

func badGrant(descr string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_grant", descr}
}

// readForm reads a bounded application/x-www-form-urlencoded POST body,
// refusing repeated parameters (RFC 6749 §3.2: they must not be included
// more than once).
func readForm(w http.ResponseWriter, r *http.Request) (url.Values, *tokenError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST, OPTIONS")
		return nil, &tokenError{http.StatusMethodNotAllowed, "invalid_request", "use POST"}
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "send the parameters as application/x-www-form-urlencoded"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "the parameters could not be read"}
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return nil, &tokenError{http.StatusBadRequest, "invalid_request", "the parameter " + clip(k) + " is repeated"}
		}
	}
	return r.PostForm, nil
}

// clientIDOf is the client_id of a token request: the parameter, or the
// user of HTTP Basic (a client that registered for client_secret_basic
// was told "none", but may send it so); both must agree.
func clientIDOf(r *http.Request, form url.Values) (string, *tokenError) {
	id := form.Get("client_id")
	if u, _, ok := r.BasicAuth(); ok {
		u, err := url.QueryUnescape(u)
		if err != nil || (id != "" && u != id) {
			return "", &tokenError{http.StatusUnauthorized, "invalid_client", "the client is named twice, differently"}
		}
		id = u
	}
	return id, nil
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	form, terr := readForm(w, r)
	if terr == nil {
		var resp tokenResponse
		switch form.Get("grant_type") {
		case "authorization_code":
			resp, terr = s.exchangeCode(r, form)
		case "refresh_token":
			resp, terr = s.refresh(r, form)
		case "":
			terr = &tokenError{http.StatusBadRequest, "invalid_request", "grant_type is required"}
		default:
			terr = &tokenError{http.StatusBadRequest, "unsupported_grant_type", "use authorization_code or refresh_token"}
		}
		if terr == nil {
			w.Header().Set("Pragma", "no-cache")
			writeJSON(w, http.StatusOK, resp)
			return
		}
	}
	if terr.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="cabinet"`)
	}
	writeJSON(w, terr.status, oauthError{Error: terr.code, Description: terr.descr})
}

// s256 is a PKCE verifier's S256 challenge.
func s256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// validVerifier: 43 to 128 unreserved characters (RFC 7636 §4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

func (s *Server) exchangeCode(r *http.Request, form url.Values) (tokenResponse, *tokenError) {
	clientID, terr := clientIDOf(r, form)
	if terr != nil {
		return tokenResponse{}, terr
	}
	raw := form.Get("code")
	if raw == "" {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_request", "code is required"}
	}
	if res := form.Get("resource"); res != "" && !s.sameResource(res) {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_target", "the resource must be " + s.resource}
	}
	now := s.clock.Now()
	h := hashOf(raw)
	s.mu.Lock()
	c := s.codes[h]
	var reused string
	already := false
	switch {
	case c == nil:
	case c.used:
		already, reused = true, c.grantID
	case !now.Before(c.expires):
		delete(s.codes, h)
		c = nil
	default:
		c.used = true // from here a second use, even a concurrent one, fails
	}
	s.mu.Unlock()
	if already {
		// A code used twice was stolen or replayed: what it gave is revoked.
		if reused != "" {
			s.store.update(func(f *stateFile) error { f.dropGrant(reused); return nil })
		}
		s.cfg.Log.Warn().Str("client", clientID).Msg("OAuth: an authorization code was used twice; its tokens are revoked")
		return tokenResponse{}, badGrant("the code was already used")
	}
	if c == nil {
		return tokenResponse{}, badGrant("the code is not valid or has expired (codes last 60 s and work once)")
	}
	if clientID != c.clientID {
		return tokenResponse{}, badGrant("the code was issued to another client")
	}
	if ru := form.Get("redirect_uri"); ru != "" && ru != c.redirect {
		return tokenResponse{}, badGrant("redirect_uri differs from the authorization request's")
	}
	v := form.Get("code_verifier")
	if !validVerifier(v) {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE: 43 to 128 characters)"}
	}
	if subtle.ConstantTimeCompare([]byte(s256(v)), []byte(c.challenge)) != 1 {
		return tokenResponse{}, badGrant("code_verifier does not match the code_challenge")
	}
	access, refresh := AccessPrefix+newSecret(), RefreshPrefix+newSecret()
	g := Grant{ID: newID(), ClientID: c.clientID, Scopes: c.scopes, RedirectHost: redirectHost(c.redirect), Created: now,
		Expires: now.Add(SessionLife), LastExchange: now, Access: []hashed{{Hash: hashOf(access), Expires: now.Add(AccessLife)}},
		Refresh: hashOf(refresh)}
	err := s.store.update(func(f *stateFile) error {
		cl := f.client(c.clientID)
		switch {
		case cl != nil:
			cl.LastUsed = now
		case c.client.Kind == KindRegistered:
			return errors.New("the client was removed while it signed in")
		default: // a metadata document's client: known from now on
			if len(f.Clients) >= MaxClients {
				return errFull
			}
			nc := c.client
			nc.Created, nc.LastUsed = now, now
			f.Clients = append(f.Clients, nc)
		}
		f.Grants = append(f.Grants, g)
		f.bound()
		return nil
	})
	if err != nil {
		s.cfg.Log.Error().Err(err).Str("client", c.clientID).Msg("OAuth: tokens could not be issued")
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_grant", "the tokens could not be kept: " + err.Error()}
	}
	s.mu.Lock()
	c.grantID = g.ID
	s.mu.Unlock()
	s.cfg.Log.Info().Str("client", c.clientID).Str("grant", g.ID).Strs("scopes", g.Scopes).Msg("OAuth: a client signed in")
	return tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(AccessLife / time.Second),
		RefreshToken: refresh, Scope: strings.Join(g.Scopes, " ")}, nil
}

func (s *Server) refresh(r *http.Request, form url.Values) (tokenResponse, *tokenError) {
	clientID, terr := clientIDOf(r, form)
	if terr != nil {
		return tokenResponse{}, terr
	}
	raw := form.Get("refresh_token")
	if raw == "" {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_request", "refresh_token is required"}
	}
	if res := form.Get("resource"); res != "" && !s.sameResource(res) {
		return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_target", "the resource must be " + s.resource}
	}
	var scopes []string
	if sc := form.Get("scope"); sc != "" {
		scopes = knownScopes(sc)
		if len(scopes) == 0 {
			return tokenResponse{}, &tokenError{http.StatusBadRequest, "invalid_scope", "ask for scopes the sign-in granted"}
		}
	}
	now := s.clock.Now()
	h := hashOf(raw)
	access, refresh := AccessPrefix+newSecret(), RefreshPrefix+newSecret()
	var out tokenResponse
	var reuse bool
	fail := func(e *tokenError) error { terr = e; return e }
	err := s.store.update(func(f *stateFile) error {
		i := slices.IndexFunc(f.Grants, func(g Grant) bool { return g.Refresh == h })
		if i < 0 {
			// A rotated refresh token used again: whoever holds the family
			// is not to be trusted; all of it is revoked (OAuth 2.1 §4.3.1).
			j := slices.IndexFunc(f.Grants, func(g Grant) bool { return slices.Contains(g.UsedRefresh, h) })
			if j < 0 {
				return fail(badGrant("the refresh token is not valid: sign in again"))
			}
			reuse = true
			clientID = f.Grants[j].ClientID
			f.dropGrant(f.Grants[j].ID)
			return nil
		}
		g := &f.Grants[i]
		if clientID != "" && clientID != g.ClientID {
			return fail(badGrant("the refresh token was issued to another client"))
		}
		granted := g.Scopes
		if scopes != nil {
			for _, k := range scopes {
				if !slices.Contains(g.Scopes, k) {
					return fail(&tokenError{http.StatusBadRequest, "invalid_scope", "the scope " + k + " was not granted: sign in again to ask for it"})
				}
			}
			granted = scopes
		}
		g.UsedRefresh = append(g.UsedRefresh, g.Refresh)
		if n := len(g.UsedRefresh) - maxUsedRefresh; n > 0 {
			g.UsedRefresh = slices.Delete(g.UsedRefresh, 0, n)
		}
		g.Refresh, g.LastExchange = hashOf(refresh), now
		a := hashed{Hash: hashOf(access), Expires: now.Add(AccessLife)}
		if scopes != nil {
			a.Scopes = granted
		}
		g.Access = append(g.Access, a)
		if n := len(g.Access) - maxLiveAccess; n > 0 {
			g.Access = slices.Delete(g.Access, 0, n)
		}
		if cl := f.client(g.ClientID); cl != nil {
			cl.LastUsed = now
		}
		out = tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(AccessLife / time.Second),
			RefreshToken: refresh, Scope: strings.Join(granted, " ")}
		return nil
	})
	if terr != nil {
		return tokenResponse{}, terr
	}
	if err != nil {
		s.cfg.Log.Error().Err(err).Msg("OAuth: a refresh could not be kept")
		return tokenResponse{}, &tokenError{http.StatusInternalServerError, "server_error", "the new tokens could not be kept; the cabinet's log says why"}
	}
	if reuse {
		s.cfg.Log.Warn().Str("client", clientID).Msg("OAuth: a used refresh token came back; the whole sign-in is revoked")
		return tokenResponse{}, badGrant("the refresh token was already used: the sign-in is revoked; sign in again")
	}
	return out, nil
}

// serveRevoke is RFC 7009: the grant a token belongs to is revoked, its
// refresh and access tokens with it; an unknown token is no error.
func (s *Server) serveRevoke(w http.ResponseWriter, r *http.Request) {
	form, terr := readForm(w, r)
	if terr == nil && form.Get("token") == "" {
		terr = &tokenError{http.StatusBadRequest, "invalid_request", "token is required"}
	}
	var clientID string
	if terr == nil {
		clientID, terr = clientIDOf(r, form)
	}
	if terr != nil {
		writeJSON(w, terr.status, oauthError{Error: terr.code, Description: terr.descr})
		return
	}
	h := hashOf(form.Get("token"))
	var revoked, foreign bool
	err := s.store.update(func(f *stateFile) error {
		for _, g := range f.Grants {
			if g.Refresh != h && !slices.ContainsFunc(g.Access, func(a hashed) bool { return a.Hash == h }) {
				continue
			}
			if clientID != "" && clientID != g.ClientID {
				foreign = true
				return nil
			}
			revoked = f.dropGrant(g.ID)
			return nil
		}
		return nil
	})
	switch {
	case err != nil:
		s.cfg.Log.Error().Err(err).Msg("OAuth: a revocation could not be kept")
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, oauthError{Error: "temporarily_unavailable", Description: "try again"})
	case foreign:
		writeJSON(w, http.StatusBadRequest, oauthError{Error: "unauthorized_client", Description: "the token was issued to another client"})
	default:
		if revoked {
			s.cfg.Log.Info().Str("client", clientID).Msg("OAuth: a client revoked its sign-in")
		}
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	}
}
