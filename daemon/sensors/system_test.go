package sensors

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fakeHost is the daemon as a sensor sees it: fixed rules, a snapshot the test sets, and every
// message the sensor stores, in order.
type fakeHost struct {
	mu       sync.Mutex
	rules    journal.Rules
	snap     haentities.Snapshot
	msgs     []sent
	changed  chan struct{} // closed and replaced at every message
	appliedC chan struct{}
}

type sent struct {
	refresh bool
	msg     haentities.Message
}

func newHost(has haentities.Sources) *fakeHost {
	return &fakeHost{rules: journal.Rules{Settings: haentities.Settings{ID: "test", Daemon: true, Has: has}, Publishing: true},
		changed: make(chan struct{}), appliedC: make(chan struct{})}
}

func (h *fakeHost) Rules() journal.Rules {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rules
}

func (h *fakeHost) Snapshot() haentities.Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.snap
}

func (h *fakeHost) Applied() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.appliedC
}

func (h *fakeHost) setSnapshot(s haentities.Snapshot) {
	h.mu.Lock()
	h.snap = s
	close(h.appliedC)
	h.appliedC = make(chan struct{})
	h.mu.Unlock()
}

func (h *fakeHost) store(refresh bool, msgs []haentities.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range msgs {
		h.msgs = append(h.msgs, sent{refresh, m})
	}
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *fakeHost) Refresh(msgs ...haentities.Message) { h.store(true, msgs) }
func (h *fakeHost) Publish(msgs ...haentities.Message) { h.store(false, msgs) }

// payloads are the payloads stored for topic, in order.
func (h *fakeHost) payloads(topic string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.msgs {
		if s.msg.Topic == topic {
			out = append(out, string(s.msg.Payload))
		}
	}
	return out
}

// wait waits until cond holds of the stored messages, each time one is stored.
func (h *fakeHost) wait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	cabinettest.Await(t, what, func() <-chan struct{} {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.changed
	}, cond)
}

// last reports whether the last payload stored for topic is want.
func (h *fakeHost) last(topic, want string) func() bool {
	return func() bool {
		p := h.payloads(topic)
		return len(p) > 0 && p[len(p)-1] == want
	}
}

type fakeAudio struct {
	mu    sync.Mutex
	st    sysaudio.State
	reads int
}

func (a *fakeAudio) Get(context.Context) (sysaudio.State, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	return a.st, nil
}

func (a *fakeAudio) SetLevel(_ context.Context, l int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st.Level = l
	return nil
}

func (a *fakeAudio) SetMute(_ context.Context, m bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st.Muted = m
	return nil
}

func (a *fakeAudio) set(l int, m bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st = sysaudio.State{Level: l, Muted: m}
}

type fakePads struct {
	mu   sync.Mutex
	pads []controllers.Pad
}

func (p *fakePads) Scan() ([]controllers.Pad, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.pads), nil
}

func (p *fakePads) set(pads ...controllers.Pad) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pads = pads
}

type fakeUpdate struct {
	mu     sync.Mutex
	latest string
	err    error
	checks int
}

func (u *fakeUpdate) Check(context.Context) (osupdate.Result, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.checks++
	return osupdate.Result{Latest: u.latest}, u.err
}

// blockUntil waits until n timers are armed on c (a loop waits on it again).
func blockUntil(t *testing.T, c *clock.Fake, n int) {
	t.Helper()
	if err := c.BlockUntil(cabinettest.Context(t), n); err != nil {
		t.Fatalf("no loop waited on the clock again within %v", cabinettest.Deadline)
	}
}

// run starts loop until the test ends, and waits for it to reach its first wait on the clock.
func run(t *testing.T, c *clock.Fake, loop func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); loop(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if err := c.BlockUntil(cabinettest.Context(t), 1); err != nil {
		t.Fatalf("the loop never waited on the clock: %v", err)
	}
}

// TestVolume: the volume and mute are published at start and when they change on the cabinet
// (read every VolumePoll), not read while a game starts, and Home Assistant's slider and switch
// act through batocera-audio, a refused value read back as it is.
func TestVolume(t *testing.T) {
	h, c, audio := newHost(haentities.Sources{Audio: true}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)), &fakeAudio{}
	audio.set(60, false)
	s := &System{Host: h, Clock: c, Log: cabinettest.Logger(t), Audio: audio}
	set := h.Rules().Settings
	vol, mute := set.StateTopic(haentities.Volume), set.StateTopic(haentities.Mute)
	run(t, c, s.RunVolume)
	h.wait(t, "volume 60 at start", h.last(vol, "60"))
	audio.set(90, true)
	c.Advance(VolumePoll)
	h.wait(t, "volume 90 and muted", func() bool { return h.last(vol, "90")() && h.last(mute, "ON")() })
	if n := len(h.payloads(vol)); n != 2 {
		t.Errorf("%d volume states, want 2 (one per change)", n)
	}

	// A game starting: batocera-audio is left alone until LaunchQuiet has passed.
	h.setSnapshot(haentities.Snapshot{Playing: true, Current: haentities.Session{Started: c.Now()}})
	audio.mu.Lock()
	before := audio.reads
	audio.mu.Unlock()
	audio.set(30, false)
	c.Advance(VolumePoll) // 10 s into the launch
	audio.mu.Lock()
	during := audio.reads
	audio.mu.Unlock()
	if during != before {
		t.Errorf("batocera-audio read %d times while the game started", during-before)
	}
	c.Advance(LaunchQuiet) // 30 s into it: the tick reads again
	h.wait(t, "volume 30 once the launch is over", h.last(vol, "30"))

	var logs strings.Builder
	log := zerolog.New(&logs)
	s.SetVolume(context.Background(), log, haentities.Volume, []byte("45.4"))
	h.wait(t, "HA's 45.4 as 45", h.last(vol, "45"))
	s.SetVolume(context.Background(), log, haentities.Volume, []byte("250"))
	s.SetVolume(context.Background(), log, haentities.Mute, []byte("on"))
	if !strings.Contains(logs.String(), "from 0 to 100") || !strings.Contains(logs.String(), `must be \"ON\" or \"OFF\"`) {
		t.Errorf("refusals not logged with their reason:\n%s", logs.String())
	}
	if st, _ := audio.Get(context.Background()); st.Level != 45 || st.Muted {
		t.Errorf("batocera-audio %+v after refused commands, want 45 unmuted", st)
	}
}

// TestPads: the pads at start are states without events; a pad connecting or going away is an
// event (never retained) beside the new states.
func TestPads(t *testing.T) {
	h, c, pads := newHost(haentities.Sources{Controllers: true}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)), &fakePads{}
	eighty := 80
	wireless := controllers.Pad{Key: "a0:ab:51:00:00:01", Name: "Wireless Controller", Battery: &eighty}
	pro := controllers.Pad{Key: "a0:ab:51:00:00:02", Name: "Pro Controller"}
	pads.set(wireless)
	s := &System{Host: h, Clock: c, Log: cabinettest.Logger(t), Pads: pads}
	set := h.Rules().Settings
	count, event := set.StateTopic(haentities.Controllers), set.StateTopic(haentities.Controller)
	run(t, c, s.RunPads)
	h.wait(t, "one pad at start", h.last(count, "1"))
	pads.set(wireless, pro)
	c.Advance(PadsPoll)
	h.wait(t, "two pads", h.last(count, "2"))
	pads.set(pro)
	c.Advance(PadsPoll)
	h.wait(t, "one pad again", h.last(count, "1"))
	want := []string{`{"event_type":"connected","name":"Pro Controller"}`, `{"event_type":"disconnected","name":"Wireless Controller"}`}
	h.wait(t, "both events", func() bool { return len(h.payloads(event)) == len(want) })
	if got := h.payloads(event); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	h.mu.Lock()
	for _, m := range h.msgs {
		if m.msg.Topic == event && (m.refresh || m.msg.Kind != haentities.KindTimeSensitive) {
			t.Errorf("the event %s was stored as a state", m.msg.Payload)
		}
	}
	h.mu.Unlock()
}

// TestUpdate: the installed version at once; Batocera's check first UpdateFirst after start,
// put off while a game runs, tried again an hour after a failure, then every UpdateEvery.
func TestUpdate(t *testing.T) {
	h, c, up := newHost(haentities.Sources{Update: true}), clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)), &fakeUpdate{latest: "43"}
	h.rules.Settings.BatoceraVersion = "42"
	s := &System{Host: h, Clock: c, Log: cabinettest.Logger(t), Update: up}
	topic := h.Rules().Settings.StateTopic(haentities.OSUpdate)
	run(t, c, s.RunUpdate)
	h.wait(t, "the installed version", h.last(topic, `{"installed_version":"42","title":"Batocera"}`))
	h.setSnapshot(haentities.Snapshot{Playing: true})
	c.Advance(UpdateFirst)
	blockUntil(t, c, 1)
	up.mu.Lock()
	if up.checks != 0 {
		t.Errorf("checked %d times during a game", up.checks)
	}
	up.err = errors.New("no network")
	up.mu.Unlock()
	h.setSnapshot(haentities.Snapshot{})
	c.Advance(LaunchQuiet) // the failed check
	blockUntil(t, c, 1)
	up.mu.Lock()
	up.err = nil
	up.mu.Unlock()
	c.Advance(UpdateRetry)
	h.wait(t, "the latest version", h.last(topic, `{"installed_version":"42","latest_version":"43","title":"Batocera"}`))
	up.mu.Lock()
	if up.checks != 2 {
		t.Errorf("%d checks, want 2 (the failure, then its retry)", up.checks)
	}
	up.mu.Unlock()
}
