package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
)

// cabinetOptions are the cabinet.* keys a scenario sets.
type cabinetOptions struct {
	MinSessionSeconds int    // cabinet.tracker.min_session_seconds (0 logs every session)
	LogLevel          string // default debug
	Username          string
	Password          string
	Broker            string // default: the test broker's URL; "-" turns MQTT off
}

// cabinet is a fake Batocera root with Cabinet's ES and configgen scripts
// installed, pointing at the binary under test and at one broker.
type cabinet struct {
	t      *testing.T
	id     string
	root   string
	state  string // <root>/userdata/system/cabinet
	conf   string // CABINET_CONFIG of every script
	broker *testBroker
	firer  *esevents.Firer
	cg     *esevents.Configgen
	// esStderr is ES's own stderr: sh reports there a command line it cannot parse.
	esStderr *lockedBuffer
	// from is where the current scenario starts in the capture, esFrom in
	// ES's stderr.
	from, esFrom int
	// lastLaunch is when launch last fired game-start.
	lastLaunch time.Time
}

var cabinetSeq atomic.Int64

func newCabinet(t *testing.T, b *testBroker, opts cabinetOptions) *cabinet {
	t.Helper()
	root := cleanTempDir(t, "root")
	c := &cabinet{
		t:        t,
		id:       fmt.Sprintf("e2e%d", cabinetSeq.Add(1)),
		root:     root,
		state:    filepath.Join(root, "userdata/system/cabinet"),
		broker:   b,
		esStderr: &lockedBuffer{},
	}
	c.conf = c.writeConfig("batocera.conf", opts)
	layout := packaging.Layout{
		Binary:      cabinetBin,
		ESScripts:   filepath.Join(root, esevents.UserScriptsDir),
		UserScripts: filepath.Join(root, esevents.ConfiggenUserScriptsDir),
		RunDir:      filepath.Join(root, "var/run/cabinet"),
		FlagLingerS: 1,
	}
	for _, s := range layout.ESScriptFiles() {
		mustMkdir(t, filepath.Dir(s.Path))
		if err := os.WriteFile(s.Path, []byte(s.Content), os.FileMode(s.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"CABINET_CONFIG=" + c.conf}
	c.firer = &esevents.Firer{Root: root, Env: env, Stderr: c.esStderr,
		OnError: func(err error) { t.Errorf("ES fire: %v", err) }}
	c.cg = &esevents.Configgen{Root: root, Env: env}
	t.Cleanup(c.cleanup)
	return c
}

// writeConfig writes a batocera.conf-style file for this root and returns
// its path. Tests that need a second view of the same cabinet (another
// broker address, other credentials) write another one.
func (c *cabinet) writeConfig(name string, opts cabinetOptions) string {
	c.t.Helper()
	broker := opts.Broker
	if broker == "" && c.broker != nil {
		broker = c.broker.URL()
	}
	if broker == "-" {
		broker = ""
	}
	level := opts.LogLevel
	if level == "" {
		level = "debug"
	}
	lines := []string{
		"# written by the e2e tests",
		"cabinet.paths.root=" + c.root,
		"cabinet.id=" + c.id,
		"cabinet.name=E2E Cabinet",
		"cabinet.mqtt.broker=" + broker,
		fmt.Sprintf("cabinet.tracker.min_session_seconds=%d", opts.MinSessionSeconds),
		"cabinet.log.level=" + level,
	}
	if opts.Username != "" {
		lines = append(lines, "cabinet.mqtt.username="+opts.Username)
	}
	if opts.Password != "" {
		lines = append(lines, "cabinet.mqtt.password="+opts.Password)
	}
	p := filepath.Join(c.root, "userdata/system", name)
	mustMkdir(c.t, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// fire fires an ES event the way ES does and waits for its scripts (ES
// does not wait; the tests wait so that successive events are stamped in
// the order a user makes them).
func (c *cabinet) fire(event string, args ...string) {
	c.t.Helper()
	c.firer.Fire(event, args...)
	c.waitScripts()
}

// waitScripts waits for every script fired so far.
func (c *cabinet) waitScripts() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.firer.Wait(ctx); err != nil {
		c.t.Fatalf("ES scripts: %v", err)
	}
}

// configgen runs Batocera launcher's user scripts (synchronous, real argv).
func (c *cabinet) configgen(event, system, emulator, core, rom string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.cg.Run(ctx, event, system, emulator, core, rom); err != nil {
		c.t.Fatalf("configgen %s: %v", event, err)
	}
}

// topic is the state topic of an entity.
func (c *cabinet) topic(entity string) string { return "batocera/" + c.id + "/" + entity }

// scenarioCapture is what the broker carried since the scenario began.
func (c *cabinet) scenarioCapture() []pub {
	caps := c.broker.Capture()
	if c.from > len(caps) {
		return nil
	}
	return caps[c.from:]
}

// sessionEvents and cabinetEvents are the events of the current scenario.
func (c *cabinet) sessionEvents() []event {
	return events(c.scenarioCapture(), c.topic("game_session"))
}
func (c *cabinet) cabinetEvents() []event { return events(c.scenarioCapture(), c.topic("cabinet")) }

// lastRetained is the latest retained publish of each of the cabinet's
// topics in the capture (what the broker holds, if it never restarted).
func (c *cabinet) lastRetained() map[string]string {
	out := map[string]string{}
	for _, p := range c.broker.Capture() {
		if p.Retain {
			out[p.Topic] = p.Payload
		}
	}
	return out
}

// waitState waits until the capture shows entity's retained state = want.
func (c *cabinet) waitState(entity, want string) {
	c.t.Helper()
	waitFor(c.t, 15*time.Second, fmt.Sprintf("%s = %q", entity, want), func() (bool, string) {
		got, ok := c.lastRetained()[c.topic(entity)]
		return ok && got == want, fmt.Sprintf("last retained %q", got)
	})
}

// waitSessionEvents waits until n events of typ are on the broker.
func (c *cabinet) waitSessionEvents(typ string, n int) []event {
	c.t.Helper()
	var got []event
	waitFor(c.t, 20*time.Second, fmt.Sprintf("%d %s event(s)", n, typ), func() (bool, string) {
		got = ofType(c.sessionEvents(), typ)
		return len(got) >= n, fmt.Sprintf("%d so far: %v", len(got), types(c.sessionEvents()))
	})
	return got
}

// checkStates compares the broker's retained states (a fresh subscriber's
// view) with want: entity → payload.
func (c *cabinet) checkStates(want map[string]string) map[string]string {
	c.t.Helper()
	got := c.broker.Retained(c.t)
	for entity, w := range want {
		topic := c.topic(entity)
		if entity == "status" {
			topic = "batocera/" + c.id + "/status"
		}
		if g, ok := got[topic]; !ok || g != w {
			c.t.Errorf("retained %s = %q (present %v), want %q", topic, g, ok, w)
		}
	}
	return got
}

// waitQuiet waits until no script runs and no delayed flush is pending: the
// flusher holds flush.lock for its whole life, so the lock is free twice in
// a row only when none runs (a freshly spawned one takes it within ms).
func (c *cabinet) waitQuiet() {
	c.t.Helper()
	c.waitScripts()
	free := 0
	waitFor(c.t, 30*time.Second, "no delayed flush running", func() (bool, string) {
		if c.flushLockFree() {
			free++
		} else {
			free = 0
		}
		return free >= 8, "flush.lock held"
	})
}

func (c *cabinet) flushLockFree() bool {
	f, err := os.OpenFile(filepath.Join(c.state, "flush.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return true // no state dir yet
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// spoolFiles lists the events waiting in the spool.
func (c *cabinet) spoolFiles() []string {
	ents, _ := os.ReadDir(filepath.Join(c.state, "spool"))
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".event") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out
}

// damaged lists store files Open moved aside.
func (c *cabinet) damaged() []string {
	m, _ := filepath.Glob(filepath.Join(c.state, "cabinet.db.damaged-*"))
	return m
}

// cleanup lets every script finish (killing stragglers), waits for the
// delayed flusher and holds its lock so a late one exits at once, then
// removes the tree. On failure it prints what the cabinet logged.
func (c *cabinet) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.firer.Wait(ctx); err != nil {
		c.firer.Kill()
	}
	if c.t.Failed() {
		log, _ := os.ReadFile(filepath.Join(c.state, "cabinet.log"))
		c.t.Logf("cabinet.log of %s:\n%s", c.id, tail(log, 60))
		if s := c.esStderr.String(); s != "" {
			c.t.Logf("ES stderr:\n%s", s)
		}
	}
	lock, err := os.OpenFile(filepath.Join(c.state, "flush.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		deadline := time.Now().Add(20 * time.Second)
		for syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil && time.Now().Before(deadline) {
			<-time.After(20 * time.Millisecond)
		}
		defer lock.Close()
	}
	if os.Getenv("CABINET_E2E_KEEP") != "1" || !c.t.Failed() {
		os.RemoveAll(c.root)
	}
}

func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// begin starts a scenario on this cabinet: the event helpers look only at
// what the broker carried from now on, and the config is rewritten.
func (c *cabinet) begin(opts cabinetOptions) {
	c.t.Helper()
	c.writeConfig("batocera.conf", opts)
	c.from = len(c.broker.Capture())
	c.esFrom = len(c.esStderr.String())
}

// esStderrSince is what ES's stderr got during the current scenario.
func (c *cabinet) esStderrSince() string { return c.esStderr.String()[c.esFrom:] }
