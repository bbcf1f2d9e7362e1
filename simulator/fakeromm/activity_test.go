package fakeromm

import (
	"net/http"
	"testing"
	"time"
)

func TestHeartbeat(t *testing.T) {
	s, base, clk := writeServer(t)
	tok := s.Token()
	dev := register(t, base, tok, map[string]any{"name": "Cabinet", "client": "cabinet"}, http.StatusCreated).DeviceID
	other := s.AddDevice(Device{UserID: 2, Name: "Someone else's"})
	beat := func(rom int, device string) map[string]any { return map[string]any{"rom_id": rom, "device_id": device} }

	wantDetail(t, "POST", base, "/api/activity/heartbeat", tok, beat(999, dev), 404, "ROM 999 not found")
	wantDetail(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, "nope"), 404,
		"Device nope not found for this user")
	wantDetail(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, other), 404,
		"Device "+other+" not found for this user")
	code, _, body := send(t, "POST", base, "/api/activity/heartbeat", tok, map[string]any{"rom_id": 0, "device_id": ""})
	if want := []string{"body.rom_id", "body.device_id"}; code != 422 || !equal(locs(t, body), want) {
		t.Errorf("rom_id 0, device_id \"\": %d at %v, want 422 at %v", code, locs(t, body), want)
	}
	if n := len(s.Heartbeats()); n != 0 {
		t.Fatalf("refused heartbeats recorded: %d", n)
	}

	var e activityJSON
	sendJSON(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, dev), http.StatusOK, &e)
	rom, _ := s.ROM(ROMAlphaQuest)
	if e.ROMID != ROMAlphaQuest || e.ROMName != rom.Name || e.DeviceID != dev || e.DeviceType != "cabinet" ||
		e.StartedAt != "2025-06-01T12:00:00+00:00" || e.Username != ownerName || e.PlatformSlug == "" {
		t.Errorf("heartbeat answered %+v", e)
	}
	clk.Advance(60 * time.Second)
	sendJSON(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, dev), http.StatusOK, &e)
	if e.StartedAt != "2025-06-01T12:00:00+00:00" {
		t.Errorf("a refresh moved started_at to %s", e.StartedAt)
	}
	var live []activityJSON
	getJSON(t, base, "/api/activity", tok, http.StatusOK, &live)
	if len(live) != 1 || live[0].DeviceID != dev {
		t.Errorf("GET /api/activity: %+v", live)
	}
	getJSON(t, base, "/api/activity/rom/2", tok, http.StatusOK, &live)
	if len(live) != 0 {
		t.Errorf("GET /api/activity/rom/2: %+v", live)
	}
	hb := s.Heartbeats()
	if len(hb) != 2 || hb[0] != (Heartbeat{ROMAlphaQuest, dev, t0}) || !hb[1].At.Equal(t0.Add(time.Minute)) {
		t.Errorf("Heartbeats() = %+v", hb)
	}

	clk.Advance(ActivityTTL - time.Second)
	if a := s.Active(); len(a) != 1 || !a[0].Expires.Equal(t0.Add(time.Minute+ActivityTTL)) {
		t.Errorf("Active() 89 s after the last heartbeat = %+v", a)
	}
	clk.Advance(time.Second)
	getJSON(t, base, "/api/activity", tok, http.StatusOK, &live)
	if len(live) != 0 || len(s.Active()) != 0 {
		t.Errorf("90 s after the last heartbeat: %+v, %+v", live, s.Active())
	}

	sendJSON(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, dev), http.StatusOK, &e)
	if e.StartedAt == "2025-06-01T12:00:00+00:00" {
		t.Error("a heartbeat after expiry kept the old started_at")
	}
	code, _, _ = send(t, "DELETE", base, "/api/activity/heartbeat?device_id="+dev, tok, nil)
	if code != http.StatusNoContent || len(s.Active()) != 0 {
		t.Errorf("DELETE: %d, active %+v", code, s.Active())
	}
	code, _, _ = send(t, "DELETE", base, "/api/activity/heartbeat?device_id=never-played", tok, nil)
	if code != http.StatusNoContent {
		t.Errorf("DELETE of a device without activity: %d, want 204", code)
	}
	sendJSON(t, "DELETE", base, "/api/activity/heartbeat", tok, nil, 422, nil)

	_, ro := newServer(t, Options{})
	sendJSON(t, "POST", ro, "/api/activity/heartbeat", DefaultToken, beat(1, dev), http.StatusForbidden, nil)
	getJSON(t, ro, "/api/activity", DefaultToken, http.StatusOK, nil)
	s.FailWrites(http.StatusInternalServerError)
	code, hdr, body := send(t, "POST", base, "/api/activity/heartbeat", tok, beat(ROMAlphaQuest, dev))
	if code != 500 || hdr.Get("Content-Type") != "text/plain; charset=utf-8" || string(body) != "Internal Server Error" {
		t.Errorf("FailWrites(500): %d %q %s", code, hdr.Get("Content-Type"), body)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
