package pairing

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

const (
	testURL   = "http://romm.lan:8080"
	testToken = "rmm_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

var start = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fakeServer is a RomM whose device-token answers follow a script; it records the (fake) time of
// every poll.
type fakeServer struct {
	clk     *clock.Fake
	version string
	code    romm.DeviceCode
	// answers are DeviceToken's outcomes in order; the last repeats.
	answers []answer
	regID   string
	regErr  error

	mu         sync.Mutex
	calls      []string
	initReq    romm.DeviceInitRequest
	polls      []time.Duration // since start
	regToken   string
	regInfo    romm.DeviceInfo
	exchanged  string
	registered int
}

type answer struct {
	tok romm.DeviceToken
	err error
}

func pending() answer        { return answer{err: romm.ErrAuthorizationPending} }
func fails(err error) answer { return answer{err: err} }
func approved(deviceID string) answer {
	return answer{tok: romm.DeviceToken{Token: testToken, DeviceID: deviceID, Scopes: []string{"roms.read", "platforms.read"}}}
}

func (f *fakeServer) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeServer) Version(ctx context.Context) (romm.Version, error) {
	f.record("version")
	v := f.version
	if v == "" {
		v = "5.3.1"
	}
	return romm.ParseVersion(v)
}

func (f *fakeServer) DeviceInit(ctx context.Context, r romm.DeviceInitRequest) (romm.DeviceCode, error) {
	f.record("init")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.initReq = r
	dc := f.code
	if dc.DeviceCode == "" {
		dc = romm.DeviceCode{DeviceCode: "dc-secret", UserCode: "ABCD2345",
			VerificationURL: testURL + "/pair/device?user_code=ABCD2345", ExpiresIn: 10 * time.Minute, Interval: 5 * time.Second}
	}
	return dc, nil
}

func (f *fakeServer) DeviceToken(ctx context.Context, deviceCode string) (romm.DeviceToken, error) {
	f.record("poll")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls = append(f.polls, f.clk.Now().Sub(start))
	if deviceCode != "dc-secret" && deviceCode != f.code.DeviceCode {
		return romm.DeviceToken{}, errors.New("wrong device code")
	}
	a := f.answers[min(len(f.polls), len(f.answers))-1]
	return a.tok, a.err
}

func (f *fakeServer) ExchangePairCode(ctx context.Context, code string) (romm.DeviceToken, error) {
	f.record("exchange")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.exchanged = code
	a := f.answers[0]
	return a.tok, a.err
}

func (f *fakeServer) RegisterDevice(ctx context.Context, token string, d romm.DeviceInfo) (string, error) {
	f.record("register")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered++
	f.regToken, f.regInfo = token, d
	return f.regID, f.regErr
}

func (f *fakeServer) pollTimes() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.polls...)
}

// fakeScreen records what was shown and when.
type fakeScreen struct {
	clk *clock.Fake
	err error

	mu    sync.Mutex
	texts []string
	at    []time.Duration
}

func (s *fakeScreen) Show(ctx context.Context, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
	s.at = append(s.at, s.clk.Now().Sub(start))
	return s.err
}

func (s *fakeScreen) shown() ([]string, []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...), append([]time.Duration(nil), s.at...)
}

// syncBuffer is a bytes.Buffer safe to read while Pair writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type rig struct {
	clk    *clock.Fake
	server *fakeServer
	screen *fakeScreen
	out    *syncBuffer
	opts   Options
}

func newRig(t *testing.T, answers ...answer) *rig {
	t.Helper()
	clk := clock.NewFake(start)
	r := &rig{clk: clk, server: &fakeServer{clk: clk, answers: answers, regID: "dev-7"},
		screen: &fakeScreen{clk: clk}, out: &syncBuffer{}}
	r.opts = Options{Server: r.server, URL: testURL, Store: Store{Dir: t.TempDir()}, Screen: r.screen, Out: r.out,
		Clock: clk, Identifier: "abc123def456", Device: romm.DeviceInfo{Name: "Arcade", ClientVersion: "1.2.3",
			Hostname: "batocera", MAC: "02:00:00:00:00:01"}}
	return r
}

// pair runs Pair on the fake clock, moving time to the next deadline whenever Pair waits, until it
// returns (bounded by a real deadline).
func (r *rig) pair(t *testing.T, ctx context.Context) (Paired, error) {
	t.Helper()
	type result struct {
		p   Paired
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := Pair(ctx, r.opts)
		done <- result{p, err}
	}()
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		select {
		case res := <-done:
			return res.p, res.err
		default:
		}
		blocked := make(chan error, 1)
		bctx, bcancel := context.WithCancel(wait)
		go func() { blocked <- r.clk.BlockUntil(bctx, 1) }()
		select {
		case res := <-done:
			bcancel()
			return res.p, res.err
		case err := <-blocked:
			bcancel()
			if err != nil {
				t.Fatalf("Pair neither waited nor returned within 10 s (polls at %v)", r.server.pollTimes())
			}
			r.clk.AdvanceToNext()
		}
	}
}
