package fakeromm

import (
	"fmt"
	"net/http"
	"sort"
	"time"
)

// The sync sessions a negotiation opens: read back, listed, completed.

type syncSessionJSON struct {
	ID                  int     `json:"id"`
	DeviceID            string  `json:"device_id"`
	UserID              int     `json:"user_id"`
	Status              string  `json:"status"`
	InitiatedAt         string  `json:"initiated_at"`
	CompletedAt         *string `json:"completed_at"`
	OperationsPlanned   int     `json:"operations_planned"`
	OperationsCompleted int     `json:"operations_completed"`
	OperationsFailed    int     `json:"operations_failed"`
	ErrorMessage        *string `json:"error_message"`
	CreatedAt           string  `json:"created_at"`
	UpdatedAt           string  `json:"updated_at"`
}

func (ss *SyncSession) json() syncSessionJSON {
	var done *string
	if !ss.CompletedAt.IsZero() {
		done = strp(pyISO(ss.CompletedAt))
	}
	return syncSessionJSON{ID: ss.ID, DeviceID: ss.DeviceID, UserID: ss.UserID, Status: ss.Status,
		InitiatedAt: pyISO(ss.InitiatedAt), CompletedAt: done, OperationsPlanned: ss.Planned,
		OperationsCompleted: ss.Completed, OperationsFailed: ss.Failed, CreatedAt: pyISO(ss.CreatedAt), UpdatedAt: pyISO(ss.UpdatedAt)}
}

// session is the user's session id, or nil; the caller holds s.state.mu.
func (st *saveStore) session(id int) *SyncSession {
	for _, ss := range st.sessions {
		if ss.ID == id && ss.UserID == ownerID {
			return ss
		}
	}
	return nil
}

func sessionNotFound(c *call, id int) {
	writeDetail(c.w, http.StatusNotFound, fmt.Sprintf("Sync session with ID %d not found", id))
}

// completeSyncSession is POST /api/sync/sessions/{id}/complete: the counts
// the client sends replace the ones uploads and downloads added up. The
// play_sessions a client may send along are not ingested (the answer's
// play_session_ingest is null).
func (s *Server) completeSyncSession(c *call) {
	id := c.p.pathInt("session_id", c.vars["session_id"], false)
	var done, failed int
	if b, ok := readBody(c); ok {
		done, _ = b.integer("operations_completed", false, nil)
		failed, _ = b.integer("operations_failed", false, nil)
		b.list("play_sessions", false, -1, -1)
	}
	if !c.writeReady(ScopeDevicesWrite) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	ss := s.state.saves.session(id)
	if ss == nil {
		sessionNotFound(c, id)
		return
	}
	if ss.Status != SyncPending && ss.Status != SyncInProgress {
		writeDetail(c.w, http.StatusBadRequest, "Session is already "+ss.Status)
		return
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	ss.Status, ss.CompletedAt, ss.UpdatedAt, ss.Completed, ss.Failed = SyncCompleted, now, now, done, failed
	writeJSON(c.w, http.StatusOK, map[string]any{"session": ss.json(), "play_session_ingest": nil})
}

func (s *Server) getSyncSession(c *call) {
	id := c.p.pathInt("session_id", c.vars["session_id"], false)
	if !c.ready(ScopeDevicesRead) {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	ss := s.state.saves.session(id)
	if ss == nil {
		sessionNotFound(c, id)
		return
	}
	writeJSON(c.w, http.StatusOK, ss.json())
}

// listSyncSessions is GET /api/sync/sessions: newest first, at most limit.
func (s *Server) listSyncSessions(c *call) {
	deviceID, _ := c.p.str("device_id")
	limit, _ := c.p.integer("limit", 50, nil, nil)
	if !c.ready(ScopeDevicesRead) {
		return
	}
	s.state.mu.Lock()
	var picked []SyncSession
	for _, ss := range s.state.saves.sessions {
		if ss.UserID == ownerID && (deviceID == "" || ss.DeviceID == deviceID) {
			picked = append(picked, *ss)
		}
	}
	s.state.mu.Unlock()
	sort.SliceStable(picked, func(i, j int) bool {
		if !picked[i].InitiatedAt.Equal(picked[j].InitiatedAt) {
			return picked[i].InitiatedAt.After(picked[j].InitiatedAt)
		}
		return picked[i].ID > picked[j].ID
	})
	out := []syncSessionJSON{}
	for _, ss := range picked[:min(max(limit, 0), len(picked))] {
		out = append(out, ss.json())
	}
	writeJSON(c.w, http.StatusOK, out)
}
