package fakeromm

import "net/http"

// authorize checks the caller for scope ("" for an open route) the way
// RomM's protected_route does, and answers the refusal itself. A token
// that is missing, wrong or revoked leaves the request unauthenticated
// (HybridAuthBackend returns None): 401 from 5.2, 403 before. An
// authenticated caller without the scope gets 403 in every version.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, scope string) bool {
	if scope == "" {
		return true
	}
	id, ok := s.caller(r)
	if !ok {
		if s.ver.split401 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeDetail(w, http.StatusUnauthorized, "Not authenticated")
			return false
		}
		writeDetail(w, http.StatusForbidden, "Forbidden")
		return false
	}
	if id.has(scope) {
		return true
	}
	writeDetail(w, http.StatusForbidden, "Forbidden")
	return false
}

// authenticated: r carries a token the fake accepts (see caller).
func (s *Server) authenticated(r *http.Request) bool {
	_, ok := s.caller(r)
	return ok
}

// Revoke makes Options.Token invalid from now on (tokens issued by a pair
// code or the device flow stay valid), as deleting it in RomM's UI
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
