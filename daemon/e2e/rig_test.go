package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// testBroker is a shared test broker and how the rig's observer reads it.
type testBroker struct {
	*cabinettest.Broker
	// subscribe makes the rig's observer a real subscriber on the
	// embedded broker too (see cabinettest.Observer).
	subscribe bool
}

func startBroker(t testing.TB, kind cabinettest.Kind) *testBroker {
	t.Helper()
	return &testBroker{Broker: cabinettest.StartBroker(t, kind, cabinettest.BrokerOptions{})}
}

// rig is one simulated cabinet (fake ES, the real hook scripts installed),
// its config file, a broker with a live observer, and the daemon processes
// a test starts on it one after the other.
type rig struct {
	t      testing.TB
	id     string
	cab    *simulator.Cabinet
	conf   string // CABINET_CONFIG of the daemon and of every hook
	state  string // the state dir (store, spool, token, hook log)
	sock   string
	broker *testBroker
	obs    *cabinettest.Observer
	logs   *cabinettest.LogBuffer // every daemon's stderr, in order
	d      *daemonProc
	// extraEnv is added to the environment of every cabinet process of this rig.
	extraEnv []string
}

var rigSeq atomic.Int64

// newRig builds a cabinet on broker b (nil: MQTT off). Every session is
// logged (min_session_seconds=0); extra "key=value" config lines are added
// or replace these defaults.
func newRig(t testing.TB, b *testBroker, extra ...string) *rig {
	t.Helper()
	return newRigWith(t, b, simulator.Options{}, extra...)
}

// newRigWith is newRig with more of the simulator (its fake RomM).
func newRigWith(t testing.TB, b *testBroker, so simulator.Options, extra ...string) *rig {
	t.Helper()
	r := &rig{t: t, id: fmt.Sprintf("d%d", rigSeq.Add(1)), broker: b, logs: &cabinettest.LogBuffer{}}
	so.Dir, so.LaunchDelay = cabinettest.TempDir(t, "sim"), 20*time.Millisecond
	cab, err := simulator.Start(so)
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	r.cab = cab
	t.Cleanup(func() { cab.Close() })
	keys := []string{"cabinet.id", "cabinet.tracker.min_session_seconds", "cabinet.log.level", "cabinet.mqtt.broker"}
	values := map[string]string{"cabinet.id": r.id, "cabinet.tracker.min_session_seconds": "0", "cabinet.log.level": "debug"}
	if b != nil {
		values["cabinet.mqtt.broker"] = b.URL()
		r.obs = cabinettest.Observe(t, b.Broker, b.subscribe)
	}
	// Merged, not appended: of a key written twice the file's first wins.
	for _, e := range extra {
		k, v, _ := strings.Cut(e, "=")
		if _, known := values[k]; !known {
			keys = append(keys, k)
		}
		values[k] = v
	}
	var lines []string
	for _, k := range keys {
		if v, ok := values[k]; ok {
			lines = append(lines, k+"="+v)
		}
	}
	r.conf, err = cab.WriteConfig(filepath.Join(cab.Dir, "conf"), lines...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cab.InstallHooks(cabinetBin, r.conf); err != nil {
		t.Fatal(err)
	}
	r.state = cab.Path("/userdata/system/cabinet")
	r.sock = filepath.Join(cab.Path("/var/run/cabinet"), paths.SocketName)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("daemon log (%s):\n%s", r.id, r.logs.Tail())
		}
		r.waitFlushers()
	})
	return r
}

// env is the environment of every cabinet process of this rig.
func (r *rig) env() []string { return append([]string{"CABINET_CONFIG=" + r.conf}, r.extraEnv...) }

// topic is an entity's state topic; status the availability topic.
func (r *rig) topic(entity string) string { return "batocera/" + r.id + "/" + entity }
func (r *rig) status() string             { return "batocera/" + r.id + "/status" }

// start starts a daemon and waits until it listens on its socket.
func (r *rig) start() *daemonProc {
	r.t.Helper()
	r.d = startDaemon(r.t, r.env(), r.logs)
	r.d.waitLog("cabinet serve started", 20*time.Second)
	return r.d
}

// startOnline starts a daemon and waits until it is connected and has said
// `online` (its status on the socket says so: the link counts itself
// connected only once `online` is acknowledged).
func (r *rig) startOnline() *daemonProc {
	r.t.Helper()
	d := r.start()
	r.waitStatus("MQTT connected", func(s daemon.Status) bool { return s.MQTTConnected })
	return d
}

// daemonStatus asks the running daemon for its status over the socket.
func (r *rig) daemonStatus() (daemon.Status, error) {
	var st daemon.Status
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := socket.Status(ctx, r.sock, &st)
	return st, err
}

// waitStatus waits until the daemon's status satisfies ok.
func (r *rig) waitStatus(what string, ok func(daemon.Status) bool) daemon.Status {
	r.t.Helper()
	var st daemon.Status
	cabinettest.Await(r.t, "daemon status: "+what, r.logs.Changed, func() (bool, string) {
		var err error
		st, err = r.daemonStatus()
		if err != nil {
			return false, err.Error()
		}
		return ok(st), fmt.Sprintf("%+v", st)
	})

	return st
}

// hook runs `cabinet hook ARGS…` directly (real argv, as configgen does).
func (r *rig) hook(args ...string) time.Duration {
	r.t.Helper()
	out, code, took := runCabinet(r.t, r.env(), append([]string{"hook"}, args...)...)
	if code != 0 || out != "" {
		r.t.Errorf("cabinet hook %q: exit %d, output %q (want 0 and silence)", args, code, out)
	}
	return took
}

// playSessions plays n sessions of label's games through hooks run
// directly (game-start, then game-end) and returns their ROMs in order.
func (r *rig) playSessions(label string, n int) []string {
	r.t.Helper()
	var roms []string
	for i := 0; i < n; i++ {
		rom := fmt.Sprintf("/userdata/roms/nes/%s_%d.nes", label, i)
		r.hook("game-start", rom, fmt.Sprintf("%s_%d", label, i), fmt.Sprintf("%s %d", label, i))
		r.hook("game-end")
		roms = append(roms, rom)
	}
	return roms
}

// store opens the store (the daemon must be stopped) and returns the
// logged sessions, oldest first, and the outbox figures.
func (r *rig) store() ([]haentities.Session, store.Stats) {
	r.t.Helper()
	s, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		r.t.Fatalf("open the store: %v", err)
	}
	defer s.Close()
	if s.Quarantined != "" {
		r.t.Errorf("the store was damaged and moved to %s", s.Quarantined)
	}
	sess, err := s.Sessions(store.Query{})
	if err != nil {
		r.t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		r.t.Fatal(err)
	}
	return sess, st
}

// sessionEvents are the game_session events of type typ ("": any) the
// observer received since position from, in arrival order.
func (r *rig) sessionEvents(from int, typ string) []sessionEvent {
	var out []sessionEvent
	for _, m := range r.obs.Since(from) {
		if m.Topic != r.topic("game_session") {
			continue
		}
		var e sessionEvent
		if json.Unmarshal([]byte(m.Payload), &e) == nil && (typ == "" || e.EventType == typ) {
			out = append(out, e)
		}
	}
	return out
}

// sessionEvent is the payload of the game_session event entity.
type sessionEvent struct {
	EventType string `json:"event_type"`
	Game      string `json:"game"`
	Rom       string `json:"rom"`
	Started   string `json:"started"`
	SessionID string `json:"session_id"`
}

// waitFlushers waits for the delayed-flush processes standalone hooks
// start (`cabinet hook --flush-after`, detached): each holds flush.lock
// while it lives, and must be gone before the tree is removed.
func (r *rig) waitFlushers() {
	f, err := os.OpenFile(filepath.Join(r.state, "flush.lock"), os.O_RDWR, 0)
	if err != nil {
		return
	}
	defer f.Close()
	cabinettest.Eventually(40*time.Second, nil, func() (bool, string) {
		return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil, "flush.lock held"
	})
}

// lines renders a list one per line for messages.
func lines[T any](xs []T) string {
	var b strings.Builder
	for _, x := range xs {
		fmt.Fprintf(&b, "  %v\n", x)
	}
	return b.String()
}
