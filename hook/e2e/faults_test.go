package e2e

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fault is one thing that goes wrong around a hook run.
type fault struct {
	name string
	// setup breaks something and returns the config the faulty run uses
	// and how to repair it afterwards.
	setup func(t *testing.T, c *cabinet) (conf string, repair func())
	// lines is how many cabinet.log lines the faulty run adds at level info.
	lines int
	// lostHistory: the fault itself destroys the store file's content.
	lostHistory bool
	// check runs after the faulty run, before the repair.
	check func(t *testing.T, c *cabinet)
	// mqttLine: the expected line is the hook's "mqtt publish incomplete",
	// whatever made the publish fail.
	mqttLine bool
	// short: the one fault -short keeps (each takes about 7 s).
	short bool
}

// TestFaults: a broker that refuses, one that accepts TCP and never
// answers, wrong credentials, a store held by another process, a store
// full of garbage. Each time the hook exits 0 within its budget, writes
// nothing to stdout or stderr, logs one clear line, and once the fault is
// gone the next run delivers everything without losing a logged session.
func TestFaults(t *testing.T) {
	t.Parallel() // each fault has its own broker and cabinet
	faults := []fault{
		{name: "broker refuses connections", lines: 1, mqttLine: true, setup: func(t *testing.T, c *cabinet) (string, func()) {
			return c.writeConfig("refused.conf", cabinetOptions{Broker: "tcp://" + cabinettest.ClosedAddr(t, "tcp"), LogLevel: "info"}), func() {}
		}},
		{name: "broker accepts TCP and never answers", lines: 1, mqttLine: true, setup: func(t *testing.T, c *cabinet) (string, func()) {
			return c.writeConfig("silent.conf", cabinetOptions{Broker: "tcp://" + silentListener(t), LogLevel: "info"}), func() {}
		}},
		{name: "wrong credentials", lines: 1, mqttLine: true, setup: func(t *testing.T, c *cabinet) (string, func()) {
			auth := startBroker(t, c.broker.Kind, cabinettest.BrokerOptions{Users: map[string]string{"cabinet": "right-pw"}})
			return c.writeConfig("badcreds.conf", cabinetOptions{Broker: auth.URL(), Username: "cabinet", Password: "wrong-pw", LogLevel: "info"}), func() {}
		}},
		{name: "store locked by another process", lines: 0, setup: func(t *testing.T, c *cabinet) (string, func()) {
			// A busy store is routine (20 hooks at once): the event is
			// spooled and logged at debug only.
			return c.conf, c.lockStore()
		}, check: func(t *testing.T, c *cabinet) {
			if n := len(c.spoolFiles()); n != 1 {
				t.Errorf("%d events spooled, want the one the locked store could not take", n)
			}
		}},
		{name: "store full of garbage", lines: 1, lostHistory: true, short: true, setup: func(t *testing.T, c *cabinet) (string, func()) {
			garbage := bytes.Repeat([]byte("not a bolt database "), 2000)
			if err := os.WriteFile(filepath.Join(c.state, "cabinet.db"), garbage, 0o600); err != nil {
				t.Fatal(err)
			}
			return c.conf, func() {}
		}, check: func(t *testing.T, c *cabinet) {
			d := c.damaged()
			if len(d) != 1 {
				t.Fatalf("quarantined files %v, want the damaged store kept aside", d)
			}
			if b, _ := os.ReadFile(d[0]); !bytes.HasPrefix(b, []byte("not a bolt database")) {
				t.Errorf("%s does not hold the damaged store", d[0])
			}
		}},
		{name: "store with damaged bucket pages", lines: 1, lostHistory: true, setup: func(t *testing.T, c *cabinet) (string, func()) {
			damageBuckets(t, filepath.Join(c.state, "cabinet.db"))
			return c.conf, func() {}
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			if !f.short {
				cabinettest.Long(t, "one more fault (-short keeps a garbage store)")
			}
			cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
				b := startBroker(t, kind, cabinettest.BrokerOptions{})
				opts := cabinetOptions{MinSessionSeconds: 0, LogLevel: "info"}
				c := newCabinet(t, b, opts)
				c.begin(opts)
				before := c.logOneSession()

				conf, repair := f.setup(t, c)
				n := len(c.logLines())
				r := c.run(conf, "hook", "screensaver-start", "slideshow")
				t.Logf("%s, %s: the hook took %v", f.name, kind, r.Took.Round(time.Millisecond))
				if r.Err != nil || len(r.Stdout) != 0 || len(r.Stderr) != 0 {
					t.Errorf("exit %v, stdout %q, stderr %q; want exit 0 and silence", r.Err, r.Stdout, r.Stderr)
				}
				got := c.logLines()[n:]
				if !f.mqttLine {
					got = withoutDeadlineMisses(got) // a loaded machine, not the fault
				}
				if len(got) != f.lines || len(atLeastWarn(got)) != f.lines {
					t.Errorf("%d new log lines (%d at warn or above), want %d:\n%s", len(got), len(atLeastWarn(got)), f.lines, raws(got))
				} else if f.lines > 0 {
					t.Logf("logged: %s", got[0].raw)
				}
				if f.check != nil {
					f.check(t, c)
				}
				repair()

				// Back to normal: the next run delivers what waited.
				if r := c.hook("sleep"); r.Err != nil {
					t.Fatalf("next run: %v", r.Err)
				}
				c.waitState("screensaver", "ON")
				c.waitState("screensaver/attributes", `{"type":"slideshow"}`)
				c.waitQuiet()
				if left := c.spoolFiles(); len(left) != 0 {
					t.Errorf("spool still holds %v", left)
				}
				if !f.lostHistory {
					c.checkHistoryKept(before)
					c.checkOutboxDrained()
				}
			})
		})
	}
}

// silentListener accepts TCP connections and never reads or writes: a
// broker that hangs, or a firewall that swallows MQTT.
func silentListener(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestPasswordNeverShown: the MQTT password from the config appears in no
// log line (at debug level) and no output, even when the broker refuses it
// and the hook logs the refusal; the right password works.
func TestPasswordNeverShown(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		const right = "Right-pw-e2e-9c1f"
		secret := fmt.Sprintf("Wr0ng-e2e-secret-%d", time.Now().UnixNano())
		b := startBroker(t, kind, cabinettest.BrokerOptions{Users: map[string]string{"cabinet": right}})
		opts := cabinetOptions{MinSessionSeconds: 0, Username: "cabinet", Password: secret, LogLevel: "debug"}
		c := newCabinet(t, b, opts)
		c.begin(opts)

		var outputs [][]byte
		c.fire("start")
		c.launch(smbPath, smbName, 300*time.Millisecond, nil)
		for _, args := range [][]string{{"hook", "sleep"}, {"hook", "frobnicate", secret}, {"hook", "--flush-after", "1ms"}, {"config"}} {
			r := c.run(c.conf, args...)
			outputs = append(outputs, r.Stdout, r.Stderr)
		}
		c.firer.Fire("quit")
		c.waitQuiet()

		lines := c.logLines()
		refused := false
		for _, l := range lines {
			refused = refused || strings.Contains(l.raw, "refused the credentials")
		}
		if !refused {
			t.Errorf("no log line says the broker refused the credentials:\n%s", raws(lines))
		}
		check := func(what string, b []byte) {
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the password appears in %s:\n%s", what, b)
			}
		}
		log, _ := os.ReadFile(filepath.Join(c.state, "cabinet.log"))
		check("cabinet.log", log)
		for _, name := range []string{"es_script_stdout.log", "es_script_stderr.log"} {
			b, _ := os.ReadFile(filepath.Join(c.firer.LogDirInUse(), name))
			check(name, b)
		}
		check("ES's stderr", []byte(c.esStderr.String()))
		for i, o := range outputs {
			check(fmt.Sprintf("direct run output %d", i), o)
		}
		if len(b.Capture()) != 0 || len(b.Retained(t)) != 0 {
			t.Errorf("the broker took messages from a client with a wrong password")
		}

		// The right password delivers.
		good := c.writeConfig("good.conf", cabinetOptions{Username: "cabinet", Password: right, LogLevel: "debug"})
		if r := c.run(good, "hook", "start"); r.Err != nil {
			t.Fatal(r.Err)
		}
		c.waitState("status", "online")
	})
}

// damageBuckets overwrites every page of a bbolt file except its two meta
// pages and its freelist: bbolt still opens it (Open reads only those), and
// the first transaction meets garbage where the buckets were.
func damageBuckets(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Page header: id u64, flags u16, count u16, overflow u32. Meta: magic,
	// version, page size, flags (u32 each), root bucket (u64 root, u64
	// sequence), freelist pgid u64, high-water pgid u64, txid u64, checksum.
	pageSize := int(binary.LittleEndian.Uint32(b[16+8:]))
	meta := func(i int) (freelist, txid uint64) {
		m := b[i*pageSize+16:]
		return binary.LittleEndian.Uint64(m[32:]), binary.LittleEndian.Uint64(m[48:])
	}
	fl0, tx0 := meta(0)
	fl1, tx1 := meta(1)
	freelist := fl0
	if tx1 > tx0 {
		freelist = fl1
	}
	overflow := uint64(binary.LittleEndian.Uint32(b[int(freelist)*pageSize+12:]))
	for pg := 2; pg*pageSize < len(b); pg++ {
		if uint64(pg) >= freelist && uint64(pg) <= freelist+overflow {
			continue
		}
		for i := pg * pageSize; i < (pg+1)*pageSize && i < len(b); i++ {
			b[i] = byte(i*7 + 13)
		}
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
