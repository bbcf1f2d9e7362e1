package fakeromm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/prism"
)

// docGaps are the answers RomM gives on the write routes that its 5.3.1
// document does not list (FastAPI documents only the declared status and
// 422): each is added, with RomM's body, so Prism validates the answer
// instead of warning "Unable to match the returned status code".
func docGaps() []struct{ path, method, status, schema string } {
	const detail = `{"type":"object","required":["detail"],"properties":{"detail":{"type":"string"}}}`
	return []struct{ path, method, status, schema string }{
		{"/api/auth/device/token", "post", "400", detail}, // authorization_pending, slow_down, access_denied, expired_token
		{"/api/client-tokens/exchange", "post", "404", detail},
		{"/api/devices", "post", "201", `{"$ref":"#/components/schemas/DeviceCreateResponse"}`}, // a new device (200: existing)
		{"/api/devices", "post", "409", `{"type":"object","required":["detail"],"properties":{"detail":{"type":"object",` +
			`"required":["error","message","device_id"],"properties":{"error":{"type":"string"},"message":{"type":"string"},` +
			`"device_id":{"type":"string"}}}}}`},
		{"/api/activity/heartbeat", "post", "404", detail},
		{"/api/play-sessions", "post", "400", detail}, // no sessions, over 100
		// Save sync (conformance_saves_test.go).
		{"/api/sync/negotiate", "post", "400", detail},                      // no device, sync disabled
		{"/api/sync/negotiate", "post", "404", detail},                      // unknown device
		{"/api/saves", "post", "400", detail},                               // no filename, invalid filename
		{"/api/saves", "post", "404", detail},                               // unknown ROM or device
		{"/api/saves", "post", "409", detail},                               // newer save in the slot
		{"/api/saves", "get", "404", detail},                                // unknown device_id
		{"/api/sync/sessions/{session_id}/complete", "post", "400", detail}, // already completed
	}
}

// writesDoc is PatchedDoc plus docGaps.
func writesDoc(t *testing.T) string {
	t.Helper()
	p := prism.PatchedDoc(t, referenceDoc(t, "romm-openapi-5.3.1.json"), Version531)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	for _, g := range docGaps() {
		op, ok := paths[g.path].(map[string]any)[g.method].(map[string]any)
		if !ok {
			t.Fatalf("the document has no %s %s", g.method, g.path)
		}
		var schema any
		if err := json.Unmarshal([]byte(g.schema), &schema); err != nil {
			t.Fatal(err)
		}
		resp := op["responses"].(map[string]any)
		if _, has := resp[g.status]; has {
			t.Fatalf("%s %s already documents %s: drop it from docGaps", g.method, g.path, g.status)
		}
		resp[g.status] = map[string]any{"description": "RomM's answer (added by the fakeromm test)",
			"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// conformer sends requests through a Prism proxy and fails on a status
// other than the one wanted and on any violation Prism reports.
type conformer struct {
	t     *testing.T
	base  string
	token map[string]string // "full", "limited", "bad", or a raw token
}

func (c conformer) do(method, path, who string, body any, want int) []byte {
	c.t.Helper()
	tok, ok := c.token[who]
	if !ok {
		tok = who
	}
	code, hdr, out := send(c.t, method, c.base, path, tok, body)
	if v := prism.Violations(hdr); len(v) > 0 {
		c.t.Errorf("%s %s: %d, Prism reports:\n  %s\n  body %.300s", method, path, code, strings.Join(v, "\n  "), out)
		return out
	}
	if code != want {
		c.t.Errorf("%s %s: %d, want %d: %.300s", method, path, code, want, out)
	}
	return out
}

// TestPrismConformanceWrites drives the device flow, pair exchange,
// devices, activity and play sessions through `prism proxy --errors` on
// RomM's 5.3.1 document (with docGaps): valid requests through the
// validating proxy, the fake's own 422s through one that forwards every
// request.
func TestPrismConformanceWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Prism twice (about 5 s each): not in -short")
	}
	t.Parallel()
	doc := writesDoc(t)
	s, err := New(Options{Scopes: WriteScopes()})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(t0)
	s.SetClock(clk.Now)
	limited, err := New(Options{Token: limitedToken, Scopes: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+limitedToken {
			limited.ServeHTTP(w, r)
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	began := time.Now()
	c := conformer{t: t, base: prism.Proxy(t, doc, up.URL),
		token: map[string]string{"full": s.Token(), "limited": limitedToken, "bad": "rmm_not_a_token", "": ""}}
	t.Logf("prism proxy up in %s", time.Since(began).Round(time.Millisecond))

	// The device flow: pending, slow_down, approved, the token at work.
	var a initAnswer
	decode(t, c.do("POST", "/api/auth/device/init", "", initBody("batocera-c1", ScopeDevicesRead, ScopeRomsUserWrite,
		ScopeRomsUserRead), 201), &a)
	dc := map[string]string{"device_code": a.DeviceCode}
	c.do("POST", "/api/auth/device/token", "", dc, 400)
	c.do("POST", "/api/auth/device/token", "", dc, 400)
	if err := s.Approve(a.UserCode, nil); err != nil {
		t.Fatal(err)
	}
	var tok tokenAnswer
	decode(t, c.do("POST", "/api/auth/device/token", "", dc, 200), &tok)
	c.do("POST", "/api/auth/device/token", "", dc, 400)
	c.do("GET", "/api/devices", tok.AccessToken, nil, 200)
	c.do("GET", "/api/devices/"+tok.DeviceID, tok.AccessToken, nil, 200)
	c.do("GET", "/api/devices/not-a-device", tok.AccessToken, nil, 404)
	var d initAnswer
	decode(t, c.do("POST", "/api/auth/device/init", "", map[string]any{"client_device_identifier": "x", "name": "n",
		"client": "c", "requested_scopes": []string{ScopeRomsRead}}, 201), &d)
	if err := s.Deny(d.UserCode); err != nil {
		t.Fatal(err)
	}
	c.do("POST", "/api/auth/device/token", "", map[string]string{"device_code": d.DeviceCode}, 400)

	// Pair codes.
	code := s.NewPairCode([]string{ScopeRomsRead})
	c.do("GET", "/api/client-tokens/pair/"+code+"/status", "", nil, 200)
	c.do("POST", "/api/client-tokens/exchange", "", map[string]string{"code": code}, 200)
	c.do("POST", "/api/client-tokens/exchange", "", map[string]string{"code": code}, 404)
	c.do("GET", "/api/client-tokens/pair/"+code+"/status", "", nil, 404)

	// Devices.
	cab := map[string]any{"name": "Cabinet", "platform": "Batocera", "client": "cabinet", "client_version": "1.0",
		"hostname": "batocera", "mac_address": "02:00:00:00:00:01", "ip_address": nil, "sync_mode": "api",
		"sync_config": map[string]any{"k": "v"}}
	var dev created
	decode(t, c.do("POST", "/api/devices", "full", cab, 201), &dev)
	c.do("POST", "/api/devices", "full", map[string]any{"mac_address": "02:00:00:00:00:01"}, 200)
	c.do("POST", "/api/devices", "full", map[string]any{"mac_address": "02:00:00:00:00:01", "allow_existing": false}, 409)
	c.do("POST", "/api/devices", "full", map[string]any{}, 201)
	c.do("GET", "/api/devices", "full", nil, 200)
	c.do("GET", "/api/devices/"+dev.DeviceID, "full", nil, 200)

	// Activity.
	beat := map[string]any{"rom_id": ROMAlphaQuest, "device_id": dev.DeviceID}
	c.do("POST", "/api/activity/heartbeat", "full", beat, 200)
	c.do("POST", "/api/activity/heartbeat", tok.AccessToken, map[string]any{"rom_id": ROMEchoChamber, "device_id": tok.DeviceID}, 200)
	c.do("POST", "/api/activity/heartbeat", "full", map[string]any{"rom_id": 999, "device_id": dev.DeviceID}, 404)
	c.do("POST", "/api/activity/heartbeat", "full", map[string]any{"rom_id": 1, "device_id": "nope"}, 404)
	c.do("GET", "/api/activity", "full", nil, 200)
	c.do("GET", fmt.Sprintf("/api/activity/rom/%d", ROMAlphaQuest), "full", nil, 200)
	c.do("DELETE", "/api/activity/heartbeat?device_id="+dev.DeviceID, "full", nil, 204)

	// Play sessions.
	batch := map[string]any{"device_id": dev.DeviceID, "sessions": []any{
		session(ROMAlphaQuest, "2025-06-01T10:00:00.5Z", 30), session(ROMAlphaQuest, "2025-06-01T10:00:00Z", 30),
		session(nil, "2025-06-01T09:00:00+01:00", 5), session(ROMAlphaQuest, "2025-06-01T12:30:00Z", 5),
		map[string]any{"rom_id": ROMEchoChamber, "save_slot": "1", "start_time": "2025-06-01T08:00:00Z",
			"end_time": "2025-06-01T08:10:00Z", "duration_ms": 600000}}}
	c.do("POST", "/api/play-sessions", "full", batch, 201)
	c.do("POST", "/api/play-sessions", tok.AccessToken, map[string]any{"sessions": []any{session(1, "2025-06-01T07:00:00Z", 3)}}, 201)
	c.do("POST", "/api/play-sessions", "full", map[string]any{"sessions": []any{}}, 400)
	var over []any
	for i := 0; i <= MaxPlaySessionBatch; i++ {
		over = append(over, session(1, t0.Add(-time.Duration(i+1)*time.Hour).Format(time.RFC3339), 1))
	}
	c.do("POST", "/api/play-sessions", "full", map[string]any{"sessions": over}, 400)
	c.do("GET", "/api/play-sessions", "full", nil, 200)
	c.do("GET", "/api/play-sessions", tok.AccessToken, nil, 200)
	c.do("GET", "/api/play-sessions?rom_id=1&device_id="+dev.DeviceID+"&limit=2&offset=0", "full", nil, 200)
	c.do("GET", "/api/play-sessions?start_after=2025-06-01T00:00:00Z&end_before=2025-06-02T00:00:00Z", "full", nil, 200)

	// Refusals: no token, a token without the scope.
	for _, r := range []struct{ method, path string }{{"GET", "/api/devices"}, {"GET", "/api/activity"},
		{"GET", "/api/play-sessions"}, {"GET", "/api/devices/" + dev.DeviceID}} {
		c.do(r.method, r.path, "bad", nil, 401)
		c.do(r.method, r.path, "limited", nil, 403)
	}
	c.do("POST", "/api/devices", "limited", map[string]any{}, 403)
	c.do("POST", "/api/activity/heartbeat", "limited", beat, 403)
	c.do("POST", "/api/play-sessions", "bad", batch, 401)

	// The fake's own 422s, through a proxy that forwards invalid requests.
	f := c
	f.base = prism.ProxyResponses(t, doc, up.URL)
	f.do("POST", "/api/auth/device/init", "", map[string]any{"name": "", "requested_scopes": []string{}}, 422)
	f.do("POST", "/api/auth/device/token", "", map[string]any{"device_code": ""}, 422)
	// (Malformed JSON is not probed: Prism answers it itself, 400
	// {"error":{"code":"invalid_json"}}, even with --validate-request=false.)
	f.do("POST", "/api/client-tokens/exchange", "", map[string]any{}, 422)
	f.do("POST", "/api/devices", "full", map[string]any{"sync_mode": "ftp"}, 422)
	f.do("POST", "/api/activity/heartbeat", "full", map[string]any{"rom_id": 0, "device_id": ""}, 422)
	f.do("DELETE", "/api/activity/heartbeat", "full", nil, 422)
	f.do("POST", "/api/play-sessions", "full", map[string]any{"sessions": []any{
		map[string]any{"start_time": "2025-06-01T10:00:00Z", "end_time": "2025-06-01T09:00:00Z", "duration_ms": 1}}}, 422)
	f.do("GET", "/api/play-sessions?start_after=yesterday", "full", nil, 422)
}
