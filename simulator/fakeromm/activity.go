package fakeromm

import (
	"fmt"
	"net/http"
	"sort"
	"time"
)

// Live activity (endpoints/activity.py, handler/activity_handler.py; RomM
// 5.0+): a device heartbeats while a game runs, RomM keeps one entry per
// user and device for ActivityTTL after the last heartbeat (a Redis key),
// and GET /api/activity lists the live ones. Expiry is by the server's
// clock (SetClock).

// ActivityTTL is how long an entry outlives its last heartbeat (ACTIVITY_TTL).
const ActivityTTL = 90 * time.Second

// Heartbeat is one accepted POST /api/activity/heartbeat.
type Heartbeat struct {
	ROMID    int
	DeviceID string
	At       time.Time // the server's clock when it arrived
}

// Activity is one live entry: a device playing a ROM.
type Activity struct {
	ROMID         int
	DeviceID      string
	StartedAt     time.Time // the first heartbeat of the session
	LastHeartbeat time.Time
	Expires       time.Time // LastHeartbeat + ActivityTTL
	entry         activityJSON
}

type activityJSON struct {
	UserID         int    `json:"user_id"`
	Username       string `json:"username"`
	AvatarPath     string `json:"avatar_path"`
	ROMID          int    `json:"rom_id"`
	ROMName        string `json:"rom_name"`
	ROMCoverPath   string `json:"rom_cover_path"`
	ScreenshotPath string `json:"screenshot_path"`
	PlatformSlug   string `json:"platform_slug"`
	PlatformName   string `json:"platform_name"`
	DeviceID       string `json:"device_id"`
	DeviceType     string `json:"device_type"`
	StartedAt      string `json:"started_at"`
}

func (s *Server) deviceHeartbeat(c *call) {
	var romID int
	var deviceID string
	if b, ok := readBody(c); ok {
		romID, _ = b.integer("rom_id", true, ptr(1))
		deviceID, _ = b.str("device_id", true, 1, 255)
	}
	if !c.writeReady(ScopeRomsUserWrite) {
		return
	}
	rom, ok := s.lib.meta(romID)
	if !ok {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("ROM %d not found", romID))
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	dev := s.device(deviceID, ownerID)
	if dev == nil {
		writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Device %s not found for this user", deviceID))
		return
	}
	now := s.now()
	if s.state.active == nil {
		s.state.active = map[string]*Activity{}
	}
	started := now
	if a := s.live(dev.ID); a != nil {
		started = a.StartedAt // a refresh keeps started_at, even for another ROM
	}
	p, _ := s.lib.platform(rom.PlatformID)
	name := rom.Name
	if name == "" {
		name = rom.FSName
	}
	typ := dev.Client
	if typ == "" {
		typ = "unknown"
	}
	a := &Activity{ROMID: rom.ID, DeviceID: dev.ID, StartedAt: started, LastHeartbeat: now, Expires: now.Add(ActivityTTL),
		entry: activityJSON{UserID: ownerID, Username: ownerName, ROMID: rom.ID, ROMName: name,
			PlatformSlug: p.Slug, PlatformName: p.DisplayName(), DeviceID: dev.ID, DeviceType: typ, StartedAt: pyISO(started)}}
	s.state.active[dev.ID] = a
	s.state.heartbeats = append(s.state.heartbeats, Heartbeat{ROMID: rom.ID, DeviceID: dev.ID, At: now})
	dev.LastSeen = now
	writeJSON(c.w, http.StatusOK, a.entry)
}

// live is the device's entry unless it expired; the caller holds s.state.mu.
func (s *Server) live(deviceID string) *Activity {
	a := s.state.active[deviceID]
	if a == nil {
		return nil
	}
	if !s.now().Before(a.Expires) {
		delete(s.state.active, deviceID)
		return nil
	}
	return a
}

// clearDeviceActivity is DELETE /api/activity/heartbeat?device_id=: 204
// whether or not there was an entry.
func (s *Server) clearDeviceActivity(c *call) {
	id := c.p.required("device_id")
	if !c.writeReady(ScopeRomsUserWrite) {
		return
	}
	s.state.mu.Lock()
	delete(s.state.active, id)
	s.state.mu.Unlock()
	c.w.WriteHeader(http.StatusNoContent)
}

// activeLocked returns the live entries by start; the caller holds s.state.mu.
func (s *Server) activeLocked() []*Activity {
	var out []*Activity
	for id := range s.state.active {
		if a := s.live(id); a != nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.Before(out[j].StartedAt)
		}
		return out[i].DeviceID < out[j].DeviceID
	})
	return out
}

func (s *Server) listActivity(c *call) {
	romID, byROM := 0, false
	if raw, ok := c.vars["rom_id"]; ok {
		romID, byROM = c.p.pathInt("rom_id", raw, false), true
	}
	if !c.ready(ScopeRomsUserRead) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	out := []activityJSON{}
	for _, a := range s.activeLocked() {
		if !byROM || a.ROMID == romID {
			out = append(out, a.entry)
		}
	}
	writeJSON(c.w, http.StatusOK, out)
}

// Heartbeats returns every accepted heartbeat, oldest first.
func (s *Server) Heartbeats() []Heartbeat {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return append([]Heartbeat(nil), s.state.heartbeats...)
}

// Active returns the live activity entries (by the server's clock),
// oldest session first.
func (s *Server) Active() []Activity {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	var out []Activity
	for _, a := range s.activeLocked() {
		out = append(out, *a)
	}
	return out
}
