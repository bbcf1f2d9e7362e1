package romm

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

var cabinetScopes = []string{"roms.read", "platforms.read", "collections.read", "roms.user.write", "devices.write"}

func cabinetInit() DeviceInitRequest {
	return DeviceInitRequest{Identifier: "cabinet-install-1", Name: "Living room cabinet", Client: "batocera-cabinet",
		Platform: "Batocera", ClientVersion: "1.0.0", Scopes: cabinetScopes}
}

// writeTestRoms returns ids of two ROMs of the fake's library.
func writeTestROMs(t *testing.T, fake *fakeromm.Server) (int, int) {
	t.Helper()
	roms := fake.ROMs()
	if len(roms) < 2 {
		t.Fatal("the fake's library has fewer than 2 ROMs")
	}
	return roms[0].ID, roms[1].ID
}

func TestDeviceFlowAgainstFakeRomM(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC))
	fake, err := fakeromm.New(fakeromm.Options{Version: fakeromm.Version531})
	if err != nil {
		t.Fatal(err)
	}
	fake.SetClock(clk.Now)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	c := newClient(t, srv.URL, func(c *Config) { c.Token = "" })

	d, err := c.DeviceInit(ctx, cabinetInit())
	if err != nil {
		t.Fatal(err)
	}
	if d.ExpiresIn != 10*time.Minute || d.Interval != 5*time.Second || d.VerificationURL != srv.URL+"/pair/device?user_code="+d.UserCode {
		t.Errorf("DeviceCode %v", d)
	}
	if pend := fake.PendingDeviceCodes(); len(pend) != 1 || pend[0] != d.UserCode {
		t.Errorf("pending %v, want [%s]", pend, d.UserCode)
	}
	steps := []struct {
		advance time.Duration
		want    error
	}{{0, ErrAuthorizationPending}, {time.Second, ErrSlowDown}, {6 * time.Second, ErrAuthorizationPending}}
	for i, s := range steps {
		clk.Advance(s.advance)
		if _, err := c.DeviceToken(ctx, d.DeviceCode); !errors.Is(err, s.want) {
			t.Fatalf("poll %d: %v, want %v", i, err, s.want)
		}
	}
	if err := fake.Approve(d.UserCode, []string{"roms.read", "roms.user.write", "devices.write"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second)
	tok, err := c.DeviceToken(ctx, d.DeviceCode)
	if err != nil {
		t.Fatal(err)
	}
	if tok.DeviceID == "" || !tok.ExpiresAt.IsZero() || len(tok.Scopes) != 3 {
		t.Errorf("token %v", tok)
	}
	if _, err := c.DeviceToken(ctx, d.DeviceCode); !errors.Is(err, ErrExpiredToken) {
		t.Errorf("poll after the token was handed out: %v, want expired", err)
	}

	// Denied, then gone.
	d2, err := c.DeviceInit(ctx, cabinetInit())
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Deny(d2.UserCode); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeviceToken(ctx, d2.DeviceCode); !errors.Is(err, ErrAccessDenied) {
		t.Errorf("denied: %v", err)
	}
	clk.Advance(61 * time.Second)
	if _, err := c.DeviceToken(ctx, d2.DeviceCode); !errors.Is(err, ErrExpiredToken) {
		t.Errorf("denied, a minute later: %v", err)
	}
	// Never approved: expires.
	d3, err := c.DeviceInit(ctx, cabinetInit())
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(d3.ExpiresIn)
	if _, err := c.DeviceToken(ctx, d3.DeviceCode); !errors.Is(err, ErrExpiredToken) {
		t.Errorf("after ExpiresIn: %v", err)
	}

	// The token works for the writes, with the device RomM bound it to.
	p, err := c.WithToken(tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	rom1, rom2 := writeTestROMs(t, fake)
	if err := p.Heartbeat(ctx, rom1, tok.DeviceID); err != nil {
		t.Fatalf("Heartbeat: %v", err)
	}
	if hb := fake.Heartbeats(); len(hb) != 1 || hb[0].ROMID != rom1 || hb[0].DeviceID != tok.DeviceID {
		t.Errorf("heartbeats %+v", hb)
	}
	if err := p.Heartbeat(ctx, rom1, "no-such-device"); !errors.Is(err, ErrDeviceUnknown) {
		t.Errorf("unknown device: %v", err)
	}
	if err := p.Heartbeat(ctx, 1<<30, tok.DeviceID); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrDeviceUnknown) {
		t.Errorf("unknown ROM: %v", err)
	}
	if err := p.ClearHeartbeat(ctx, tok.DeviceID); err != nil {
		t.Fatalf("ClearHeartbeat: %v", err)
	}
	if a := fake.Active(); len(a) != 0 {
		t.Errorf("still active: %+v", a)
	}

	now := clk.Now()
	sessions := []PlaySession{
		{ROMID: rom1, Start: now.Add(-2*time.Hour + 300*time.Millisecond), End: now.Add(-time.Hour), Duration: time.Hour},
		{ROMID: rom2, Start: now.Add(-50 * time.Minute), End: now.Add(-50 * time.Minute)}, // refused here
		{ROMID: 0, Start: now.Add(-40 * time.Minute), End: now.Add(-30 * time.Minute), Duration: 10 * time.Minute},
		{ROMID: rom2, Start: now.Add(-20 * time.Minute), End: now.Add(time.Hour), Duration: time.Minute}, // RomM: too far in the future
	}
	res, err := p.PostPlaySessions(ctx, "", sessions)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus := []string{SessionCreated, SessionError, SessionCreated, SessionError}
	for i, r := range res {
		if r.Index != i || r.Status != wantStatus[i] || (r.Status == SessionCreated) != (r.ID > 0) {
			t.Errorf("result %d = %+v, want %s", i, r, wantStatus[i])
		}
	}
	stored := fake.PlaySessions()
	if len(stored) != 2 || stored[0].DeviceID != tok.DeviceID || !stored[0].StartTime.Equal(now.Add(-2*time.Hour)) || stored[1].ROMID != 0 {
		t.Errorf("stored %+v", stored)
	}
	res, err = p.PostPlaySessions(ctx, tok.DeviceID, sessions[:1])
	if err != nil || len(res) != 1 || res[0].Status != SessionDuplicate {
		t.Errorf("resend: %+v, %v", res, err)
	}
}

func TestPairCodeAndDevicesAgainstFakeRomM(t *testing.T) {
	ctx := context.Background()
	fake, c := startFakeRomM(t, fakeromm.Options{Version: fakeromm.Version480, Scopes: fakeromm.WriteScopes()})

	_, err := c.DeviceInit(ctx, cabinetInit())
	mustErr(t, err, ErrUnsupported)

	code := fake.NewPairCode(cabinetScopes)
	tok, err := c.ExchangePairCode(ctx, code[:4]+"-"+code[4:])
	if err != nil {
		t.Fatal(err)
	}
	if tok.DeviceID != "" || len(tok.Scopes) != len(cabinetScopes) {
		t.Errorf("paired token %v", tok)
	}
	if _, err := c.ExchangePairCode(ctx, code); !errors.Is(err, ErrExpiredToken) {
		t.Errorf("second exchange: %v", err)
	}
	p, err := c.WithToken(tok.Token)
	if err != nil {
		t.Fatal(err)
	}
	info := DeviceInfo{Name: "Cabinet", Platform: "Batocera", Client: "batocera-cabinet", Hostname: "batocera", MAC: "B8:27:EB:00:00:01"}
	id, err := p.RegisterDevice(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	again, err := p.RegisterDevice(ctx, info)
	if err != nil || again != id {
		t.Errorf("second registration: %q, %v; want %q", again, err, id)
	}
	if devs := fake.Devices(); len(devs) != 1 || devs[0].MACAddress != "b8:27:eb:00:00:01" {
		t.Errorf("devices %+v", devs)
	}
	// The configured token holds the write scopes too; one without devices.write is refused.
	if _, err := c.RegisterDevice(ctx, info); err != nil {
		t.Errorf("configured token: %v", err)
	}
	_, ro := startFakeRomM(t, fakeromm.Options{Version: fakeromm.Version531})
	_, err = ro.RegisterDevice(ctx, info)
	var se *ScopeError
	if !errors.As(err, &se) || se.Scope != "devices.write" {
		t.Errorf("read-only token: %v", err)
	}

	rom := fake.ROMs()[0]
	got, err := c.ROMByHash(ctx, "", "", rom.Hashes.SHA1)
	if rom.Hashes.SHA1 != "" && (err != nil || got.ID != rom.ID) {
		t.Errorf("ROMByHash(%s) = %d, %v; want %d", rom.Hashes.SHA1, got.ID, err, rom.ID)
	}
	if _, err := c.ROMByHash(ctx, "00000000", "", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown hash: %v", err)
	}

	fake.FailWrites(500)
	_, err = p.RegisterDevice(ctx, info)
	if err == nil || errors.Is(err, ErrInvalid) || errors.Is(err, ErrNotFound) {
		t.Errorf("failing RomM: %v", err)
	}
}
