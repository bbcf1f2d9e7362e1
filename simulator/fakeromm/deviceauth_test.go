package fakeromm

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

type initAnswer struct {
	DeviceCode               string `json:"device_code"`
	UserCode                 string `json:"user_code"`
	VerificationPath         string `json:"verification_path"`
	VerificationPathComplete string `json:"verification_path_complete"`
	ExpiresIn                int    `json:"expires_in"`
	Interval                 int    `json:"interval"`
}

type tokenAnswer struct {
	AccessToken string   `json:"access_token"`
	DeviceID    string   `json:"device_id"`
	Scopes      []string `json:"scopes"`
	ExpiresAt   *string  `json:"expires_at"`
}

func initBody(identifier string, scopes ...string) map[string]any {
	return map[string]any{"client_device_identifier": identifier, "name": "Arcade cabinet", "client": "cabinet",
		"platform": "Batocera", "client_version": "1.0.0", "requested_scopes": scopes}
}

func startFlow(t *testing.T, base, identifier string, scopes ...string) initAnswer {
	t.Helper()
	var a initAnswer
	sendJSON(t, "POST", base, "/api/auth/device/init", "", initBody(identifier, scopes...), http.StatusCreated, &a)
	return a
}

func poll(t *testing.T, base, deviceCode string) (int, []byte) {
	t.Helper()
	code, _, body := send(t, "POST", base, "/api/auth/device/token", "", map[string]string{"device_code": deviceCode})
	return code, body
}

func wantPoll(t *testing.T, base, deviceCode, want string) {
	t.Helper()
	wantDetail(t, "POST", base, "/api/auth/device/token", "", map[string]string{"device_code": deviceCode},
		http.StatusBadRequest, want)
}

func TestDeviceFlowApproved(t *testing.T) {
	s, base, clk := writeServer(t)
	a := startFlow(t, base, "batocera-0001", ScopeRomsRead, ScopeDevicesRead, ScopePlatformsRead)
	if len(a.UserCode) != 8 || strings.Trim(a.UserCode, pairAlphabet) != "" {
		t.Errorf("user_code %q: want 8 characters of %s", a.UserCode, pairAlphabet)
	}
	if len(a.DeviceCode) != 64 {
		t.Errorf("device_code %q: want 64 hex digits", a.DeviceCode)
	}
	if a.VerificationPath != "/pair/device" || a.VerificationPathComplete != "/pair/device?user_code="+a.UserCode {
		t.Errorf("verification paths %q, %q", a.VerificationPath, a.VerificationPathComplete)
	}
	if a.ExpiresIn != 600 || a.Interval != 5 {
		t.Errorf("expires_in %d, interval %d; want 600, 5", a.ExpiresIn, a.Interval)
	}
	if got := s.PendingDeviceCodes(); !reflect.DeepEqual(got, []string{a.UserCode}) {
		t.Errorf("PendingDeviceCodes() = %v, want [%s]", got, a.UserCode)
	}

	wantPoll(t, base, a.DeviceCode, "authorization_pending")
	clk.Advance(4 * time.Second)
	wantPoll(t, base, a.DeviceCode, "slow_down")
	clk.Advance(4 * time.Second) // 4 s after the slow_down poll, which counts too
	wantPoll(t, base, a.DeviceCode, "slow_down")
	clk.Advance(5 * time.Second)
	wantPoll(t, base, a.DeviceCode, "authorization_pending")

	if err := s.Approve(strings.ToLower(a.UserCode[:4])+"-"+a.UserCode[4:], []string{ScopeRomsRead, ScopeDevicesRead}); err != nil {
		t.Fatal(err)
	}
	if got := s.PendingDeviceCodes(); len(got) != 0 {
		t.Errorf("PendingDeviceCodes() after approval = %v, want none", got)
	}
	if err := s.Approve(a.UserCode, nil); err == nil {
		t.Error("a second Approve succeeded")
	}
	clk.Advance(5 * time.Second)
	var tok tokenAnswer
	code, body := poll(t, base, a.DeviceCode)
	if code != http.StatusOK {
		t.Fatalf("poll after approval: %d %s", code, body)
	}
	sendJSON(t, "POST", base, "/api/auth/device/token", "", nil, 422, nil) // no body
	decode(t, body, &tok)
	if !strings.HasPrefix(tok.AccessToken, "rmm_") || len(tok.AccessToken) != 68 || tok.ExpiresAt != nil {
		t.Errorf("token %q expires_at %v: want rmm_ + 64 hex, never expiring", tok.AccessToken, tok.ExpiresAt)
	}
	if want := []string{ScopeDevicesRead, ScopeRomsRead}; !reflect.DeepEqual(tok.Scopes, want) {
		t.Errorf("scopes %v, want %v", tok.Scopes, want)
	}
	wantPoll(t, base, a.DeviceCode, "expired_token") // handed out once

	// The token reads what it holds, is refused what it does not.
	getJSON(t, base, "/api/roms?limit=1", tok.AccessToken, http.StatusOK, nil)
	getJSON(t, base, "/api/platforms", tok.AccessToken, http.StatusForbidden, nil)
	var devs []struct {
		ID         string  `json:"id"`
		Identifier *string `json:"client_device_identifier"`
		SyncMode   string  `json:"sync_mode"`
	}
	getJSON(t, base, "/api/devices", tok.AccessToken, http.StatusOK, &devs)
	if len(devs) != 1 || devs[0].ID != tok.DeviceID || devs[0].Identifier == nil || *devs[0].Identifier != "batocera-0001" ||
		devs[0].SyncMode != "api" {
		t.Errorf("devices %+v, want the one device %s of batocera-0001", devs, tok.DeviceID)
	}
	if rs := s.Requests(); !rs[len(rs)-1].Authorized {
		t.Error("a request with the issued token is not recorded as authorized")
	}

	// Pairing the same device again reuses its row.
	b := startFlow(t, base, "batocera-0001", ScopeRomsRead)
	if err := s.Approve(b.UserCode, nil); err != nil {
		t.Fatal(err)
	}
	var tok2 tokenAnswer
	sendJSON(t, "POST", base, "/api/auth/device/token", "", map[string]string{"device_code": b.DeviceCode}, 200, &tok2)
	if tok2.DeviceID != tok.DeviceID || len(s.Devices()) != 1 {
		t.Errorf("re-pairing: device %s (of %d), want %s", tok2.DeviceID, len(s.Devices()), tok.DeviceID)
	}
	getJSON(t, base, "/api/roms?limit=1", tok.AccessToken, http.StatusOK, nil) // the first token still works
}

func TestDeviceFlowDenied(t *testing.T) {
	s, base, clk := writeServer(t)
	a := startFlow(t, base, "batocera-0002", ScopeRomsRead)
	if err := s.Deny(a.UserCode); err != nil {
		t.Fatal(err)
	}
	wantPoll(t, base, a.DeviceCode, "access_denied")
	clk.Advance(59 * time.Second)
	wantPoll(t, base, a.DeviceCode, "access_denied")
	clk.Advance(time.Second)
	wantPoll(t, base, a.DeviceCode, "expired_token")
	if err := s.Approve(a.UserCode, nil); err == nil {
		t.Error("Approve after Deny succeeded")
	}
	if len(s.Devices()) != 0 {
		t.Errorf("a denied request registered %d devices", len(s.Devices()))
	}
}

func TestDeviceFlowExpired(t *testing.T) {
	s, base, clk := writeServer(t)
	s.SetDeviceAuthTiming(1500*time.Millisecond, 30*time.Second)
	a := startFlow(t, base, "batocera-0003", ScopeRomsRead)
	if a.ExpiresIn != 30 || a.Interval != 2 {
		t.Errorf("expires_in %d, interval %d; want 30, 2 (rounded up)", a.ExpiresIn, a.Interval)
	}
	wantPoll(t, base, a.DeviceCode, "authorization_pending")
	clk.Advance(1499 * time.Millisecond)
	wantPoll(t, base, a.DeviceCode, "slow_down")
	clk.Advance(1500 * time.Millisecond)
	wantPoll(t, base, a.DeviceCode, "authorization_pending")
	clk.Advance(27*time.Second + time.Millisecond) // 30 s after init
	if got := s.PendingDeviceCodes(); len(got) != 0 {
		t.Errorf("PendingDeviceCodes() after expiry = %v", got)
	}
	wantPoll(t, base, a.DeviceCode, "expired_token")
	if err := s.Approve(a.UserCode, nil); err == nil {
		t.Error("Approve of an expired code succeeded")
	}
	wantPoll(t, base, "not-a-device-code", "expired_token")
}

func TestDeviceFlowApproveScopes(t *testing.T) {
	s, base, _ := writeServer(t)
	a := startFlow(t, base, "batocera-0004", ScopeRomsRead, "no.such.scope")
	for _, scopes := range [][]string{{ScopePlatformsRead}, {"no.such.scope"}, {}} {
		if err := s.Approve(a.UserCode, scopes); err == nil {
			t.Errorf("Approve(%v) succeeded", scopes)
		}
	}
	if err := s.Approve("ZZZZZZZZ", nil); err == nil {
		t.Error("Approve of an unknown code succeeded")
	}
	if err := s.Approve(a.UserCode, nil); err != nil {
		t.Fatal(err)
	}
	var tok tokenAnswer
	sendJSON(t, "POST", base, "/api/auth/device/token", "", map[string]string{"device_code": a.DeviceCode}, 200, &tok)
	if !reflect.DeepEqual(tok.Scopes, []string{ScopeRomsRead}) {
		t.Errorf("scopes %v: want the requested ones the user holds", tok.Scopes)
	}
}

func TestDeviceFlowValidation(t *testing.T) {
	_, base, _ := writeServer(t)
	for _, tc := range []struct {
		body any
		want []string
	}{
		{nil, []string{"body"}},
		{"{", []string{"body.1"}},
		{"[]", []string{"body"}},
		{map[string]any{}, []string{"body.client_device_identifier", "body.name", "body.client", "body.requested_scopes"}},
		{map[string]any{"client_device_identifier": "", "name": "x", "client": strings.Repeat("c", 51),
			"platform": nil, "requested_scopes": []string{}},
			[]string{"body.client_device_identifier", "body.client", "body.requested_scopes"}},
		{map[string]any{"client_device_identifier": "i", "name": "x", "client": "c", "requested_scopes": []any{"a", 1}},
			[]string{"body.requested_scopes.1"}},
	} {
		code, _, body := send(t, "POST", base, "/api/auth/device/init", "", tc.body)
		if code != http.StatusUnprocessableEntity {
			t.Errorf("init %v: %d, want 422: %s", tc.body, code, body)
			continue
		}
		if got := locs(t, body); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("init %v: errors at %v, want %v", tc.body, got, tc.want)
		}
	}
	_, old := newServer(t, Options{Version: Version480})
	getJSON(t, old, "/api/auth/device/init", "", http.StatusNotFound, nil) // no device flow before 5.0
}

func TestPairCodeExchange(t *testing.T) {
	s, base, clk := writeServer(t)
	code := s.NewPairCode([]string{ScopeRomsRead, ScopeRomsUserWrite})
	if len(code) != 8 || strings.Trim(code, pairAlphabet) != "" {
		t.Fatalf("pair code %q", code)
	}
	getJSON(t, base, "/api/client-tokens/pair/"+code+"/status", "", http.StatusOK, nil)
	var tok struct {
		ID        int      `json:"id"`
		Scopes    []string `json:"scopes"`
		RawToken  string   `json:"raw_token"`
		DeviceID  *string  `json:"device_id"`
		ExpiresAt *string  `json:"expires_at"`
		UserID    int      `json:"user_id"`
	}
	typed := strings.ToLower(code[:4]) + "-" + code[4:]
	sendJSON(t, "POST", base, "/api/client-tokens/exchange", "", map[string]string{"code": typed}, http.StatusOK, &tok)
	if !strings.HasPrefix(tok.RawToken, "rmm_") || tok.DeviceID != nil || tok.UserID != ownerID ||
		!reflect.DeepEqual(tok.Scopes, []string{ScopeRomsRead, ScopeRomsUserWrite}) {
		t.Errorf("exchanged %+v", tok)
	}
	getJSON(t, base, "/api/roms/1", tok.RawToken, http.StatusOK, nil)
	getJSON(t, base, "/api/collections", tok.RawToken, http.StatusForbidden, nil)
	wantDetail(t, "POST", base, "/api/client-tokens/exchange", "", map[string]string{"code": code},
		http.StatusNotFound, "Invalid or expired pairing code") // one-shot
	getJSON(t, base, "/api/client-tokens/pair/"+code+"/status", "", http.StatusNotFound, nil)

	late := s.NewPairCode([]string{ScopeRomsRead})
	clk.Advance(PairCodeTTL)
	getJSON(t, base, "/api/client-tokens/pair/"+late+"/status", "", http.StatusNotFound, nil)
	wantDetail(t, "POST", base, "/api/client-tokens/exchange", "", map[string]string{"code": late},
		http.StatusNotFound, "Invalid or expired pairing code")
	sendJSON(t, "POST", base, "/api/client-tokens/exchange", "", map[string]int{"code": 5}, 422, nil)

	s.Revoke() // Options.Token only
	getJSON(t, base, "/api/roms/1", tok.RawToken, http.StatusOK, nil)
	getJSON(t, base, "/api/roms/1", s.Token(), http.StatusUnauthorized, nil)
}
