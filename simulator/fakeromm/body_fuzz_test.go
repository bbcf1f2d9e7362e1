package fakeromm

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzWriteBodies sends arbitrary bodies to the write routes: each answers
// one of its documented statuses with a JSON body, never a panic or a 500.
func FuzzWriteBodies(f *testing.F) {
	for _, seed := range []string{
		`{"sessions":[{"rom_id":1,"start_time":"2025-06-01T10:00:00Z","end_time":"2025-06-01T10:30:00Z","duration_ms":1}]}`,
		`{"sessions":[{"start_time":1748772000,"end_time":"2025-06-01 10:30","duration_ms":"5"}],"device_id":null}`,
		`{"rom_id":1.0,"device_id":"x"}`, `{"name":"n","mac_address":"m","sync_config":{},"allow_existing":"off"}`,
		`{"client_device_identifier":"i","name":"n","client":"c","requested_scopes":["roms.read"]}`,
		`{"device_code":"x"}`, `{"code":"ab-cd"}`, `[]`, `{`, `null`, `{"sessions":[null,7,[]]}`,
	} {
		f.Add(seed)
	}
	s, err := New(Options{Scopes: WriteScopes()})
	if err != nil {
		f.Fatal(err)
	}
	paths := []string{"/api/play-sessions", "/api/activity/heartbeat", "/api/devices", "/api/auth/device/init",
		"/api/auth/device/token", "/api/client-tokens/exchange"}
	f.Fuzz(func(t *testing.T, body string) {
		for _, p := range paths {
			req := httptest.NewRequest("POST", p, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+s.Token())
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK, http.StatusCreated, http.StatusBadRequest, http.StatusNotFound, http.StatusConflict,
				http.StatusUnprocessableEntity:
			default:
				t.Fatalf("POST %s %q: status %d: %s", p, body, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("POST %s %q: not JSON: %s", p, body, rec.Body)
			}
		}
	})
}

func FuzzParseDatetime(f *testing.F) {
	for _, seed := range []string{"2025-06-01T10:00:00Z", "2025-06-01 10:00:00.123456+02:00", "2025-06-01T10:00", "", "x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tm, err := parseDatetime(s); err == nil && tm.IsZero() && !strings.HasPrefix(strings.TrimSpace(s), "0001-01-01") {
			t.Fatalf("parseDatetime(%q) = zero time without an error", s)
		}
	})
}
