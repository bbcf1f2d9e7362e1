package pairing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

const toast = "Pair with RomM: open " + testURL + "/pair/device?user_code=ABCD2345 (code ABCD2345)"

func TestPairApprovedAfterTwoPendingPolls(t *testing.T) {
	r := newRig(t, pending(), pending(), approved(""))
	p, err := r.pair(t, context.Background())
	if err != nil {
		t.Fatalf("Pair: %v", err)
	}
	if got, want := r.server.pollTimes(), []time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second}; !reflect.DeepEqual(got, want) {
		t.Errorf("polls at %v, want %v (RomM's 5 s interval)", got, want)
	}
	texts, at := r.screen.shown()
	wantTexts := []string{toast, toast, toast, toast, msgPaired}
	if !reflect.DeepEqual(texts, wantTexts) {
		t.Errorf("toasts %q, want %q", texts, wantTexts)
	}
	if want := []time.Duration{0, 4 * time.Second, 8 * time.Second, 12 * time.Second, 15 * time.Second}; !reflect.DeepEqual(at, want) {
		t.Errorf("toasts at %v, want %v (every 4 s, the last at approval)", at, want)
	}
	if r.server.registered != 1 || r.server.regToken != testToken {
		t.Errorf("RegisterDevice called %d times (token given: %t), want once with the new token", r.server.registered, r.server.regToken == testToken)
	}
	wantInfo := romm.DeviceInfo{Name: "Arcade", Platform: Platform, Client: Client, ClientVersion: "1.2.3", Hostname: "batocera", MAC: "02:00:00:00:00:01"}
	if r.server.regInfo != wantInfo {
		t.Errorf("registered %+v, want %+v", r.server.regInfo, wantInfo)
	}
	wantInit := romm.DeviceInitRequest{Identifier: "abc123def456", Name: "Arcade", Client: "cabinet", Platform: "batocera",
		ClientVersion: "1.2.3", Scopes: Scopes()}
	if !reflect.DeepEqual(r.server.initReq, wantInit) {
		t.Errorf("init %+v, want %+v", r.server.initReq, wantInit)
	}
	want := Paired{Token: testToken, DeviceID: "dev-7", URL: testURL, Scopes: []string{"roms.read", "platforms.read"}, PairedAt: start.Add(15 * time.Second)}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Pair = %v, want %v", p, want)
	}
	stored, err := r.opts.Store.Load()
	if err != nil || !reflect.DeepEqual(stored, want) {
		t.Errorf("stored %v (token kept: %t), %v; want %v", stored, stored.Token == testToken, err, want)
	}
	out := r.out.String()
	for _, s := range []string{testURL + "/pair/device?user_code=ABCD2345", testURL + "/pair/device and enter the code ABCD2345", "10 minutes"} {
		if !strings.Contains(out, s) {
			t.Errorf("terminal lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, testToken) || strings.Contains(out, "dc-secret") {
		t.Errorf("terminal shows a secret:\n%s", out)
	}
}

func TestPairSlowDown(t *testing.T) {
	r := newRig(t, fails(romm.ErrSlowDown), pending(), fails(romm.ErrSlowDown), approved("d1"))
	if _, err := r.pair(t, context.Background()); err != nil {
		t.Fatalf("Pair: %v", err)
	}
	// 5 s, then +5 s per slow_down: 10 s after the first, 15 s after the third.
	want := []time.Duration{5 * time.Second, 15 * time.Second, 25 * time.Second, 40 * time.Second}
	if got := r.server.pollTimes(); !reflect.DeepEqual(got, want) {
		t.Errorf("polls at %v, want %v", got, want)
	}
	if r.server.registered != 0 {
		t.Errorf("RegisterDevice called for a token that has a device id")
	}
	if p, _ := r.opts.Store.Load(); p.DeviceID != "d1" {
		t.Errorf("stored device %q, want d1", p.DeviceID)
	}
}

func TestPairEnds(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name      string
		expiresIn time.Duration
		answers   []answer
		want      error
		final     string
		polls     int
	}{
		{"denied", 0, []answer{pending(), fails(romm.ErrAccessDenied)}, ErrDenied, msgDenied, 2},
		{"expired in RomM", 0, []answer{pending(), fails(romm.ErrExpiredToken)}, ErrExpired, msgExpired, 2},
		{"expired here", 12 * time.Second, []answer{pending()}, ErrExpired, msgExpired, 2},
		{"RomM fails", 0, []answer{fails(romm.ErrBadData)}, romm.ErrBadData, msgFailed, 1},
		{"RomM unreachable for good", 0, []answer{fails(netErr)}, netErr, msgFailed, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.answers...)
			if tt.expiresIn > 0 {
				r.server.code = romm.DeviceCode{DeviceCode: "dc-secret", UserCode: "ABCD2345", ExpiresIn: tt.expiresIn, Interval: 5 * time.Second}
			}
			_, err := r.pair(t, context.Background())
			if !errors.Is(err, tt.want) {
				t.Fatalf("Pair: %v, want %v", err, tt.want)
			}
			texts, _ := r.screen.shown()
			if len(texts) == 0 || texts[len(texts)-1] != tt.final {
				t.Errorf("last toast of %q, want %q", texts, tt.final)
			}
			if n := slices.Index(texts, tt.final); n != len(texts)-1 {
				t.Errorf("toasts %q: the final one shows %d times", texts, len(texts)-n)
			}
			if got := len(r.server.pollTimes()); got != tt.polls {
				t.Errorf("%d polls (at %v), want %d", got, r.server.pollTimes(), tt.polls)
			}
			if _, err := r.opts.Store.Load(); !errors.Is(err, ErrNotPaired) {
				t.Errorf("after %s the store holds a pairing (%v)", tt.name, err)
			}
		})
	}
}

func TestPairSurvivesABriefOutage(t *testing.T) {
	netErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	r := newRig(t, fails(netErr), fails(netErr), approved("d1"))
	if _, err := r.pair(t, context.Background()); err != nil {
		t.Fatalf("Pair after two failed polls: %v", err)
	}
}

func TestPairCancelled(t *testing.T) {
	r := newRig(t, pending())
	ctx, cancel := context.WithCancel(context.Background())
	r.opts.Server = cancelOnPoll{r.server, cancel}
	_, err := r.pair(t, ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Pair: %v, want it cancelled", err)
	}
	if texts, _ := r.screen.shown(); texts[len(texts)-1] != msgCancelled {
		t.Errorf("toasts %q, want the last to be %q", texts, msgCancelled)
	}
}

type cancelOnPoll struct {
	*fakeServer
	cancel context.CancelFunc
}

func (c cancelOnPoll) DeviceToken(ctx context.Context, code string) (romm.DeviceToken, error) {
	tok, err := c.fakeServer.DeviceToken(ctx, code)
	c.cancel()
	return tok, err
}

func TestPairToasts(t *testing.T) {
	r := newRig(t, pending(), pending(), pending(), approved("d1"))
	r.opts.RepeatEvery = 3 * time.Second
	r.screen.err = errors.New("POST /notify: connection refused")
	if _, err := r.pair(t, context.Background()); err != nil {
		t.Fatal(err)
	}
	texts, at := r.screen.shown()
	// Every 3 s up to the approval at 20 s: 0, 3, …, 18, then the final one.
	if len(texts) != 8 || texts[7] != msgPaired || at[6] != 18*time.Second {
		t.Errorf("toasts %q at %v, want 7 every 3 s and %q", texts, at, msgPaired)
	}
	if n := strings.Count(r.out.String(), "did not show the code"); n != 1 {
		t.Errorf("the screen failure is reported %d times, want once:\n%s", n, r.out)
	}
}

func TestPairWithoutScreen(t *testing.T) {
	r := newRig(t, pending(), approved("d1"))
	r.opts.Screen = nil
	if _, err := r.pair(t, context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := r.server.pollTimes(); len(got) != 2 || got[1] != 10*time.Second {
		t.Errorf("polls at %v", got)
	}
}

func TestPairRegistrationFails(t *testing.T) {
	r := newRig(t, approved(""))
	r.server.regErr = errors.New("RomM refused the token")
	p, err := r.pair(t, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.DeviceID != "" || p.Token != testToken {
		t.Errorf("Pair = %v", p)
	}
	if stored, err := r.opts.Store.Load(); err != nil || stored.Token != testToken {
		t.Errorf("the token was not kept: %v", err)
	}
	if !strings.Contains(r.out.String(), "did not register the cabinet") {
		t.Errorf("terminal does not say the registration failed:\n%s", r.out)
	}
}

func TestPairRefusesAConfiguredToken(t *testing.T) {
	for name, run := range map[string]func(*rig) error{
		"device flow": func(r *rig) error { _, err := Pair(context.Background(), r.opts); return err },
		"pair code":   func(r *rig) error { _, err := PairCode(context.Background(), r.opts, "ABCD2345"); return err },
	} {
		t.Run(name, func(t *testing.T) {
			r := newRig(t, approved("d1"))
			r.opts.ConfiguredToken = true
			err := run(r)
			if !errors.Is(err, ErrConfiguredToken) || err.Error() != "remove cabinet.romm.token (and _file) first: a configured token wins over a paired one" {
				t.Errorf("err = %v", err)
			}
			if len(r.server.calls) != 0 {
				t.Errorf("RomM was asked %v", r.server.calls)
			}
		})
	}
}

func TestVersionGate(t *testing.T) {
	tests := []struct {
		version             string
		pairErr, pairCodeOK string // "" means it works
	}{
		{"5.0.0", "", ""},
		{"5.0.0-alpha.1", "", ""},
		{"development", "", ""},
		{"4.9.2", "cabinet romm pair --code XXXXXXXX", ""},
		{"4.8.0", "cabinet romm pair --code XXXXXXXX", ""},
		{"4.7.0", "older than 4.8", "older than 4.8"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			for _, flow := range []struct {
				name string
				want string
				run  func(*rig) error
			}{
				{"device", tt.pairErr, func(r *rig) error { _, err := r.pair(t, context.Background()); return err }},
				{"code", tt.pairCodeOK, func(r *rig) error { _, err := PairCode(context.Background(), r.opts, "ABCD2345"); return err }},
			} {
				r := newRig(t, approved("d1"))
				r.server.version = tt.version
				err := flow.run(r)
				switch {
				case flow.want == "" && err != nil:
					t.Errorf("%s flow on RomM %s: %v", flow.name, tt.version, err)
				case flow.want != "" && (err == nil || !strings.Contains(err.Error(), flow.want)):
					t.Errorf("%s flow on RomM %s: %v, want it to say %q", flow.name, tt.version, err, flow.want)
				case flow.want != "" && slices.Contains(r.server.calls, "init"):
					t.Errorf("%s flow on RomM %s started a sign-in", flow.name, tt.version)
				}
			}
		})
	}
}

func TestPairCode(t *testing.T) {
	r := newRig(t, approved(""))
	p, err := PairCode(context.Background(), r.opts, "abcd-2345")
	if err != nil {
		t.Fatal(err)
	}
	if r.server.exchanged != "abcd-2345" || p.DeviceID != "dev-7" || p.PairedAt != start {
		t.Errorf("exchanged %q, paired %v", r.server.exchanged, p)
	}
	if texts, _ := r.screen.shown(); !reflect.DeepEqual(texts, []string{msgPaired}) {
		t.Errorf("toasts %q", texts)
	}
	if stored, err := r.opts.Store.Load(); err != nil || stored.DeviceID != "dev-7" {
		t.Errorf("stored %v, %v", stored, err)
	}

	r = newRig(t, fails(romm.ErrExpiredToken))
	if _, err := PairCode(context.Background(), r.opts, "ABCD2345"); !errors.Is(err, romm.ErrExpiredToken) {
		t.Errorf("expired code: %v", err)
	}
	if _, err := r.opts.Store.Load(); !errors.Is(err, ErrNotPaired) {
		t.Errorf("a failed exchange stored something: %v", err)
	}
}

func TestVerificationURL(t *testing.T) {
	tests := []struct {
		base, given, link, page string
	}{
		{testURL, testURL + "/pair/device?user_code=ABCD2345", testURL + "/pair/device?user_code=ABCD2345", testURL + "/pair/device"},
		{testURL + "/romm", testURL + "/romm/pair/device?user_code=ABCD2345", testURL + "/romm/pair/device?user_code=ABCD2345", testURL + "/romm/pair/device"},
		{testURL, "/pair/device", testURL + "/pair/device?user_code=ABCD2345", testURL + "/pair/device"},
		{testURL, "", testURL + "/pair/device?user_code=ABCD2345", testURL + "/pair/device"},
	}
	for _, tt := range tests {
		link, page := verificationURL(tt.base, tt.given, "ABCD2345")
		if link != tt.link || page != tt.page {
			t.Errorf("verificationURL(%q, %q) = %q, %q; want %q, %q", tt.base, tt.given, link, page, tt.link, tt.page)
		}
	}
}

func TestToastFitsOneLine(t *testing.T) {
	long := testURL + "/" + strings.Repeat("x", 190)
	for _, tt := range []struct{ link, page, want string }{
		{testURL + "/p?user_code=C", testURL + "/p", "Pair with RomM: open " + testURL + "/p?user_code=C (code C)"},
		{long + "?user_code=C", testURL + "/p", "Pair with RomM: open " + testURL + "/p and enter C"},
		{long + "?user_code=C", long, "Pair with RomM: code C"},
	} {
		if got := toastText(tt.link, tt.page, "C"); got != tt.want {
			t.Errorf("toastText = %q, want %q", got, tt.want)
		}
	}
}

func ExamplePaired_String() {
	p := Paired{Token: testToken, DeviceID: "7", URL: testURL, PairedAt: start}
	fmt.Println(p)
	// Output: paired with http://romm.lan:8080 as device "7" at 2025-06-01T12:00:00Z
}

// TestPairAgainKeepsReportStart: pairing again with the same RomM (a token
// revoked) keeps reporting from the first pairing (or an earlier backfill),
// so the sessions that waited for the new token still go; another RomM, or
// a pairing after unpair, starts afresh.
func TestPairAgainKeepsReportStart(t *testing.T) {
	backfill := start.Add(-48 * time.Hour)
	tests := []struct {
		name string
		old  *Paired
		want time.Time
	}{
		{"first pairing", nil, time.Time{}},
		{"same RomM", &Paired{Token: "rmm_old", URL: testURL + "/", PairedAt: start.Add(-time.Hour)}, start.Add(-time.Hour)},
		{"same RomM, backfilled", &Paired{Token: "rmm_old", URL: testURL, PairedAt: start.Add(-time.Hour), ReportSince: backfill}, backfill},
		{"another RomM", &Paired{Token: "rmm_old", URL: "http://other:8080", PairedAt: start.Add(-time.Hour)}, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, approved(""))
			if tt.old != nil {
				if err := r.opts.Store.Save(*tt.old); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := PairCode(context.Background(), r.opts, "ABCD2345"); err != nil {
				t.Fatal(err)
			}
			got, err := r.opts.Store.Load()
			if err != nil || !got.ReportSince.Equal(tt.want) || !got.PairedAt.Equal(start) {
				t.Errorf("stored %v (reporting since %v), %v; want since %v", got, got.ReportSince, err, tt.want)
			}
		})
	}
}
