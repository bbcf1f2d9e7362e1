package fakeromm

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Client tokens beyond Options.Token: the ones a pair code or the device
// flow hands out (endpoints/client_tokens.py, utils/client_tokens.py).
// Like RomM the fake keeps only a token's sha256. Every token belongs to
// the fake's one user (ownerID); the user holds every scope, so a token's
// scopes are the ones it was given.

// PairCodeTTL is how long a pair code is valid (PAIR_CODE_TTL_SECONDS).
const PairCodeTTL = 60 * time.Second

// pairAlphabet is RomM's PAIR_ALPHABET: no 0/O, 1/I/L.
const pairAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

type clientToken struct {
	id        int
	name      string
	scopes    []string
	deviceID  string // "" when not bound to a device
	createdAt time.Time
	expiresAt *time.Time
}

type pairCode struct {
	token   *clientToken
	expires time.Time
}

// identity is who a request authenticated as.
type identity struct {
	scopes   []string
	deviceID string // the token's device, "" for none
}

func (id identity) has(scope string) bool {
	for _, s := range id.scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// caller resolves the bearer token of r: Options.Token (unless revoked),
// or a token the fake issued that has not expired.
func (s *Server) caller(r *http.Request) (identity, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return identity{}, false
	}
	tok = strings.TrimSpace(tok)
	s.mu.Lock()
	revoked := s.revoked
	s.mu.Unlock()
	if subtle.ConstantTimeCompare([]byte(tok), []byte(s.opts.Token)) == 1 {
		return identity{scopes: s.opts.Scopes}, !revoked
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	t := s.state.tokens[tokenHash(tok)]
	if t == nil || (t.expiresAt != nil && !s.now().Before(*t.expiresAt)) {
		return identity{}, false
	}
	return identity{scopes: t.scopes, deviceID: t.deviceID}, true
}

// IssueToken creates a client token holding scopes, bound to deviceID
// ("" for none), as a user does under Profile → Client tokens in RomM's
// web UI, and returns it.
func (s *Server) IssueToken(scopes []string, deviceID string) string {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return s.issue(s.newToken("issued", scopes, deviceID))
}

// RevokeIssued deletes every token the fake issued (by a pair code or the
// device flow), as deleting them under Profile → Client tokens in RomM's
// web UI does: their requests are refused from now on. Options.Token stays
// (Revoke is for that one); devices stay.
func (s *Server) RevokeIssued() {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	clear(s.state.tokens)
}

func tokenHash(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// newRawToken is RomM's generate_client_token: "rmm_" + 64 hex digits.
func newRawToken() string {
	var b [32]byte
	rand.Read(b[:])
	return "rmm_" + hex.EncodeToString(b[:])
}

// newCode is n characters of the pair alphabet.
func newCode(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = pairAlphabet[int(b[i])%len(pairAlphabet)]
	}
	return string(b)
}

// issue stores t under a fresh raw token and returns the raw token; the
// caller holds s.state.mu.
func (s *Server) issue(t *clientToken) string {
	if s.state.tokens == nil {
		s.state.tokens = map[string]*clientToken{}
	}
	raw := newRawToken()
	s.state.tokens[tokenHash(raw)] = t
	return raw
}

// newToken makes a token row (ids after Options.Token's 1); the caller
// holds s.state.mu.
func (s *Server) newToken(name string, scopes []string, deviceID string) *clientToken {
	s.state.tokenSeq++
	return &clientToken{id: s.state.tokenSeq + 1, name: name, scopes: append([]string(nil), scopes...),
		deviceID: deviceID, createdAt: s.now()}
}

// NewPairCode mints a client token holding scopes, as a user does in
// RomM's web UI, and returns the 8-character code that POST
// /api/client-tokens/exchange trades for it within PairCodeTTL (by the
// server's clock). The token is unbound (device_id null).
func (s *Server) NewPairCode(scopes []string) string {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if s.state.pairs == nil {
		s.state.pairs = map[string]pairCode{}
	}
	code := newCode(8)
	for s.state.pairs[code].token != nil {
		code = newCode(8)
	}
	t := s.newToken("Paired token", scopes, "")
	s.state.pairs[code] = pairCode{token: t, expires: s.now().Add(PairCodeTTL)}
	return code
}

func normalizePairCode(code string) string { return strings.ToUpper(strings.ReplaceAll(code, "-", "")) }

type clientTokenCreateJSON struct {
	ID         int      `json:"id"`
	Name       string   `json:"name"`
	Scopes     []string `json:"scopes"`
	ExpiresAt  *string  `json:"expires_at"`
	LastUsedAt *string  `json:"last_used_at"`
	CreatedAt  string   `json:"created_at"`
	UserID     int      `json:"user_id"`
	DeviceID   *string  `json:"device_id"`
	RawToken   string   `json:"raw_token"`
}

// exchangePairCode is POST /api/client-tokens/exchange: open, one-shot
// (the code is deleted whether or not it was still valid, as getdel does).
// RomM also rate-limits it to 5 a minute per IP (429); the fake does not.
func (s *Server) exchangePairCode(c *call) {
	var code string
	if b, ok := readBody(c); ok {
		code, _ = b.str("code", true, 0, 0)
	}
	if !c.ready("") {
		return
	}
	key := normalizePairCode(code)
	s.state.mu.Lock()
	p, ok := s.state.pairs[key]
	delete(s.state.pairs, key)
	if !ok || !s.now().Before(p.expires) {
		s.state.mu.Unlock()
		writeDetail(c.w, http.StatusNotFound, "Invalid or expired pairing code")
		return
	}
	raw := s.issue(p.token)
	t := *p.token
	s.state.mu.Unlock()
	writeJSON(c.w, http.StatusOK, clientTokenCreateJSON{ID: t.id, Name: t.name, Scopes: emptyIfNil(t.scopes),
		CreatedAt: pyISO(t.createdAt), UserID: ownerID, DeviceID: nonEmpty(t.deviceID), RawToken: raw})
}

// pairStatus is GET /api/client-tokens/pair/{code}/status: 200 (null)
// while the code waits, 404 else.
func (s *Server) pairStatus(c *call) {
	key := normalizePairCode(c.vars["code"])
	s.state.mu.Lock()
	p, ok := s.state.pairs[key]
	live := ok && s.now().Before(p.expires)
	s.state.mu.Unlock()
	if !live {
		writeDetail(c.w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(c.w, http.StatusOK, nil)
}

// errUnknownCode is what Approve and Deny return for a code that is not
// waiting, as RomM's approve and deny answer 404.
func errUnknownCode(code string) error {
	return fmt.Errorf("fakeromm: user code %q is unknown or expired (RomM: 404 Unknown or expired code)", code)
}
