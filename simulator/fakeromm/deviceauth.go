package fakeromm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// The device authorization flow (endpoints/device_auth.py,
// utils/device_auth.py; RomM 5.0+): a device starts a request, polls with
// its device_code while the user approves the user_code in the web UI,
// and the poll after approval hands out a client token bound to a device.
// The web UI's side is the test's: PendingDeviceCodes, Approve, Deny.
// Times are the server's clock (SetClock); RomM's per-IP rate limits on
// init (10 a minute) and token (60 a minute) are not modelled.

// RomM's timing (PENDING_TTL_SECONDS, POLL_DEFAULT_INTERVAL_SECONDS,
// DENIED_TTL_SECONDS).
const (
	DefaultDeviceCodeTTL = 600 * time.Second
	DefaultPollInterval  = 5 * time.Second
	deniedTTL            = 60 * time.Second
)

// Flow states (FlowStatus).
const (
	flowPending  = "pending"
	flowApproved = "approved"
	flowDenied   = "denied"
)

type deviceFlow struct {
	seq      int
	userCode string
	// What the device sent to /init.
	identifier, name, client, platform, clientVersion string
	requested                                         []string

	status   string
	expires  time.Time
	interval time.Duration
	// The previous pending poll, remembered until pollKeyExpires.
	lastPoll, pollKeyExpires time.Time
	// Once approved: what the next poll hands out.
	raw, deviceID string
	scopes        []string
}

// SetDeviceAuthTiming sets the poll interval and the lifetime of device
// codes started from now on; 0 keeps RomM's (DefaultPollInterval,
// DefaultDeviceCodeTTL). The answer's interval and expires_in are whole
// seconds, rounded up; the slow_down check and expiry use the exact
// durations, so a test can poll every few milliseconds with interval 1ms.
func (s *Server) SetDeviceAuthTiming(interval, expiresIn time.Duration) {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	s.state.interval, s.state.expiresIn = interval, expiresIn
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// userScopes is what the fake's user (an admin) holds.
func userScopes() []string {
	return append(WriteScopes(), "roms.write", "platforms.write", "firmware.write", "users.read", "users.write",
		"tasks.run", "logs.read")
}

func (s *Server) deviceAuthInit(c *call) {
	var f deviceFlow
	if b, ok := readBody(c); ok {
		f.identifier, _ = b.str("client_device_identifier", true, 1, 255)
		f.name, _ = b.str("name", true, 1, 255)
		f.client, _ = b.str("client", true, 1, 50)
		f.platform, f.clientVersion = deref(b.optStr("platform", 50)), deref(b.optStr("client_version", 50))
		f.requested, _ = b.strs("requested_scopes", true, 1, 22)
	}
	if !c.ready("") {
		return
	}
	var dc [32]byte
	rand.Read(dc[:])
	deviceCode := hex.EncodeToString(dc[:])
	s.state.mu.Lock()
	if s.state.flows == nil {
		s.state.flows, s.state.userCodes = map[string]*deviceFlow{}, map[string]string{}
	}
	f.userCode = newCode(8)
	for s.state.userCodes[f.userCode] != "" {
		f.userCode = newCode(8)
	}
	f.interval, f.status = s.state.interval, flowPending
	if f.interval <= 0 {
		f.interval = DefaultPollInterval
	}
	ttl := s.state.expiresIn
	if ttl <= 0 {
		ttl = DefaultDeviceCodeTTL
	}
	s.state.flowSeq++
	f.seq, f.expires = s.state.flowSeq, s.now().Add(ttl)
	s.state.flows[deviceCode], s.state.userCodes[f.userCode] = &f, deviceCode
	s.state.mu.Unlock()
	writeJSON(c.w, http.StatusCreated, map[string]any{
		"device_code": deviceCode, "user_code": f.userCode, "verification_path": "/pair/device",
		"verification_path_complete": "/pair/device?" + url.Values{"user_code": {f.userCode}}.Encode(),
		"expires_in":                 ceilSeconds(ttl), "interval": ceilSeconds(f.interval),
	})
}

// flow is the live request for deviceCode, dropping an expired one; the
// caller holds s.state.mu.
func (s *Server) flow(deviceCode string) *deviceFlow {
	f := s.state.flows[deviceCode]
	if f == nil {
		return nil
	}
	if !s.now().Before(f.expires) {
		delete(s.state.flows, deviceCode)
		if s.state.userCodes[f.userCode] == deviceCode {
			delete(s.state.userCodes, f.userCode)
		}
		return nil
	}
	return f
}

// deviceAuthToken is the poll. Every refusal is 400 {"detail": "<RFC 8628
// error code>"}: expired_token, slow_down, authorization_pending,
// access_denied. The approved answer is handed out once.
func (s *Server) deviceAuthToken(c *call) {
	var code string
	if b, ok := readBody(c); ok {
		code, _ = b.str("device_code", true, 1, 128)
	}
	if !c.ready("") {
		return
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	f := s.flow(code)
	if f == nil {
		writeDetail(c.w, http.StatusBadRequest, "expired_token")
		return
	}
	switch f.status {
	case flowPending:
		// polled_too_fast: every pending poll is remembered (for
		// max(4 intervals, 30 s)), a slow_down one too.
		now := s.now()
		prev := f.lastPoll
		if !now.Before(f.pollKeyExpires) {
			prev = time.Time{}
		}
		f.lastPoll, f.pollKeyExpires = now, now.Add(max(4*f.interval, 30*time.Second))
		if !prev.IsZero() && now.Sub(prev) < f.interval {
			writeDetail(c.w, http.StatusBadRequest, "slow_down")
			return
		}
		writeDetail(c.w, http.StatusBadRequest, "authorization_pending")
	case flowDenied:
		writeDetail(c.w, http.StatusBadRequest, "access_denied")
	case flowApproved:
		delete(s.state.flows, code)
		writeJSON(c.w, http.StatusOK, map[string]any{"access_token": f.raw, "device_id": f.deviceID,
			"scopes": f.scopes, "expires_at": nil})
	}
}

// PendingDeviceCodes returns the user codes waiting for approval, oldest
// first, as the web UI's /pair/device would find them.
func (s *Server) PendingDeviceCodes() []string {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	var live []*deviceFlow
	for _, dc := range s.state.userCodes {
		if f := s.flow(dc); f != nil && f.status == flowPending {
			live = append(live, f)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].seq < live[j].seq })
	out := make([]string, 0, len(live))
	for _, f := range live {
		out = append(out, f.userCode)
	}
	return out
}

// pending finds the waiting request of a user code as typed (dashes and
// spaces dropped, upper-cased); the caller holds s.state.mu.
func (s *Server) pending(userCode string) (*deviceFlow, error) {
	norm := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(userCode))
	dc, ok := s.state.userCodes[norm]
	if !ok {
		return nil, errUnknownCode(userCode)
	}
	f := s.flow(dc)
	if f == nil {
		return nil, errUnknownCode(userCode)
	}
	if f.status != flowPending {
		return nil, fmt.Errorf("fakeromm: user code %q is already %s (RomM: 410)", userCode, f.status)
	}
	return f, nil
}

// Approve approves a waiting request, as its user does at /pair/device:
// the device (found by its client_device_identifier, else new) and a
// token bound to it, holding scopes, are created now, and the device's
// next poll receives the token. nil scopes approve all requested scopes
// the user holds; scopes must be a non-empty subset of them (RomM: 403
// "Approved scopes exceed what's allowed for this user").
func (s *Server) Approve(userCode string, scopes []string) error {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	f, err := s.pending(userCode)
	if err != nil {
		return err
	}
	held := map[string]bool{}
	for _, sc := range userScopes() {
		held[sc] = true
	}
	allowed := map[string]bool{}
	var all []string
	for _, sc := range f.requested {
		if held[sc] && !allowed[sc] {
			allowed[sc] = true
			all = append(all, sc)
		}
	}
	if scopes == nil {
		scopes = all
	}
	set := map[string]bool{}
	var approved []string
	for _, sc := range scopes {
		if !allowed[sc] {
			return fmt.Errorf("fakeromm: scope %q was not requested or is not held (RomM: 403 Approved scopes exceed what's allowed for this user)", sc)
		}
		if !set[sc] {
			set[sc] = true
			approved = append(approved, sc)
		}
	}
	if len(approved) == 0 {
		return fmt.Errorf("fakeromm: no scopes to approve (RomM: 403 Approved scopes exceed what's allowed for this user)")
	}
	sort.Strings(approved)

	now := s.now()
	var dev *Device
	for _, d := range s.state.devices {
		if d.UserID == ownerID && d.ClientDeviceIdentifier == f.identifier {
			dev = d
			break
		}
	}
	if dev != nil {
		dev.Name, dev.LastSeen, dev.UpdatedAt = f.name, now, now
		if f.clientVersion != "" {
			dev.ClientVersion = f.clientVersion
		}
	} else {
		dev = s.addDevice(Device{Name: f.name, Client: f.client, Platform: f.platform, ClientVersion: f.clientVersion,
			ClientDeviceIdentifier: f.identifier, SyncMode: "api", SyncEnabled: true, LastSeen: now})
	}
	f.raw = s.issue(s.newToken(f.name, approved, dev.ID))
	f.status, f.deviceID, f.scopes = flowApproved, dev.ID, approved
	delete(s.state.userCodes, f.userCode)
	return nil
}

// Deny refuses a waiting request: its polls answer access_denied for 60 s,
// expired_token after.
func (s *Server) Deny(userCode string) error {
	s.init()
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	f, err := s.pending(userCode)
	if err != nil {
		return err
	}
	f.status, f.expires = flowDenied, s.now().Add(deniedTTL)
	delete(s.state.userCodes, f.userCode)
	return nil
}
