package fakeromm

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// authorize checks the caller for scope ("" for an open route) the way
// RomM's protected_route does, and answers the refusal itself. A token
// that is missing, wrong or revoked leaves the request unauthenticated
// (HybridAuthBackend returns None): 401 from 5.2, 403 before. An
// authenticated caller without the scope gets 403 in every version.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, scope string) bool {
	if scope == "" {
		return true
	}
	if !s.authenticated(r) {
		if s.ver.split401 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeDetail(w, http.StatusUnauthorized, "Not authenticated")
			return false
		}
		writeDetail(w, http.StatusForbidden, "Forbidden")
		return false
	}
	for _, sc := range s.opts.Scopes {
		if sc == scope {
			return true
		}
	}
	writeDetail(w, http.StatusForbidden, "Forbidden")
	return false
}

func (s *Server) authenticated(r *http.Request) bool {
	s.mu.Lock()
	revoked := s.revoked
	s.mu.Unlock()
	if revoked {
		return false
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.opts.Token)) == 1
}

// Revoke makes the token invalid from now on, as deleting it in RomM's UI
// does mid-session; Restore makes it valid again.
func (s *Server) Revoke() {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// Restore undoes Revoke.
func (s *Server) Restore() {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = false
}
