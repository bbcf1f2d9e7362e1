package oauth

import (
	"errors"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

// ErrInvalidToken: the access token is unknown, expired or revoked.
var ErrInvalidToken = errors.New("the access token is not valid (expired or revoked): refresh it or sign in again")

// IsToken says whether tok looks like one of this server's access tokens,
// so the guard asks Verify only about those.
func IsToken(tok string) bool { return strings.HasPrefix(tok, AccessPrefix) }

// Verify checks an access token and returns its caller: the client and the
// scopes granted. A revocation (by the client, or `cabinet clients
// revoke`) takes effect here at the next request: the file is re-read
// when it changes.
func (s *Server) Verify(tok string) (httpauth.Caller, error) {
	if !IsToken(tok) {
		return httpauth.Caller{}, ErrInvalidToken
	}
	h := hashOf(tok)
	ix := s.store.read()
	if ix == nil {
		return httpauth.Caller{}, ErrInvalidToken
	}
	i, ok := ix.access[h]
	if !ok {
		return httpauth.Caller{}, ErrInvalidToken
	}
	g := ix.file.Grants[i]
	now := s.clock.Now()
	if !now.Before(g.Expires) {
		return httpauth.Caller{}, ErrInvalidToken
	}
	scopes := g.Scopes
	for _, a := range g.Access {
		if a.Hash != h {
			continue
		}
		if !now.Before(a.Expires) {
			return httpauth.Caller{}, ErrInvalidToken
		}
		if a.Scopes != nil {
			scopes = a.Scopes
		}
	}
	s.noteRequest(g.ID, g.ClientID, now)
	return CallerOf(g.ClientID, scopes), nil
}

// noteRequest records a grant's last request, at most once a minute, in
// the background: a write to the state dir must not delay the call.
func (s *Server) noteRequest(grant, client string, now time.Time) {
	s.mu.Lock()
	last, seen := s.used[grant]
	due := !seen || now.Sub(last) >= time.Minute || now.Before(last)
	if due {
		if len(s.used) > maxGrants*2 {
			clear(s.used)
		}
		s.used[grant] = now
	}
	s.mu.Unlock()
	if !due {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.store.update(func(f *stateFile) error {
			if g := f.grant(grant); g != nil {
				g.LastRequest = now
			}
			if c := f.client(client); c != nil {
				c.LastUsed = now
			}
			return nil
		})
		if err != nil {
			s.cfg.Log.Warn().Err(err).Msg("OAuth: a client's last request was not recorded")
		}
	}()
}

// Flush waits for the last-request records being written (the daemon's
// shutdown; tests).
func (s *Server) Flush() { s.wg.Wait() }
