package fakees

import "time"

// Route names under which action requests are recorded.
const (
	RouteQuit         = "quit"
	RouteRestart      = "restart"
	RouteShutdown     = "shutdown"
	RouteEmuKill      = "emukill"
	RouteLaunch       = "launch"
	RouteNotify       = "notify"
	RouteMessageBox   = "messagebox"
	RouteReloadGames  = "reloadgames"
	RouteAddGames     = "addgames"
	RouteRemoveGames  = "removegames"
	RouteMetadata     = "metadata"     // POST /systems/{sys}/games/{id}
	RouteMediaUpload  = "media-upload" // POST /systems/{sys}/games/{id}/media/{type}
	RouteStorageEvent = "storage-event"
)

// maxCalls bounds the call log of a long-running simulator; counts stay exact.
const maxCalls = 1024

// Call is one recorded action request. The fake records every request that
// changes, or on a real cabinet would change, something, so tests can prove
// which ones a client sent (and that it never sent /quit, /restart,
// /shutdown, /addgames, /removegames or uploads). None of them deletes
// anything here.
type Call struct {
	Route  string // one of the Route constants
	Method string
	Path   string // decoded URL path
	Body   string
	At     time.Time // the Server's clock
}

func (s *Server) record(route, method, path string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[route]++
	if len(s.calls) == maxCalls {
		s.calls = append(s.calls[:0], s.calls[1:]...)
	}
	s.calls = append(s.calls, Call{Route: route, Method: method, Path: path, Body: string(body), At: s.clock.Now()})
}

// Calls returns the most recent recorded action requests, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallCount is how many requests hit route since the Server was created.
func (s *Server) CallCount(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[route]
}
