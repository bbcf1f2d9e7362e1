package romm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testDeviceID = "5b0c7b9e-8a31-4d55-9d36-0f4b0b7c6a11"

func TestRegisterDevice(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		b := decodeBody(t, r)
		want := map[string]any{"name": "Cabinet", "platform": "Batocera", "client": "batocera-cabinet", "hostname": "batocera",
			"mac_address": "b8:27:eb:12:34:ab", "allow_existing": true}
		if r.Method != http.MethodPost || fmt.Sprint(b) != fmt.Sprint(want) {
			t.Errorf("%s body %v, want POST %v", r.Method, b, want)
		}
		writeJSON(w, 201, map[string]any{"device_id": testDeviceID, "name": "Cabinet", "created_at": "2026-06-01T00:00:00+00:00"})
	})
	c := newClient(t, srv.URL)
	id, err := c.RegisterDevice(context.Background(), DeviceInfo{Name: "Cabinet", Platform: "Batocera", Client: "batocera-cabinet",
		Hostname: "batocera", MAC: "B8-27-EB-12-34-AB"})
	if err != nil || id != testDeviceID {
		t.Fatalf("RegisterDevice = %q, %v", id, err)
	}
	if got := f.last("/api/devices").Header.Get("Authorization"); got != "Bearer "+testToken {
		t.Errorf("Authorization %q", got)
	}
}

func TestRegisterDeviceRefuses(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for name, d := range map[string]DeviceInfo{
		"no fingerprint":         {Name: "Cabinet"},
		"host name, no platform": {Hostname: "batocera"},
		"bad MAC":                {MAC: "b8:27:eb:12:34"},
		"bad MAC hex":            {MAC: "b8:27:eb:12:34:zz"},
		"bad MAC separators":     {MAC: "b8.27.eb.12.34.ab"},
		"long platform":          {MAC: "b8:27:eb:12:34:ab", Platform: strings.Repeat("x", 51)},
		"control":                {MAC: "b8:27:eb:12:34:ab", Name: "a\x00b"},
		"long host name":         {Hostname: strings.Repeat("h", 256), Platform: "Batocera"},
	} {
		_, err := c.RegisterDevice(context.Background(), d)
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests for invalid devices", n)
	}
}

func TestRegisterDeviceAnswers(t *testing.T) {
	for _, tt := range []struct {
		name, version string
		status        int
		answer        any
		want          error
	}{
		{"existing device", "5.3.1", 200, map[string]any{"device_id": testDeviceID, "name": nil, "created_at": "x"}, nil},
		{"no scope 5.3", "5.3.1", 403, map[string]any{"detail": "Forbidden"}, ErrMissingScope},
		{"403 on 5.1", "5.1.0", 403, map[string]any{"detail": "Forbidden"}, ErrUnauthorized},
		{"401", "5.3.1", 401, map[string]any{"detail": "Not authenticated"}, ErrUnauthorized},
		{"422", "5.3.1", 422, map[string]any{"detail": []any{map[string]any{"loc": []any{"body"}, "msg": "bad", "type": "x"}}}, ErrInvalid},
		{"409", "5.3.1", 409, map[string]any{"detail": map[string]any{"error": "device_exists"}}, ErrInvalid},
		{"500", "5.3.1", 500, map[string]any{"detail": "boom"}, nil},
		{"no device id", "5.3.1", 201, map[string]any{"name": "x"}, ErrBadData},
		{"odd device id", "5.3.1", 201, map[string]any{"device_id": "a b"}, ErrBadData},
		{"too old", "4.7.0", 201, nil, ErrUnsupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, tt.status, tt.answer) })
			c := newClient(t, srv.URL, func(c *Config) {
				if tt.version == "4.7.0" {
					c.Token = ""
				}
			})
			id, err := c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
			if tt.want == nil && tt.status < 300 {
				if err != nil || id != testDeviceID {
					t.Fatalf("RegisterDevice = %q, %v", id, err)
				}
				return
			}
			mustErr(t, err, tt.want)
			var se *ScopeError
			if errors.As(err, &se) && (se.Scope != "devices.write" || se.Route != "POST /api/devices") {
				t.Errorf("ScopeError %+v", se)
			}
		})
	}
}

func TestHeartbeat(t *testing.T) {
	for _, tt := range []struct {
		name, version string
		status        int
		answer        any
		want          error
	}{
		{"ok", "5.3.1", 200, map[string]any{"rom_id": 7}, nil},
		{"unknown device", "5.3.1", 404, map[string]any{"detail": "Device " + testDeviceID + " not found for this user"}, ErrDeviceUnknown},
		{"unknown ROM", "5.3.1", 404, map[string]any{"detail": "ROM 7 not found"}, ErrNotFound},
		{"bare 404", "5.3.1", 404, map[string]any{"detail": "Not Found"}, ErrNotFound},
		{"422", "5.3.1", 422, map[string]any{"detail": []any{map[string]any{"loc": []any{"body", "rom_id"}, "msg": "bad", "type": "x"}}}, ErrInvalid},
		{"500", "5.3.1", 500, map[string]any{"detail": "boom"}, nil},
		{"no scope", "5.3.1", 403, map[string]any{"detail": "Forbidden"}, ErrMissingScope},
		{"too old", "4.9.2", 200, nil, ErrUnsupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, tt.version)
			f.route("/api/activity/heartbeat", func(w http.ResponseWriter, r *http.Request) {
				if b := decodeBody(t, r); r.Method != http.MethodPost || b["rom_id"] != 7.0 || b["device_id"] != testDeviceID {
					t.Errorf("%s %v", r.Method, b)
				}
				writeJSON(w, tt.status, tt.answer)
			})
			err := newClient(t, srv.URL).Heartbeat(context.Background(), 7, testDeviceID)
			if tt.want == nil && tt.status < 300 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			mustErr(t, err, tt.want)
			if tt.want == ErrNotFound && errors.Is(err, ErrDeviceUnknown) || tt.want == ErrDeviceUnknown && errors.Is(err, ErrNotFound) {
				t.Errorf("%q is both ErrNotFound and ErrDeviceUnknown", err)
			}
			if tt.want == nil && errors.Is(err, ErrNotFound) {
				t.Errorf("%q", err)
			}
		})
	}
}

func TestHeartbeatRefuses(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, tt := range []struct {
		rom int
		dev string
	}{{0, testDeviceID}, {-1, testDeviceID}, {1 << 32, testDeviceID}, {1, ""}, {1, "a b"}, {1, strings.Repeat("d", 256)}} {
		mustErr(t, c.Heartbeat(context.Background(), tt.rom, tt.dev), ErrInvalid)
	}
	mustErr(t, c.ClearHeartbeat(context.Background(), ""), ErrInvalid)
	if n := f.total(); n != 0 {
		t.Errorf("%d requests for invalid input", n)
	}
}

func TestClearHeartbeat(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/activity/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || r.URL.Query().Get("device_id") != "a&b" || r.ContentLength > 0 {
			t.Errorf("%s %s length %d", r.Method, r.URL, r.ContentLength)
		}
		w.WriteHeader(204)
	})
	c := newClient(t, srv.URL)
	if err := c.ClearHeartbeat(context.Background(), "a&b"); err != nil {
		t.Fatal(err)
	}
	f.route("/api/activity/heartbeat", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 500, map[string]any{"detail": "x"}) })
	if err := c.ClearHeartbeat(context.Background(), "a&b"); err == nil || !strings.Contains(err.Error(), "DELETE /api/activity/heartbeat") {
		t.Fatalf("500: %v", err)
	}
}

func TestPostPlaySessions(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 20, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	in := []PlaySession{
		{ROMID: 7, Start: t0.Add(300 * time.Millisecond), End: t0.Add(time.Hour + 900*time.Millisecond), Duration: 50 * time.Minute},
		{ROMID: 7, Start: t0.Add(200 * time.Millisecond), End: t0.Add(900 * time.Millisecond), Duration: 0}, // one second once truncated: none
		{ROMID: 0, Start: t0.Add(2 * time.Hour), End: t0.Add(3 * time.Hour), Duration: time.Hour},
		{ROMID: 8, Start: t0.Add(4 * time.Hour), End: t0.Add(5 * time.Hour), Duration: -time.Second},
		{ROMID: 9, Start: t0.Add(6 * time.Hour), End: t0.Add(7 * time.Hour), Duration: time.Minute},
	}
	f, srv := newFake(t, "5.3.1")
	f.route("/api/play-sessions", func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			DeviceID *string          `json:"device_id"`
			Sessions []map[string]any `json:"sessions"`
		}
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Fatal(err)
		}
		if b.DeviceID == nil || *b.DeviceID != testDeviceID || len(b.Sessions) != 3 {
			t.Fatalf("payload %+v", b)
		}
		want := []string{
			`map[duration_ms:3e+06 end_time:2026-06-01T19:00:00Z rom_id:7 start_time:2026-06-01T18:00:00Z]`,
			`map[duration_ms:3.6e+06 end_time:2026-06-01T21:00:00Z rom_id:<nil> start_time:2026-06-01T20:00:00Z]`,
			`map[duration_ms:60000 end_time:2026-06-02T01:00:00Z rom_id:9 start_time:2026-06-02T00:00:00Z]`,
		}
		for i, s := range b.Sessions {
			if got := fmt.Sprint(s); got != want[i] {
				t.Errorf("session %d = %s, want %s", i, got, want[i])
			}
		}
		// RomM's order: errors, then duplicates, then created.
		writeJSON(w, 201, map[string]any{"results": []any{
			map[string]any{"index": 2, "status": "error", "detail": "end_time is too far in the future"},
			map[string]any{"index": 0, "status": "duplicate"},
			map[string]any{"index": 1, "status": "created", "id": 41},
		}, "created_count": 1, "skipped_count": 2})
	})
	got, err := newClient(t, srv.URL).PostPlaySessions(context.Background(), testDeviceID, in)
	if err != nil {
		t.Fatal(err)
	}
	want := []SessionResult{
		{0, SessionDuplicate, 0, ""},
		{1, SessionError, 0, "the session does not end after it starts (to the second, as RomM counts)"},
		{2, SessionCreated, 41, ""},
		{3, SessionError, 0, "the session's duration is negative"},
		{4, SessionError, 0, "end_time is too far in the future"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results\n got %v\nwant %v", got, want)
	}
}

func TestPostPlaySessionsLocal(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	t0 := time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC)
	ok := PlaySession{ROMID: 1, Start: t0, End: t0.Add(time.Minute)}

	_, err := c.PostPlaySessions(context.Background(), "", make([]PlaySession, MaxSessionsPerRequest+1))
	mustErr(t, err, ErrInvalid)
	_, err = c.PostPlaySessions(context.Background(), "a b", []PlaySession{ok})
	mustErr(t, err, ErrInvalid)

	res, err := c.PostPlaySessions(context.Background(), "", nil)
	if err != nil || len(res) != 0 {
		t.Errorf("empty: %v, %v", res, err)
	}
	bad := []PlaySession{
		{ROMID: -1, Start: t0, End: t0.Add(time.Minute)},
		{ROMID: 1, End: t0},
		{ROMID: 1, Start: t0, End: t0},
		{ROMID: 1, Start: t0, End: t0.Add(-time.Minute)},
		{ROMID: 1, Start: time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC), End: t0},
		{ROMID: 1, Start: t0, End: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	res, err = c.PostPlaySessions(context.Background(), "", bad)
	if err != nil || len(res) != len(bad) {
		t.Fatalf("all bad: %v, %v", res, err)
	}
	for i, r := range res {
		if r.Index != i || r.Status != SessionError || r.Detail == "" {
			t.Errorf("result %d = %+v", i, r)
		}
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests for sessions refused locally", n)
	}

	// No device: device_id is left out, and RomM's own validation errors come back as errors.
	f.route("/api/play-sessions", func(w http.ResponseWriter, r *http.Request) {
		if b := decodeBody(t, r); b["device_id"] != nil {
			t.Errorf("device_id sent: %v", b)
		}
		writeJSON(w, 422, map[string]any{"detail": []any{map[string]any{"loc": []any{"body", "sessions", 0}, "msg": "Value error, end_time must be after start_time", "type": "value_error"}}})
	})
	_, err = c.PostPlaySessions(context.Background(), "", []PlaySession{ok})
	mustErr(t, err, ErrInvalid)
	if !strings.Contains(err.Error(), "end_time must be after start_time") {
		t.Errorf("error %q lacks RomM's detail", err)
	}

	f2, srv2 := newFake(t, "4.8.1")
	_, err = newClient(t, srv2.URL).PostPlaySessions(context.Background(), "", []PlaySession{ok})
	mustErr(t, err, ErrUnsupported)
	if f2.count("/api/play-sessions") != 0 {
		t.Error("sent to RomM 4.8")
	}
}

func TestDecodeSessionResults(t *testing.T) {
	for _, tt := range []struct {
		body string
		n    int
		want string // fmt of the results, or "error"
	}{
		{`{"results":[],"created_count":0,"skipped_count":0}`, 1, "[{0 error 0 RomM did not report this session: send it again (RomM answers duplicate if it has it)}]"},
		{`{"results":[{"index":0,"status":"created","id":-4}]}`, 1, "[{0 created 0 }]"},
		{`{"results":[{"index":0,"status":"error"}]}`, 1, "[{0 error 0 RomM refused the session without saying why}]"},
		{`{"results":[{"index":0,"status":"duplicate","detail":"\u202egone\u0000"}]}`, 1, "[{0 duplicate 0 gone}]"},
		{`{}`, 1, "error"},
		{`{"results":null}`, 1, "error"},
		{`{"results":[{"index":1,"status":"created"}]}`, 1, "error"},
		{`{"results":[{"index":0,"status":"created"},{"index":0,"status":"created"}]}`, 2, "error"},
		{`{"results":[{"status":"created"}]}`, 1, "error"},
		{`{"results":[{"index":0,"status":"made"}]}`, 1, "error"},
		{`{"results":[{"index":0,"status":"created"},{"index":1,"status":"created"}]}`, 1, "error"},
		{`[`, 1, "error"},
	} {
		got, err := decodeSessionResults([]byte(tt.body), tt.n)
		switch {
		case tt.want == "error":
			if !errors.Is(err, ErrBadData) {
				t.Errorf("%s: %v, %v; want ErrBadData", tt.body, got, err)
			}
		case err != nil || fmt.Sprint(got) != tt.want:
			t.Errorf("%s: %v, %v; want %s", tt.body, got, err, tt.want)
		}
	}
}

func TestROMByHash(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	r, err := c.ROMByHash(context.Background(), "ABCDEF01", "", "0123456789abcdef0123456789ABCDEF01234567")
	if err != nil || r.ID == 0 {
		t.Fatalf("ROMByHash = %+v, %v", r, err)
	}
	q := f.last("/api/roms/by-hash").URL.Query()
	if q.Get("crc_hash") != "abcdef01" || q.Has("md5_hash") || q.Get("sha1_hash") != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("query %v", q)
	}
	f.route("/api/roms/by-hash", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 404, map[string]any{"detail": "No ROM or file found with given hash values"})
	})
	_, err = c.ROMByHash(context.Background(), "abcdef01", "", "")
	mustErr(t, err, ErrNotFound)

	n := f.total()
	for _, h := range [][3]string{{"", "", ""}, {"abcdef0", "", ""}, {"", "xyz", ""}, {"", "", "0123"}, {"abcdef01 ", "", ""}} {
		_, err := c.ROMByHash(context.Background(), h[0], h[1], h[2])
		mustErr(t, err, ErrInvalid)
	}
	if f.total() != n {
		t.Error("invalid hashes were sent")
	}

	f2, srv2 := newFake(t, "4.4.0")
	_, err = newClient(t, srv2.URL, func(c *Config) { c.Token = "" }).ROMByHash(context.Background(), "abcdef01", "", "")
	mustErr(t, err, ErrUnsupported)
	if f2.count("/api/roms/by-hash") != 0 {
		t.Error("sent to RomM 4.4")
	}
}

// TestWriteRedirects: a write follows a same-host 307/308 (the body is sent again) and refuses a
// redirect that would turn it into a GET.
func TestWriteRedirects(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/devices/", http.StatusTemporaryRedirect)
	})
	f.route("/api/devices/", func(w http.ResponseWriter, r *http.Request) {
		if b := decodeBody(t, r); r.Method != http.MethodPost || b["mac_address"] != "b8:27:eb:12:34:ab" {
			t.Errorf("after the redirect: %s %v", r.Method, b)
		}
		writeJSON(w, 201, map[string]any{"device_id": testDeviceID})
	})
	c := newClient(t, srv.URL)
	if id, err := c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"}); err != nil || id != testDeviceID {
		t.Fatalf("307: %q, %v", id, err)
	}
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/api/devices/", http.StatusFound)
	})
	_, err := c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
	if err == nil || !strings.Contains(err.Error(), "redirected the POST") {
		t.Fatalf("302: %v", err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other host got %s %s", r.Method, r.URL)
	}))
	t.Cleanup(other.Close)
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/api/devices", http.StatusPermanentRedirect)
	})
	_, err = c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
	if err == nil || !strings.Contains(err.Error(), "another host") {
		t.Fatalf("cross-host 308: %v", err)
	}
}

func TestWriteTimeoutAndBounds(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f, srv := newFake(t, "5.3.1")
	f.route("/api/activity/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a client gone only once the body is read
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := withShortTimeout(t, newClient(t, srv.URL), 100*time.Millisecond)
	err := c.Heartbeat(context.Background(), 1, testDeviceID)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "POST /api/activity/heartbeat") {
		t.Fatalf("slow: %v", err)
	}

	c = newClient(t, srv.URL)
	_, _, err = c.send(context.Background(), writeRequest{request: request{path: "/api/x", max: maxJSON}, method: http.MethodPost,
		body: map[string]string{"x": strings.Repeat("a", maxRequestBody)}})
	mustErr(t, err, ErrInvalid)

	// An answer that says it is over the bound is refused before its body is read.
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(maxJSON+1))
		fmt.Fprintf(w, `{"device_id":"%s","pad":"`, testDeviceID)
	})
	_, err = c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
	mustErr(t, err, ErrTooLarge)
	// A chunked answer (no length) that never ends is read up to the request's bound and refused
	// there; a small bound keeps the amount streamed independent of maxJSON and of the machine's speed.
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"device_id":"%s","pad":"`, testDeviceID)
		pad := []byte(strings.Repeat("a", 1024))
		for r.Context().Err() == nil {
			if _, err := w.Write(pad); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	_, _, err = c.send(context.Background(), writeRequest{request: request{path: "/api/devices", max: 8 << 10}, method: http.MethodPost,
		body: map[string]string{"mac_address": "b8:27:eb:12:34:ab"}})
	mustErr(t, err, ErrTooLarge)
	f.route("/api/devices", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html>login</html>")
	})
	_, err = c.RegisterDevice(context.Background(), DeviceInfo{MAC: "b8:27:eb:12:34:ab"})
	mustErr(t, err, ErrNotRomM)
}
