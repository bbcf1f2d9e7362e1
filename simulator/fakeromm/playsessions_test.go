package fakeromm

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

type ingestAnswer struct {
	Results []struct {
		Index  int     `json:"index"`
		Status string  `json:"status"`
		ID     *int    `json:"id"`
		Detail *string `json:"detail"`
	} `json:"results"`
	CreatedCount int `json:"created_count"`
	SkippedCount int `json:"skipped_count"`
}

// statuses is "index:status" per result, in the order answered.
func (a ingestAnswer) statuses() []string {
	var out []string
	for _, r := range a.Results {
		out = append(out, fmt.Sprintf("%d:%s", r.Index, r.Status))
	}
	return out
}

func session(rom any, start string, minutes int) map[string]any {
	st, err := time.Parse(time.RFC3339Nano, start)
	if err != nil {
		panic(err)
	}
	return map[string]any{"rom_id": rom, "start_time": start,
		"end_time": st.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339Nano), "duration_ms": minutes * 60_000}
}

func ingest(t *testing.T, base, token string, device any, sessions ...map[string]any) ingestAnswer {
	t.Helper()
	var a ingestAnswer
	sendJSON(t, "POST", base, "/api/play-sessions", token, map[string]any{"device_id": device, "sessions": sessions},
		http.StatusCreated, &a)
	return a
}

func TestPlaySessionsBatch(t *testing.T) {
	s, base, _ := writeServer(t)
	tok := s.Token()
	dev := register(t, base, tok, map[string]any{"name": "Cabinet"}, http.StatusCreated).DeviceID

	a := ingest(t, base, tok, dev,
		session(ROMAlphaQuest, "2025-06-01T10:00:00.250Z", 30),   // 0 created, microseconds dropped
		session(ROMAlphaQuest, "2025-06-01T12:00:00+02:00", 20),  // 1 duplicate of 0: the same instant in UTC
		session(999, "2025-06-01T09:00:00Z", 10),                 // 2 created with rom_id null
		session(nil, "2025-06-01T09:00:00Z", 5),                  // 3 duplicate of 2 (both null)
		session(ROMAlphaQuest, "2025-06-01T12:04:00Z", 10),       // 4 error: ends 9 min after the clock
		session(ROMEchoChamber, "2025-06-01T10:00:00Z", 15),      // 5 created: another ROM
		session(ROMAlphaQuest, "2025-06-01T08:00:00.999999Z", 1), // 6 created
	)
	if want := []string{"4:error", "1:duplicate", "3:duplicate", "0:created", "2:created", "5:created", "6:created"}; !reflect.DeepEqual(a.statuses(), want) {
		t.Errorf("results %v, want %v (errors, duplicates, created, as RomM orders them)", a.statuses(), want)
	}
	if a.CreatedCount != 4 || a.SkippedCount != 3 {
		t.Errorf("created %d skipped %d, want 4 and 3", a.CreatedCount, a.SkippedCount)
	}
	if d := a.Results[0].Detail; d == nil || *d != "end_time is too far in the future" {
		t.Errorf("error detail %v", d)
	}
	ps := s.PlaySessions()
	if len(ps) != 4 || ps[0].StartTime != time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC) || ps[0].DeviceID != dev ||
		ps[1].ROMID != 0 || ps[0].DurationMS != 30*60_000 {
		t.Errorf("PlaySessions() = %+v", ps)
	}

	// A resend is all duplicates; another device is not a duplicate.
	again := ingest(t, base, tok, dev, session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 30))
	if !reflect.DeepEqual(again.statuses(), []string{"0:duplicate"}) {
		t.Errorf("resend: %v", again.statuses())
	}
	dev2 := register(t, base, tok, map[string]any{"name": "Handheld", "allow_duplicate": true}, http.StatusCreated).DeviceID
	other := ingest(t, base, tok, dev2, session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 30))
	if !reflect.DeepEqual(other.statuses(), []string{"0:created"}) {
		t.Errorf("same session from another device: %v", other.statuses())
	}
	// An unknown device is dropped (null), not refused.
	unknown := ingest(t, base, tok, "no-such-device", session(ROMAlphaQuest, "2025-06-01T07:00:00Z", 30))
	if unknown.CreatedCount != 1 || s.PlaySessions()[5].DeviceID != "" {
		t.Errorf("unknown device: %+v, stored %+v", unknown, s.PlaySessions()[5])
	}

	var list []playSessionJSON
	getJSON(t, base, "/api/play-sessions?device_id="+dev, tok, http.StatusOK, &list)
	if len(list) != 4 || list[0].StartTime != "2025-06-01T10:00:00Z" || list[3].StartTime != "2025-06-01T08:00:00Z" {
		t.Errorf("GET by device: %+v", list)
	}
	getJSON(t, base, "/api/play-sessions", tok, http.StatusOK, &list)
	if len(list) != 6 {
		t.Errorf("GET (a token without a device): %d sessions, want 6", len(list))
	}
	getJSON(t, base, fmt.Sprintf("/api/play-sessions?rom_id=%d&limit=1&offset=2", ROMAlphaQuest), tok, http.StatusOK, &list)
	if len(list) != 1 || list[0].StartTime != "2025-06-01T08:00:00Z" {
		t.Errorf("GET rom_id limit 1 offset 2: %+v", list)
	}
	getJSON(t, base, "/api/play-sessions?start_after=2025-06-01T09:00:00Z&limit=1", tok, http.StatusOK, &list)
	if len(list) != 4 {
		t.Errorf("GET start_after (limit ignored): %d, want 4", len(list))
	}
	getJSON(t, base, "/api/play-sessions?end_before=yesterday", tok, 422, nil)
}

func TestPlaySessionsRefusals(t *testing.T) {
	s, base, _ := writeServer(t)
	tok := s.Token()
	var hundred, over []map[string]any
	for i := 0; i < MaxPlaySessionBatch+1; i++ {
		e := session(ROMAlphaQuest, t0.Add(-time.Duration(i+1)*time.Hour).Format(time.RFC3339), 10)
		over = append(over, e)
		if i < MaxPlaySessionBatch {
			hundred = append(hundred, e)
		}
	}
	if a := ingest(t, base, tok, nil, hundred...); a.CreatedCount != 100 {
		t.Errorf("100 sessions: %d created", a.CreatedCount)
	}
	wantDetail(t, "POST", base, "/api/play-sessions", tok, map[string]any{"sessions": over}, 400, "Batch size exceeds maximum of 100")
	wantDetail(t, "POST", base, "/api/play-sessions", tok, map[string]any{"sessions": []any{}}, 400,
		"Payload must contain at least one session")

	backwards := session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 0)
	backwards["end_time"] = "2025-06-01T10:00:00.900Z" // equal once microseconds are dropped
	code, _, body := send(t, "POST", base, "/api/play-sessions", tok,
		map[string]any{"sessions": []any{session(1, "2025-06-01T09:00:00Z", 5), backwards, map[string]any{"duration_ms": -1}, 7}})
	want := []string{"body.sessions.1", "body.sessions.2.start_time", "body.sessions.2.end_time", "body.sessions.2.duration_ms", "body.sessions.3"}
	if code != 422 || !reflect.DeepEqual(locs(t, body), want) {
		t.Errorf("bad sessions: %d at %v, want 422 at %v", code, locs(t, body), want)
	}
	if !strings.Contains(string(body), "Value error, end_time must be after start_time") {
		t.Errorf("422 lacks pydantic's message: %s", body)
	}
	sendJSON(t, "POST", base, "/api/play-sessions", tok, map[string]any{}, 422, nil)
	if n := len(s.PlaySessions()); n != 100 {
		t.Errorf("refused batches stored sessions: %d, want 100", n)
	}

	_, ro := newServer(t, Options{})
	sendJSON(t, "POST", ro, "/api/play-sessions", DefaultToken, map[string]any{"sessions": hundred[:1]}, http.StatusForbidden, nil)
	getJSON(t, ro, "/api/play-sessions", DefaultToken, http.StatusOK, nil)
	s.FailWrites(http.StatusBadGateway)
	sendJSON(t, "POST", base, "/api/play-sessions", tok, map[string]any{"sessions": hundred[:1]}, http.StatusBadGateway, nil)
}

// TestPlaySessionsTokenDevice: a device-flow token's sessions default to
// its device, and so does its listing.
func TestPlaySessionsTokenDevice(t *testing.T) {
	s, base, _ := writeServer(t)
	a := startFlow(t, base, "batocera-0005", ScopeRomsUserWrite, ScopeRomsUserRead)
	if err := s.Approve(a.UserCode, nil); err != nil {
		t.Fatal(err)
	}
	var tok tokenAnswer
	sendJSON(t, "POST", base, "/api/auth/device/token", "", map[string]string{"device_code": a.DeviceCode}, 200, &tok)
	ingest(t, base, tok.AccessToken, nil, session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 30))
	ingest(t, base, s.Token(), nil, session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 30)) // no device: not a duplicate
	ps := s.PlaySessions()
	if len(ps) != 2 || ps[0].DeviceID != tok.DeviceID || ps[1].DeviceID != "" {
		t.Fatalf("PlaySessions() = %+v", ps)
	}
	var list []playSessionJSON
	getJSON(t, base, "/api/play-sessions", tok.AccessToken, http.StatusOK, &list)
	if len(list) != 1 || list[0].DeviceID == nil || *list[0].DeviceID != tok.DeviceID {
		t.Errorf("the device token lists %+v", list)
	}
}
