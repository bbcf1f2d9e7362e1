package fakeromm

import (
	"net/http"
	"sync"
	"time"
)

// Scopes RomM defines for writes (handler/auth/constants.py WRITE_SCOPES).
const (
	ScopeMeWrite          = "me.write"
	ScopeAssetsWrite      = "assets.write"
	ScopeDevicesWrite     = "devices.write"
	ScopeRomsUserWrite    = "roms.user.write"
	ScopeCollectionsWrite = "collections.write"
)

// WriteScopes is RomM's WRITE_SCOPES: ReadScopes and the write scopes,
// what a token for a cabinet that registers a device and reports play
// sessions is given.
func WriteScopes() []string {
	return append(ReadScopes(), ScopeMeWrite, ScopeAssetsWrite, ScopeDevicesWrite, ScopeRomsUserWrite,
		ScopeCollectionsWrite, "playlists.write")
}

// writeState is what clients write and the credentials they obtain: the
// rows RomM keeps in its database (devices, client tokens, play sessions)
// and the keys it keeps in Redis (pair codes, device-flow requests,
// activity). Its zero value is empty and ready; its maps are made on
// first write. It has its own lock, never held while taking s.mu.
type writeState struct {
	mu    sync.Mutex
	clock func() time.Time

	tokens   map[string]*clientToken // by sha256 of the raw token
	tokenSeq int
	pairs    map[string]pairCode // by pair code

	flows     map[string]*deviceFlow // by device_code
	userCodes map[string]string      // user_code -> device_code, while pending
	flowSeq   int
	interval  time.Duration // 0: DefaultPollInterval
	expiresIn time.Duration // 0: DefaultDeviceCodeTTL

	devices []*Device

	heartbeats []Heartbeat
	active     map[string]*Activity // by device id (one user)

	sessions   []PlaySession
	sessionSeq int

	saves saveStore // saves, device syncs, sync sessions (saves.go)

	failWrites int
}

// FailWrites makes the write routes (POST /api/devices, POST and DELETE
// /api/activity/heartbeat, POST /api/play-sessions, and the save-sync
// writes: negotiate, upload, downloaded, track, complete) answer status once a
// request is authorized, as a RomM whose database is failing answers; 0
// turns it off. A 500 is Starlette's text/plain "Internal Server Error",
// any other status {"detail": "<status text>"}. For slow writes use
// SetFaults(Faults{Path: "/api/play-sessions", Latency: d}).
func (s *Server) FailWrites(status int) {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s.state.failWrites = status
}

// failWritesAnswered answers the FailWrites status when one is set and
// reports whether it did.
func (s *Server) failWritesAnswered(w http.ResponseWriter) bool {
	s.state.mu.Lock()
	code := s.state.failWrites
	s.state.mu.Unlock()
	if code == 0 {
		return false
	}
	if code == http.StatusInternalServerError {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		w.Write([]byte("Internal Server Error"))
		return true
	}
	writeDetail(w, code, http.StatusText(code))
	return true
}

// writeReady is ready for a write route: 422, then the scope, then FailWrites.
func (c *call) writeReady(scope string) bool {
	return c.ready(scope) && !c.s.failWritesAnswered(c.w)
}

// writeRoutes registers the write side: client tokens and devices (4.8+),
// the device flow, activity, play sessions and save sync (5.0+).
func (s *Server) writeRoutes(rt *router) {
	v5 := func(v version) bool { return v.simpleRoute }
	rt.add("POST", "/api/client-tokens/exchange", nil, s.exchangePairCode)
	rt.add("GET", "/api/client-tokens/pair/{code}/status", nil, s.pairStatus)
	rt.add("GET", "/api/devices", nil, s.listDevices)
	rt.add("POST", "/api/devices", nil, s.registerDevice)
	rt.add("GET", "/api/devices/{device_id}", nil, s.getDevice)
	rt.add("POST", "/api/auth/device/init", v5, s.deviceAuthInit)
	rt.add("POST", "/api/auth/device/token", v5, s.deviceAuthToken)
	rt.add("GET", "/api/activity", v5, s.listActivity)
	rt.add("POST", "/api/activity/heartbeat", v5, s.deviceHeartbeat)
	rt.add("DELETE", "/api/activity/heartbeat", v5, s.clearDeviceActivity)
	rt.add("GET", "/api/activity/rom/{rom_id}", v5, s.listActivity)
	rt.add("GET", "/api/play-sessions", v5, s.listPlaySessions)
	rt.add("POST", "/api/play-sessions", v5, s.ingestPlaySessions)
	s.saveRoutes(rt)
}
