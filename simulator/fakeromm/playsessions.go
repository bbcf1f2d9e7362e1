package fakeromm

import (
	"fmt"
	"net/http"
	"sort"
	"time"
)

// Play sessions (endpoints/play_sessions.py, handler/play_session_handler.py;
// RomM 5.0+ here): a device uploads finished sessions in batches, RomM
// drops microseconds, refuses a session that ends before it starts (422
// for the whole request, from the model validator), answers each
// session created, duplicate or error, and lists them back. The ROM
// side effects RomM also applies (rom_user last_played, now_playing,
// status) are not modelled: the fake's rom_user is RomM's dummy row.

// MaxPlaySessionBatch is MAX_BATCH_SIZE.
const MaxPlaySessionBatch = 100

// maxFuture is how far past the server's clock an end_time may be.
const maxFuture = 5 * time.Minute

// PlaySession is one stored session; 0 and "" are JSON nulls.
type PlaySession struct {
	ID         int
	UserID     int
	DeviceID   string // "" when none was given, or it is not the user's device
	ROMID      int    // 0 when none was given, or no such ROM
	SaveSlot   string
	StartTime  time.Time // UTC, whole seconds
	EndTime    time.Time
	DurationMS int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

type playSessionJSON struct {
	ID            int     `json:"id"`
	UserID        int     `json:"user_id"`
	DeviceID      *string `json:"device_id"`
	ROMID         *int    `json:"rom_id"`
	SyncSessionID *int    `json:"sync_session_id"`
	SaveSlot      *string `json:"save_slot"`
	StartTime     string  `json:"start_time"`
	EndTime       string  `json:"end_time"`
	DurationMS    int64   `json:"duration_ms"`
	CreatedAt     string  `json:"created_at"`
	UpdatedAt     string  `json:"updated_at"`
}

func (p PlaySession) json() playSessionJSON {
	return playSessionJSON{ID: p.ID, UserID: p.UserID, DeviceID: nonEmpty(p.DeviceID), ROMID: intp(p.ROMID),
		SaveSlot: nonEmpty(p.SaveSlot), StartTime: pydanticTime(p.StartTime), EndTime: pydanticTime(p.EndTime),
		DurationMS: p.DurationMS, CreatedAt: pydanticTime(p.CreatedAt), UpdatedAt: pydanticTime(p.UpdatedAt)}
}

type ingestResult struct {
	Index  int     `json:"index"`
	Status string  `json:"status"`
	ID     *int    `json:"id"`
	Detail *string `json:"detail"`
}

// sessionEntry is one PlaySessionEntry of a request.
type sessionEntry struct {
	romID      int
	saveSlot   string
	start, end time.Time
	durationMS int64
}

func (s *Server) parseSessions(c *call) (string, []sessionEntry) {
	b, ok := readBody(c)
	if !ok {
		return "", nil
	}
	deviceID := deref(b.optStr("device_id", 0))
	items, _ := b.list("sessions", true, -1, -1)
	entries := make([]sessionEntry, 0, len(items))
	for i, raw := range items {
		it, ok := b.sub(raw, "sessions", i)
		if !ok {
			continue
		}
		var e sessionEntry
		e.romID, _ = it.integer("rom_id", false, nil)
		e.saveSlot = deref(it.optStr("save_slot", 0))
		start, okStart := it.datetime("start_time")
		end, okEnd := it.datetime("end_time")
		d, _ := it.integer("duration_ms", true, ptr(0))
		e.durationMS = int64(d)
		if okStart && okEnd {
			// validate_times: microseconds dropped, then end must follow start.
			e.start, e.end = start.UTC().Truncate(time.Second), end.UTC().Truncate(time.Second)
			if !e.end.After(e.start) {
				it.failHere("value_error", "Value error, end_time must be after start_time", it.input(),
					map[string]any{"error": map[string]any{}})
			}
		}
		entries = append(entries, e)
	}
	return deviceID, entries
}

func (s *Server) ingestPlaySessions(c *call) {
	deviceID, entries := s.parseSessions(c)
	if !c.ready(ScopeRomsUserWrite) {
		return
	}
	if len(entries) == 0 {
		writeDetail(c.w, http.StatusBadRequest, "Payload must contain at least one session")
		return
	}
	if len(entries) > MaxPlaySessionBatch {
		writeDetail(c.w, http.StatusBadRequest, fmt.Sprintf("Batch size exceeds maximum of %d", MaxPlaySessionBatch))
		return
	}
	if s.failWritesAnswered(c.w) {
		return
	}
	id, _ := s.caller(c.r)
	if deviceID == "" {
		deviceID = id.deviceID
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if s.device(deviceID, ownerID) == nil {
		deviceID = "" // _resolve_device: an unknown device is dropped, not refused
	}
	now := s.now()
	type key struct {
		rom   int
		start int64
	}
	existing := map[key]bool{}
	for _, p := range s.state.sessions {
		if p.UserID == ownerID && p.DeviceID == deviceID {
			existing[key{p.ROMID, p.StartTime.Unix()}] = true
		}
	}
	// RomM answers phase by phase: errors, then duplicates, then the
	// created sessions, each in request order.
	var errs, dups, created []ingestResult
	for i, e := range entries {
		if e.end.After(now.Add(maxFuture)) {
			errs = append(errs, ingestResult{Index: i, Status: "error", Detail: strp("end_time is too far in the future")})
			continue
		}
		rom := e.romID
		if _, ok := s.lib.meta(rom); !ok {
			rom = 0 // an unknown ROM is stored as null
		}
		k := key{rom, e.start.Unix()}
		if existing[k] {
			dups = append(dups, ingestResult{Index: i, Status: "duplicate"})
			continue
		}
		existing[k] = true
		s.state.sessionSeq++
		sid := s.state.sessionSeq
		s.state.sessions = append(s.state.sessions, PlaySession{ID: sid, UserID: ownerID, DeviceID: deviceID, ROMID: rom,
			SaveSlot: e.saveSlot, StartTime: e.start, EndTime: e.end, DurationMS: e.durationMS, CreatedAt: now, UpdatedAt: now})
		created = append(created, ingestResult{Index: i, Status: "created", ID: &sid})
	}
	if d := s.device(deviceID, ownerID); d != nil {
		d.LastSeen = now
	}
	results := append(append(append([]ingestResult{}, errs...), dups...), created...)
	writeJSON(c.w, http.StatusCreated, map[string]any{"results": results, "created_count": len(created),
		"skipped_count": len(entries) - len(created)})
}

// queryTime is an optional datetime query parameter.
func queryTime(p *params, name string) (time.Time, bool) {
	v, ok := p.str(name)
	if !ok {
		return time.Time{}, false
	}
	t, err := parseDatetime(v)
	if err != nil {
		p.fail("query", name, "datetime_from_date_parsing", "Input should be a valid datetime or date, "+err.Error(), v, nil)
		return time.Time{}, false
	}
	return t, true
}

// listPlaySessions is GET /api/play-sessions: the user's sessions, newest
// start first, of the token's device unless device_id says otherwise.
// As in RomM, end_before compares start_time, and limit applies only
// without start_after and end_before.
func (s *Server) listPlaySessions(c *call) {
	romID, byROM := c.p.integer("rom_id", 0, nil, nil)
	deviceID, _ := c.p.str("device_id")
	after, byAfter := queryTime(c.p, "start_after")
	before, byBefore := queryTime(c.p, "end_before")
	limit, _ := c.p.integer("limit", 50, nil, nil)
	offset, _ := c.p.integer("offset", 0, nil, nil)
	if !c.ready(ScopeRomsUserRead) {
		return
	}
	if deviceID == "" {
		id, _ := s.caller(c.r)
		deviceID = id.deviceID
	}
	s.state.mu.Lock()
	var out []PlaySession
	for _, p := range s.state.sessions {
		switch {
		case p.UserID != ownerID, byROM && p.ROMID != romID, deviceID != "" && p.DeviceID != deviceID,
			byAfter && p.StartTime.Before(after), byBefore && p.StartTime.After(before):
			continue
		}
		out = append(out, p)
	}
	s.state.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartTime.After(out[j].StartTime) })
	offset = min(max(offset, 0), len(out))
	out = out[offset:]
	if !byAfter && !byBefore {
		out = out[:min(max(limit, 0), len(out))]
	}
	res := make([]playSessionJSON, 0, len(out))
	for _, p := range out {
		res = append(res, p.json())
	}
	writeJSON(c.w, http.StatusOK, res)
}

// PlaySessions returns every stored session, in the order stored.
func (s *Server) PlaySessions() []PlaySession {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return append([]PlaySession(nil), s.state.sessions...)
}
