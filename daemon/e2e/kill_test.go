package e2e

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestKill9WhileEventsFlow: the daemon is SIGKILLed at random moments while
// hooks keep firing game sessions (in its fsynced commits, before or after
// an ack, while announcing or draining, while hooks fall back to the store
// or the spool), 100 times. After every kill the broker marks the cabinet
// offline (the last will, retained), the restarted daemon comes back online
// and no session it had logged is gone; at the end every session whose hooks
// returned is in the history exactly once and reached the broker. (5 kills
// with -short.)
func TestKill9WhileEventsFlow(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		kills := 100
		if testing.Short() {
			kills = 5 // the inner loop's smoke run
		}
		cycleWhileEventsFlow(t, kind, kills, (*daemonProc).kill9, flowOptions{})
	})
}

// TestRestartWhileEventsFlow: the same with clean stops (SIGTERM, as
// `batocera-services restart cabinet` does), 20 times (5 with -short): hooks that arrive
// while the daemon stops or starts lose nothing, and a restart in the
// middle of a game neither ends nor splits its session.
func TestRestartWhileEventsFlow(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		restarts := 20
		if testing.Short() {
			restarts = 5 // the inner loop's smoke run
		}
		cycleWhileEventsFlow(t, kind, restarts, func(d *daemonProc) {
			if code := d.term(); code != 0 {
				d.t.Errorf("exit code %d after SIGTERM, want 0", code)
			}
		}, flowOptions{})
	})
}

// cycleWhileEventsFlow stops the daemon n times with stop at random
// moments while sessions flow, restarting it each time, and checks that
// nothing logged is lost, the broker says offline then online each time,
// and everything is drained at the end. Between the stop and the restart a
// hook that records a game on its own rightly says online again.
func cycleWhileEventsFlow(t *testing.T, kind cabinettest.Kind, n int, stop func(*daemonProc), opts flowOptions) {
	r := newRig(t, startBroker(t, kind))
	d := r.startOnline()
	flow := startFlow(r, opts)

	for i := 0; i < n; i++ {
		before, err := r.daemonStatus()
		if err != nil {
			t.Fatalf("stop %d: status before: %v", i, err)
		}
		// A random moment: after the next 0–2 hook spawns plus up to
		// 6 ms (inside a hook's exchange with the daemon), or up to
		// 150 ms into the daemon's life (announce, drain, flush).
		if rand.IntN(2) == 0 {
			flow.waitSpawns(rand.IntN(3))
			time.Sleep(rand.N(6 * time.Millisecond)) // the random moment itself, not a synchronisation
		} else {
			time.Sleep(rand.N(150 * time.Millisecond)) // likewise
		}
		from := r.obs.Mark()
		stop(d)
		// The last will (or the clean stop) says offline. A hook that runs
		// on its own right after may say online again, rightly: the cabinet
		// is up, only the daemon is gone.
		r.obs.AwaitMsg(from, r.status(), "offline")

		from = r.obs.Mark()
		d = r.startOnline()
		r.obs.AwaitMsg(from, r.status(), "online")
		after, err := r.daemonStatus()
		if err != nil {
			t.Fatalf("stop %d: status after the restart: %v", i, err)
		}
		if after.Sessions < before.Sessions {
			t.Fatalf("stop %d: %d sessions in the history before, %d after the restart", i, before.Sessions, after.Sessions)
		}
	}
	flow.waitEvents(opts.minEvents)
	played := flow.stop()
	t.Logf("%s: %d stops, %d sessions played by %d hooks meanwhile; hook wall time %s", kind, n, len(played), 2*len(played), spread(flow.took))

	// The restarted daemon logs and drains everything pending.
	r.waitStatus(fmt.Sprintf("%d sessions, outbox drained", len(played)), func(s daemon.Status) bool {
		return s.Sessions == len(played) && s.OutboxDepth == 0
	})
	published := map[string]int{}
	cabinettest.Await(t, "a session_end on the broker for every session", r.obs.Changed, func() (bool, string) {
		clear(published)
		for _, e := range r.sessionEvents(0, "session_end") {
			published[e.Game]++
		}
		for _, g := range played {
			if published[g] == 0 {
				return false, "missing " + g
			}
		}
		return true, ""
	})

	if code := d.term(); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}

	history, stats := r.store()
	count := map[string]int{}
	for _, s := range history {
		count[s.Game]++
	}
	for _, g := range played {
		if count[g] != 1 {
			t.Errorf("session %q is %d times in the history, want once", g, count[g])
		}
	}
	// Neither cut short nor stretched by a stop in the middle.
	slack := time.Millisecond + opts.slack
	for _, s := range history {
		b, ok := flow.bounds[s.Game]
		if ok && (s.Duration < b[0]-slack || s.Duration > b[1]+slack) {
			t.Errorf("session %q lasted %v in the history; its hooks put it between %v and %v", s.Game, s.Duration, b[0], b[1])
		}
	}
	if len(history) != len(played) {
		t.Errorf("history holds %d sessions, %d were played", len(history), len(played))
	}
	if opts.inOrder {
		checkPublishedInOrder(t, r, played)
	}
	if stats.QueueDepth != 0 || stats.Undelivered != 0 || stats.Dropped != 0 {
		t.Errorf("outbox after the final stop: %+v, want nothing queued, undelivered or dropped", stats)
	}
	dup := 0
	for _, n := range published {
		if n > 1 {
			dup++
		}
	}
	t.Logf("%s: %d session_end events published twice (QoS 1 redelivery: a publisher gone between PUBACK and the delivery mark); %d expired time-sensitive events",
		kind, dup, stats.Expired)
}

// spread summarises durations: median, p95, max.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no runs"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("median %v, p95 %v, max %v", s[len(s)/2].Round(100*time.Microsecond),
		s[(len(s)*95+99)/100-1].Round(100*time.Microsecond), s[len(s)-1].Round(100*time.Microsecond))
}

// flowOptions vary the flow: through the installed wrappers (the inbox
// while the daemon is up) rather than the binary, paced, for at least so
// many events, checked for order too. slack widens the bounds of a
// session's length: a wrapper's stamp is /proc/uptime's hundredth.
type flowOptions struct {
	wrappers  bool
	pace      time.Duration
	minEvents int
	slack     time.Duration
	inOrder   bool
}

// flow fires game sessions through `cabinet hook` (game-start, game-end),
// one after the other, until stopped: the events that flow while the
// daemon is killed and restarted.
type flow struct {
	opts    flowOptions
	r       *rig
	quit    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	played  []string // games whose two hooks returned
	bounds  map[string][2]time.Duration
	took    []time.Duration
	spawns  atomic.Int64
	spawned chan struct{} // closed and replaced at every spawn
}

func startFlow(r *rig, opts flowOptions) *flow {
	f := &flow{opts: opts, r: r, quit: make(chan struct{}), done: make(chan struct{}), spawned: make(chan struct{}), bounds: map[string][2]time.Duration{}}
	go f.run()
	return f
}

func (f *flow) run() {
	defer close(f.done)
	for i := 0; ; i++ {
		select {
		case <-f.quit:
			return
		default:
		}
		name := fmt.Sprintf("Kill Game %04d", i)
		path := fmt.Sprintf("/userdata/roms/nes/kill_%04d.nes", i)
		s0, s1, err := f.hook("game-start", path, strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".nes"), name)
		if err != nil {
			f.r.t.Errorf("flow: %v", err)
			return
		}
		e0, e1, err := f.hook("game-end")
		if err != nil {
			f.r.t.Errorf("flow: %v", err)
			return
		}
		f.mu.Lock()
		f.played = append(f.played, name)
		// Each hook stamps its event when it starts, between its spawn and
		// its exit: the session lasts at least e0-s1 and at most e1-s0.
		f.bounds[name] = [2]time.Duration{e0.Sub(s1), e1.Sub(s0)}
		f.mu.Unlock()
	}
}

// hook runs one hook, which must exit 0 whatever the daemon does, and
// returns when it was spawned and when it had exited.
func (f *flow) hook(args ...string) (spawned, exited time.Time, err error) {
	if f.opts.pace > 0 {
		<-time.After(f.opts.pace) // the events' rate, not a synchronisation
	}
	cmd := exec.Command(cabinetBin, append([]string{"hook"}, args...)...)
	if f.opts.wrappers {
		// As ES runs it: the installed wrapper, with ES's arguments.
		script := f.r.cab.Path(filepath.Join("/userdata/system/configs/emulationstation/scripts", args[0], "cabinet"))
		cmd = exec.Command("/bin/sh", append([]string{script}, args[1:]...)...)
	}
	cmd.Env = append(os.Environ(), f.r.env()...)
	spawned = time.Now()
	if err := cmd.Start(); err != nil {
		return spawned, spawned, err
	}
	f.spawns.Add(1)
	f.mu.Lock()
	close(f.spawned)
	f.spawned = make(chan struct{})
	f.mu.Unlock()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		exited = time.Now()
		f.mu.Lock()
		f.took = append(f.took, exited.Sub(spawned))
		f.mu.Unlock()
		if err != nil {
			return spawned, exited, fmt.Errorf("cabinet hook %q: %v", args, err)
		}
		return spawned, exited, nil
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		return spawned, time.Now(), fmt.Errorf("cabinet hook %q hung", args)
	}
}

// waitEvents returns once at least n hooks were spawned in all.
func (f *flow) waitEvents(n int) {
	for f.spawns.Load() < int64(n) {
		f.mu.Lock()
		ch := f.spawned
		f.mu.Unlock()
		if f.spawns.Load() >= int64(n) {
			return
		}
		select {
		case <-ch:
		case <-f.done:
			return
		}
	}
}

// waitSpawns returns once n more hooks were spawned.
func (f *flow) waitSpawns(n int) {
	for target := f.spawns.Load() + int64(n); f.spawns.Load() < target; {
		f.mu.Lock()
		ch := f.spawned
		f.mu.Unlock()
		if f.spawns.Load() >= target {
			return
		}
		select {
		case <-ch:
		case <-f.done:
			return
		}
	}
}

// stop ends the flow after the session under way and returns the games
// played, in order.
func (f *flow) stop() []string {
	close(f.quit)
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]string(nil), f.played...)
	sort.Strings(out)
	return out
}
