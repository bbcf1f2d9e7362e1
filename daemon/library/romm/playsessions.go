package romm

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// PlaySession is one finished play of a game, for PostPlaySessions.
type PlaySession struct {
	ROMID      int // 0: no ROM (RomM stores the session with rom_id null)
	Start, End time.Time
	Duration   time.Duration // time actually played; at least 0
}

// SessionResult is RomM's verdict on one session, Index being its place in the caller's slice.
type SessionResult struct {
	Index  int
	Status string // SessionCreated, SessionDuplicate or SessionError
	ID     int    // RomM's id of a created session
	Detail string // why, for an error (cleaned)
}

// Statuses of a SessionResult (PlaySessionIngestResult.status).
const (
	SessionCreated   = "created"
	SessionDuplicate = "duplicate"
	SessionError     = "error"
)

// MaxSessionsPerRequest is RomM's MAX_BATCH_SIZE (endpoints/play_sessions.py).
const MaxSessionsPerRequest = 100

const capSessionDetail = 200

type sessionEntry struct {
	ROMID      *int   `json:"rom_id"`
	Start      string `json:"start_time"`
	End        string `json:"end_time"`
	DurationMS int64  `json:"duration_ms"`
}

type sessionPayload struct {
	DeviceID *string        `json:"device_id,omitempty"`
	Sessions []sessionEntry `json:"sessions"`
}

// PostPlaySessions records finished plays (POST /api/play-sessions, roms.user.write, 4.9+), at most
// MaxSessionsPerRequest at a time. deviceID "" lets RomM use the token's own device.
//
// Times are sent in UTC without their fractions of a second, since RomM drops them; a session
// whose end is not after its start once they are dropped, or that has a negative duration or ROM
// id, is refused here (a SessionError result) and not sent, because RomM would reject the whole
// request for it. The results are in the order of s, one per session. RomM itself answers
// SessionDuplicate for a session it already has (same ROM and start for this user) — a resend is
// harmless — and SessionError for one ending more than 5 minutes in the future. RomM stores a
// session with an unknown ROM id, or for an unknown device, without them instead of refusing it.
func (c *Client) PostPlaySessions(ctx context.Context, deviceID string, s []PlaySession) ([]SessionResult, error) {
	const op = "record play sessions in RomM"
	if len(s) > MaxSessionsPerRequest {
		return nil, newError(ErrInvalid, nil, "%s: %d sessions, more than RomM takes at once (%d): send them in smaller batches", op, len(s), MaxSessionsPerRequest)
	}
	var dev *string
	if deviceID != "" {
		if err := checkDeviceID(op, deviceID); err != nil {
			return nil, err
		}
		dev = &deviceID
	}
	results := make([]SessionResult, len(s))
	var entries []sessionEntry
	var sent []int // sent[i] is the caller's index of entries[i]
	for i, ps := range s {
		e, why := ps.entry()
		if why != "" {
			results[i] = SessionResult{Index: i, Status: SessionError, Detail: why}
			continue
		}
		entries = append(entries, e)
		sent = append(sent, i)
	}
	if len(entries) == 0 {
		return results, nil
	}
	v, err := c.require(ctx, "play sessions", 4, 9)
	if err != nil {
		return nil, err
	}
	body, err := c.post(ctx, writeRequest{request: request{path: "/api/play-sessions", max: maxJSON, scope: "roms.user.write", version: v},
		method: http.MethodPost, body: sessionPayload{DeviceID: dev, Sessions: entries}})
	if err != nil {
		return nil, err
	}
	got, err := decodeSessionResults(body, len(entries))
	if err != nil {
		return nil, err
	}
	for j, r := range got {
		r.Index = sent[j]
		results[sent[j]] = r
	}
	return results, nil
}

// Times RomM's date-time fields can carry; outside, a clock is wrong.
const (
	minSessionYear = 1970
	maxSessionYear = 9999
)

// entry checks one session and writes it as RomM reads it; why is "" when it can be sent.
func (ps PlaySession) entry() (sessionEntry, string) {
	start, end := ps.Start.UTC().Truncate(time.Second), ps.End.UTC().Truncate(time.Second)
	switch {
	case ps.ROMID < 0 || ps.ROMID > 1<<31-1:
		return sessionEntry{}, "the ROM id is not a RomM ROM id"
	case ps.Start.IsZero() || ps.End.IsZero():
		return sessionEntry{}, "the session has no start or no end"
	case start.Year() < minSessionYear || end.Year() > maxSessionYear:
		return sessionEntry{}, "the session's times are outside 1970–9999: check the clock"
	case !end.After(start):
		return sessionEntry{}, "the session does not end after it starts (to the second, as RomM counts)"
	case ps.Duration < 0:
		return sessionEntry{}, "the session's duration is negative"
	}
	e := sessionEntry{Start: start.Format(time.RFC3339), End: end.Format(time.RFC3339), DurationMS: ps.Duration.Milliseconds()}
	if ps.ROMID > 0 {
		id := ps.ROMID
		e.ROMID = &id
	}
	return e, ""
}

type rawSessionResult struct {
	Index  *int64  `json:"index"`
	Status *string `json:"status"`
	ID     *int64  `json:"id"`
	Detail *string `json:"detail"`
}

// decodeSessionResults reads PlaySessionIngestResponse for n sent sessions and returns one result
// per sent session, in the order sent. RomM lists errors first, then duplicates, then created ones
// (handler/play_session_handler.py); a session it did not report comes back as a SessionError.
func decodeSessionResults(body []byte, n int) ([]SessionResult, error) {
	var raw struct {
		Results *[]rawSessionResult `json:"results"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, newError(ErrBadData, nil, "read RomM's answer to the play sessions: %s", jsonProblem(err))
	}
	if raw.Results == nil {
		return nil, newError(ErrBadData, nil, "RomM's answer to the play sessions has no results: check that cabinet.romm.url points at RomM 4.9 or newer")
	}
	if len(*raw.Results) > n {
		return nil, newError(ErrBadData, nil, "RomM reported %d results for %d play sessions", len(*raw.Results), n)
	}
	out := make([]SessionResult, n)
	seen := make([]bool, n)
	for k, r := range *raw.Results {
		if r.Index == nil || *r.Index < 0 || *r.Index >= int64(n) || seen[*r.Index] {
			return nil, newError(ErrBadData, nil, "RomM's play session result %d has a missing, repeated or impossible index", k)
		}
		i := int(*r.Index)
		seen[i] = true
		res := SessionResult{Index: i, Detail: cleanLine(deref(r.Detail), capSessionDetail)}
		switch deref(r.Status) {
		case SessionCreated:
			res.Status = SessionCreated
			if r.ID != nil {
				if id, ok := asID(*r.ID); ok {
					res.ID = id
				}
			}
		case SessionDuplicate:
			res.Status = SessionDuplicate
		case SessionError:
			res.Status = SessionError
			if res.Detail == "" {
				res.Detail = "RomM refused the session without saying why"
			}
		default:
			return nil, newError(ErrBadData, nil, "RomM's play session result %d has a status RomM's API does not document", k)
		}
		out[i] = res
	}
	for i := range out {
		if !seen[i] {
			out[i] = SessionResult{Index: i, Status: SessionError, Detail: "RomM did not report this session: send it again (RomM answers duplicate if it has it)"}
		}
	}
	return out, nil
}
