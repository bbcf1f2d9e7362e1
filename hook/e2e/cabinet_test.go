package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
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
	esStderr *cabinettest.LogBuffer
	// from is where the current scenario starts in the capture, esFrom in
	// ES's stderr.
	from, esFrom int
	// lastLaunch is when launch's start reports of lastRom were stamped.
	lastLaunch time.Time
	lastRom    string
	// flushLock is flush.lock while the test holds it.
	flushLock *os.File
	// repeats are the repeated events once has reported; repeatsOK, when
	// set, says why repeats are expected.
	repeats   map[string]bool
	repeatsOK string
}

var cabinetSeq atomic.Int64

func newCabinet(t *testing.T, b *testBroker, opts cabinetOptions) *cabinet {
	t.Helper()
	root := cabinettest.TempDir(t, "root")
	c := &cabinet{
		t:        t,
		id:       fmt.Sprintf("e2e%d", cabinetSeq.Add(1)),
		root:     root,
		state:    filepath.Join(root, "userdata/system/cabinet"),
		broker:   b,
		esStderr: &cabinettest.LogBuffer{},
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
	if opts.Broker == "" && c.broker != nil {
		opts.Broker = c.broker.URL()
	}
	return writeConf(c.t, c.root, c.id, name, opts)
}

// writeConf writes <root>/userdata/system/<name> for cabinet id under root.
func writeConf(tb testing.TB, root, id, name string, opts cabinetOptions) string {
	tb.Helper()
	broker := opts.Broker
	if broker == "-" {
		broker = ""
	}
	level := opts.LogLevel
	if level == "" {
		level = "debug"
	}
	lines := []string{
		"# written by the e2e tests",
		"cabinet.paths.root=" + root,
		"cabinet.id=" + id,
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
	p := filepath.Join(root, "userdata/system", name)
	mustMkdir(tb, filepath.Dir(p))
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
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

// sessionEvents and cabinetEvents are the events of the current scenario,
// each once: see once.
func (c *cabinet) sessionEvents() []event {
	return c.once(events(c.scenarioCapture(), c.topic("game_session")))
}
func (c *cabinet) cabinetEvents() []event {
	return c.once(events(c.scenarioCapture(), c.topic("cabinet")))
}

// once drops repeats of an identical event. QoS 1 allows one: a hook whose
// budget ran out between the broker's receipt and its PUBACK leaves the
// message unmarked, and the next run sends it again (session ids and
// times let consumers dedupe). A repeat with no such budget miss in the
// log is an error.
func (c *cabinet) once(evs []event) []event {
	c.t.Helper()
	seen := map[string]bool{}
	var out []event
	for _, e := range evs {
		if !seen[e.raw] {
			seen[e.raw] = true
			out = append(out, e)
			continue
		}
		if c.repeats == nil {
			c.repeats = map[string]bool{}
		}
		if c.repeats[e.raw] {
			continue
		}
		c.repeats[e.raw] = true
		if c.repeatsOK == "" && c.deadlineMisses() == 0 {
			c.t.Errorf("event published twice with no budget miss to explain it: %s", e.raw)
		} else {
			c.t.Logf("event published again after a budget miss (QoS 1 redelivery): %s", e.raw)
		}
	}
	return out
}

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
	c.waitDelivered(fmt.Sprintf("%s = %q", entity, want), func() (bool, string) {
		got, ok := c.lastRetained()[c.topic(entity)]
		return ok && got == want, fmt.Sprintf("last retained %q", got)
	})
}

// waitSessionEvents waits until n events of typ are on the broker.
func (c *cabinet) waitSessionEvents(typ string, n int) []event {
	c.t.Helper()
	var got []event
	c.waitDelivered(fmt.Sprintf("%d %s event(s)", n, typ), func() (bool, string) {
		got = ofType(c.sessionEvents(), typ)
		return len(got) >= n, fmt.Sprintf("%d so far: %v", len(got), types(c.sessionEvents()))
	})
	return got
}

// waitDelivered waits for something the hooks publish. A hook whose store
// work ate its 250 ms budget (a loaded machine, a slow fsync) leaves its
// messages queued and starts a delayed flush that finishes the delivery.
func (c *cabinet) waitDelivered(what string, cond func() (bool, string)) {
	c.t.Helper()
	cabinettest.Await(c.t, what, c.broker.Changed, cond)
}

// deadlineMisses counts the hook runs that left messages queued because
// their budget ran out.
func (c *cabinet) deadlineMisses() int {
	n := 0
	for _, l := range c.logLines() {
		if isDeadlineMiss(l) {
			n++
		}
	}
	return n
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
