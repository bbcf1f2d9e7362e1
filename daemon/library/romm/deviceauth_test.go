package romm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	testDeviceCode = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
	newToken       = "rmm_fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func initRequest() DeviceInitRequest {
	return DeviceInitRequest{Identifier: "cabinet-7f3a", Name: "Living room cabinet", Client: "batocera-cabinet",
		Platform: "Batocera", ClientVersion: "1.2.3", Scopes: []string{"roms.read", "platforms.read", "roms.read"}}
}

// decodeBody reads a JSON request body into a map (test side).
func decodeBody(t *testing.T, r *http.Request) map[string]any {
	t.Helper()
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		t.Errorf("read request body: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("request body %s: %v", b, err)
	}
	return m
}

func initAnswer(path any) map[string]any {
	return map[string]any{"device_code": testDeviceCode, "user_code": "ABCD2345", "verification_path": "/pair/device",
		"verification_path_complete": path, "expires_in": 600, "interval": 5}
}

func TestDeviceInit(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.token = "" // the route is open; the fake's auth must not stand in the way
	f.route("/api/auth/device/init", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s with Content-Type %q, want a JSON POST", r.Method, r.Header.Get("Content-Type"))
		}
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("the open route got Authorization %q", a)
		}
		b := decodeBody(t, r)
		want := map[string]any{"client_device_identifier": "cabinet-7f3a", "name": "Living room cabinet", "client": "batocera-cabinet",
			"platform": "Batocera", "client_version": "1.2.3", "requested_scopes": []any{"roms.read", "platforms.read"}}
		if fmt.Sprint(b) != fmt.Sprint(want) {
			t.Errorf("body %v, want %v", b, want)
		}
		writeJSON(w, 201, initAnswer("/pair/device?user_code=ABCD2345"))
	})
	for _, tt := range []struct{ base, want string }{
		{srv.URL, srv.URL + "/pair/device?user_code=ABCD2345"},
		{srv.URL + "/", srv.URL + "/pair/device?user_code=ABCD2345"},
	} {
		c := newClient(t, tt.base)
		d, err := c.DeviceInit(context.Background(), initRequest())
		if err != nil {
			t.Fatal(err)
		}
		want := DeviceCode{DeviceCode: testDeviceCode, UserCode: "ABCD2345", VerificationURL: tt.want, ExpiresIn: 10 * time.Minute, Interval: 5 * time.Second}
		if d != want {
			t.Errorf("DeviceInit = %#v, want %#v", d, want)
		}
		if s := fmt.Sprintf("%v %+v %#v", d, d, d); strings.Contains(s, testDeviceCode) {
			t.Errorf("printing a DeviceCode shows the device code: %s", s)
		}
	}
}

// A RomM behind a path prefix serves its web UI under the same prefix.
func TestDeviceInitPrefix(t *testing.T) {
	f, _ := newFake(t, "5.3.1")
	f.token = ""
	mux := http.NewServeMux()
	mux.Handle("/romm/", http.StripPrefix("/romm", f))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.route("/api/auth/device/init", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, initAnswer("/pair/device?user_code=ABCD2345"))
	})
	d, err := newClient(t, srv.URL+"/romm").DeviceInit(context.Background(), initRequest())
	if err != nil || d.VerificationURL != srv.URL+"/romm/pair/device?user_code=ABCD2345" {
		t.Fatalf("DeviceInit = %+v, %v", d, err)
	}
}

func TestDeviceInitRefusesBadRequests(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	mod := func(m func(*DeviceInitRequest)) DeviceInitRequest { r := initRequest(); m(&r); return r }
	for name, r := range map[string]DeviceInitRequest{
		"no identifier":       mod(func(r *DeviceInitRequest) { r.Identifier = "" }),
		"no name":             mod(func(r *DeviceInitRequest) { r.Name = "" }),
		"no client":           mod(func(r *DeviceInitRequest) { r.Client = "" }),
		"long name":           mod(func(r *DeviceInitRequest) { r.Name = strings.Repeat("é", 256) }),
		"long client":         mod(func(r *DeviceInitRequest) { r.Client = strings.Repeat("x", 51) }),
		"long platform":       mod(func(r *DeviceInitRequest) { r.Platform = strings.Repeat("x", 51) }),
		"control character":   mod(func(r *DeviceInitRequest) { r.Name = "cab\ninet" }),
		"invalid UTF-8":       mod(func(r *DeviceInitRequest) { r.Name = "cab\xffinet" }),
		"no scopes":           mod(func(r *DeviceInitRequest) { r.Scopes = nil }),
		"unknown scope":       mod(func(r *DeviceInitRequest) { r.Scopes = []string{"roms.read", "everything"} }),
		"too many scopes":     mod(func(r *DeviceInitRequest) { r.Scopes = make([]string, 23) }),
		"long identifier":     mod(func(r *DeviceInitRequest) { r.Identifier = strings.Repeat("x", 256) }),
		"long client version": mod(func(r *DeviceInitRequest) { r.ClientVersion = strings.Repeat("x", 51) }),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.DeviceInit(context.Background(), r)
			mustErr(t, err, ErrInvalid)
		})
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests sent for invalid input, want none", n)
	}
}

func TestDeviceInitAnswers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		answer any
		want   error
		check  func(DeviceCode) bool
	}{
		{"absolute verification URL", 201, initAnswer("https://evil.example/pair/device?user_code=ABCD2345"), ErrBadData, nil},
		{"scheme-relative verification URL", 201, initAnswer("//evil.example/pair"), ErrBadData, nil},
		{"backslash", 201, initAnswer("/\\evil.example/pair"), ErrBadData, nil},
		{"device code in the URL", 201, initAnswer("/pair/device?c=" + testDeviceCode), ErrBadData, nil},
		{"no device code", 201, map[string]any{"user_code": "ABCD2345", "verification_path_complete": "/pair/device", "expires_in": 600, "interval": 5}, ErrBadData, nil},
		{"odd user code", 201, map[string]any{"device_code": testDeviceCode, "user_code": "<b>hi</b>", "verification_path_complete": "/pair/device", "expires_in": 600}, ErrBadData, nil},
		{"no lifetime", 201, map[string]any{"device_code": testDeviceCode, "user_code": "ABCD2345", "verification_path_complete": "/pair/device", "expires_in": 0}, ErrBadData, nil},
		{"not JSON", 201, json.RawMessage(`{"device_code":`), ErrBadData, nil},
		{"only verification_path, odd interval", 201, map[string]any{"device_code": testDeviceCode, "user_code": "ABCD2345", "verification_path": "/pair/device", "expires_in": 86400, "interval": 0},
			nil, func(d DeviceCode) bool {
				return strings.HasSuffix(d.VerificationURL, "/pair/device?user_code=ABCD2345") && d.ExpiresIn == 30*time.Minute && d.Interval == 5*time.Second
			}},
		{"long interval", 201, map[string]any{"device_code": testDeviceCode, "user_code": "ABCD2345", "verification_path_complete": "/pair/device?user_code=ABCD2345", "expires_in": 600, "interval": 3600},
			nil, func(d DeviceCode) bool { return d.Interval == time.Minute }},
		{"rate limited", 429, map[string]any{"detail": "Too many authorize attempts. Try again later."}, ErrSlowDown, nil},
		{"422", 422, map[string]any{"detail": []any{map[string]any{"loc": []any{"body", "requested_scopes"}, "msg": "Value error, Unknown scopes: x", "type": "value_error"}}}, ErrInvalid, nil},
		{"500", 500, map[string]any{"detail": "boom"}, nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.token = ""
			f.route("/api/auth/device/init", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, tt.status, tt.answer) })
			d, err := newClient(t, srv.URL).DeviceInit(context.Background(), initRequest())
			if tt.check != nil {
				if err != nil || !tt.check(d) {
					t.Fatalf("DeviceInit = %+v, %v", d, err)
				}
				return
			}
			mustErr(t, err, tt.want)
			if strings.Contains(err.Error(), testDeviceCode) {
				t.Errorf("error carries the device code: %v", err)
			}
		})
	}
}

func TestDeviceToken(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
		answer any
		want   error
	}{
		{"pending", 400, map[string]any{"detail": "authorization_pending"}, ErrAuthorizationPending},
		{"slow down", 400, map[string]any{"detail": "slow_down"}, ErrSlowDown},
		{"denied", 400, map[string]any{"detail": "access_denied"}, ErrAccessDenied},
		{"expired", 400, map[string]any{"detail": "expired_token"}, ErrExpiredToken},
		{"poll rate limit", 429, map[string]any{"detail": "Too many polling attempts. Try again later."}, ErrSlowDown},
		{"other 400", 400, map[string]any{"detail": "something else"}, ErrInvalid},
		{"422", 422, map[string]any{"detail": []any{map[string]any{"loc": []any{"body", "device_code"}, "msg": "too long", "type": "x"}}}, ErrInvalid},
		{"404", 404, map[string]any{"detail": "Not Found"}, ErrNotFound},
		{"500", 500, map[string]any{"detail": "boom"}, nil},
		{"no token", 200, map[string]any{"device_id": "d", "scopes": []any{}, "expires_at": nil}, ErrBadData},
		{"token not a token", 200, map[string]any{"access_token": "has space", "device_id": "d", "scopes": []any{}, "expires_at": nil}, ErrBadData},
		{"bad expiry", 200, map[string]any{"access_token": newToken, "device_id": "d", "scopes": []any{}, "expires_at": "tomorrow"}, ErrBadData},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "5.3.1")
			f.token = ""
			f.route("/api/auth/device/token", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, tt.status, tt.answer) })
			tok, err := newClient(t, srv.URL).DeviceToken(context.Background(), testDeviceCode)
			mustErr(t, err, tt.want)
			for _, s := range []error{ErrAuthorizationPending, ErrSlowDown, ErrAccessDenied, ErrExpiredToken} {
				if s != tt.want && errors.Is(err, s) {
					t.Errorf("error %q is also %v", err, s)
				}
			}
			if tok.Token != "" || strings.Contains(err.Error(), newToken) || strings.Contains(err.Error(), testDeviceCode) {
				t.Errorf("DeviceToken = %v, %q: a token or the device code leaked", tok, err)
			}
		})
	}
}

func TestDeviceTokenApproved(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.token = ""
	f.route("/api/auth/device/token", func(w http.ResponseWriter, r *http.Request) {
		if b := decodeBody(t, r); b["device_code"] != testDeviceCode || len(b) != 1 {
			t.Errorf("body %v", b)
		}
		writeJSON(w, 200, map[string]any{"access_token": newToken, "device_id": "5b0c7b9e-8a31-4d55-9d36-0f4b0b7c6a11",
			"scopes": []any{"roms.read", "roms.user.write", "roms.read", "Bad Scope"}, "expires_at": "2026-09-01T10:00:00.123456+00:00"})
	})
	tok, err := newClient(t, srv.URL).DeviceToken(context.Background(), testDeviceCode)
	if err != nil {
		t.Fatal(err)
	}
	want := DeviceToken{Token: newToken, DeviceID: "5b0c7b9e-8a31-4d55-9d36-0f4b0b7c6a11", Scopes: []string{"roms.read", "roms.user.write"},
		ExpiresAt: time.Date(2026, 9, 1, 10, 0, 0, 123456000, time.UTC)}
	if fmt.Sprint(tok.Scopes) != fmt.Sprint(want.Scopes) || tok.Token != want.Token || tok.DeviceID != want.DeviceID || !tok.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("DeviceToken = %+v, want %+v", tok, want)
	}
}

func TestDeviceTokenNeverPrinted(t *testing.T) {
	tok := DeviceToken{Token: newToken, DeviceID: "d1", Scopes: []string{"roms.read"}}
	js, err := json.Marshal(tok)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := struct{ T DeviceToken }{tok}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v", tok), fmt.Sprintf("%#v", tok), fmt.Sprintf("%v", &tok),
		fmt.Sprintf("%+v", wrapped), fmt.Sprintf("%s", tok), string(js)} {
		if strings.Contains(s, newToken) || !strings.Contains(s, "[token]") {
			t.Errorf("printed as %s", s)
		}
	}
}

func TestDeviceAuthVersionGate(t *testing.T) {
	for _, v := range []string{"4.9.2", "4.7.0", "5.0.0-alpha.0"} {
		t.Run(v, func(t *testing.T) {
			f, srv := newFake(t, v)
			f.token = ""
			c := newClient(t, srv.URL, func(c *Config) { c.Token = "" })
			_, err := c.DeviceInit(context.Background(), initRequest())
			if v == "5.0.0-alpha.0" { // a pre-release counts as its minor
				if errors.Is(err, ErrUnsupported) {
					t.Fatalf("5.0.0-alpha refused: %v", err)
				}
				return
			}
			mustErr(t, err, ErrUnsupported)
			if v == "4.9.2" && !strings.Contains(err.Error(), "pair") {
				t.Errorf("error %q does not point at pairing", err)
			}
			_, err = c.DeviceToken(context.Background(), testDeviceCode)
			mustErr(t, err, ErrUnsupported)
			if n := f.count("/api/auth/device/init") + f.count("/api/auth/device/token"); n != 0 {
				t.Errorf("%d device-auth requests sent to RomM %s", n, v)
			}
		})
	}
}

func TestExchangePairCode(t *testing.T) {
	answer := map[string]any{"id": 3, "name": "cabinet", "scopes": []any{"roms.read"}, "expires_at": "2026-12-01T00:00:00",
		"last_used_at": nil, "created_at": "2026-06-01T00:00:00", "user_id": 1, "device_id": nil, "raw_token": newToken}
	for _, tt := range []struct {
		name   string
		code   string
		status int
		answer any
		want   error
	}{
		{"ok", "abcd-2345", 200, answer, nil},
		{"ok spaced", "ABCD 2345", 200, answer, nil},
		{"unknown code", "ABCD2345", 404, map[string]any{"detail": "Invalid or expired pairing code"}, ErrExpiredToken},
		{"token gone", "ABCD2345", 404, map[string]any{"detail": "Token no longer exists"}, ErrExpiredToken},
		{"owner disabled", "ABCD2345", 403, map[string]any{"detail": "Token owner is disabled"}, ErrAccessDenied},
		{"rate limited", "ABCD2345", 429, map[string]any{"detail": "Too many exchange attempts. Try again later."}, ErrSlowDown},
		{"500", "ABCD2345", 500, map[string]any{"detail": "boom"}, nil},
		{"bad answer", "ABCD2345", 200, map[string]any{"raw_token": 12}, ErrBadData},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, "4.8.0")
			f.token = ""
			f.route("/api/client-tokens/exchange", func(w http.ResponseWriter, r *http.Request) {
				if b := decodeBody(t, r); b["code"] != "ABCD2345" {
					t.Errorf("sent code %v, want ABCD2345", b["code"])
				}
				writeJSON(w, tt.status, tt.answer)
			})
			c := newClient(t, srv.URL, func(c *Config) { c.Token = "" })
			tok, err := c.ExchangePairCode(context.Background(), tt.code)
			if tt.name == "ok" || tt.name == "ok spaced" {
				if err != nil || tok.Token != newToken || tok.DeviceID != "" || !tok.ExpiresAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
					t.Fatalf("ExchangePairCode = %+v, %v", tok, err)
				}
				return
			}
			mustErr(t, err, tt.want)
			if tt.status == 500 && errors.Is(err, ErrExpiredToken) {
				t.Errorf("500 is %v", err)
			}
			if strings.Contains(err.Error(), "ABCD2345") {
				t.Errorf("error quotes the pair code: %v", err)
			}
		})
	}
}

func TestExchangePairCodeRefusesBadCodes(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	c := newClient(t, srv.URL)
	for _, code := range []string{"", "ABCD234", "ABCD23456", "ABCDI234", "ABCDO234", "ABCD0234", "ABCD1234", "ABCDL234", "ABCD234\"", strings.Repeat("-", 100) + "ABCD2345", "ÀBCD2345"} {
		_, err := c.ExchangePairCode(context.Background(), code)
		mustErr(t, err, ErrInvalid)
	}
	if n := f.total(); n != 0 {
		t.Errorf("%d requests sent for invalid codes", n)
	}
	f2, srv2 := newFake(t, "4.7.2")
	_, err := newClient(t, srv2.URL, func(c *Config) { c.Token = "" }).ExchangePairCode(context.Background(), "ABCD2345")
	mustErr(t, err, ErrUnsupported)
	if f2.count("/api/client-tokens/exchange") != 0 {
		t.Error("exchange sent to RomM 4.7")
	}
}

func TestWithToken(t *testing.T) {
	f, srv := newFake(t, "5.3.1")
	f.token = newToken
	c := newClient(t, srv.URL, func(c *Config) { c.Token = "" })
	if _, err := c.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := c.WithToken(newToken)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Platforms(context.Background()); err != nil {
		t.Fatalf("Platforms with the paired token: %v", err)
	}
	if got := f.last("/api/platforms").Header.Get("Authorization"); got != "Bearer "+newToken {
		t.Errorf("Authorization %q", got)
	}
	if n := f.count("/api/heartbeat"); n != 1 {
		t.Errorf("%d heartbeats, want the first client's one reused", n)
	}
	if _, err := c.Platforms(context.Background()); err == nil {
		t.Error("the original client got the paired token too")
	}
	for _, bad := range []string{"", "has space", strings.Repeat("a", maxToken+1), "tok\"en"} {
		_, err := c.WithToken(bad)
		mustErr(t, err, ErrInvalid)
	}
}

func TestScrubTokens(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "",
		"no token":                     "no token",
		"bearer " + newToken + " end":  "bearer [token] end",
		"rmm_ab":                       "rmm_ab",
		"x rmm_" + newToken[4:20]:      "x [token]",
		newToken + newToken:            "[token][token]",
		"rmm_rmm_" + newToken[4:] + "": "rmm_[token]",
	} {
		if got := scrubTokens(in); got != want {
			t.Errorf("scrubTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// total counts every request the fake got.
func (f *fakeRomM) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}
