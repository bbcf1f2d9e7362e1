package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
	"github.com/batocera-cabinet/cabinet/simulator/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/realmosquitto"
)

// brokerKind names one of the two brokers every scenario runs against.
type brokerKind string

const (
	embedded  brokerKind = "embedded"
	mosquitto brokerKind = "mosquitto"
)

// Test clients (capture, snapshots) log in as this user when the broker
// requires users; the cabinet has its own.
const (
	testUser = "e2e"
	testPass = "e2e-observer-pw"
)

// eachBroker runs fn as a parallel subtest per broker. A missing Mosquitto
// skips (or fails, with CABINET_REQUIRE_PEERS=1) only its subtest. t itself
// runs in parallel with the other tests: most of their time is spent
// waiting (the 3 s reorder window, the 60 s event window), so -parallel
// above the default shortens the run.
func eachBroker(t *testing.T, fn func(t *testing.T, kind brokerKind)) {
	t.Parallel()
	for _, kind := range []brokerKind{embedded, mosquitto} {
		t.Run(string(kind), func(t *testing.T) {
			t.Parallel()
			if kind == mosquitto {
				peertest.RequirePeer(t, realmosquitto.Available())
			}
			fn(t, kind)
		})
	}
}

// brokerOptions shape a test broker.
type brokerOptions struct {
	// Users, when set, turns authentication on; the test user is added.
	Users map[string]string
	// Stopped leaves the broker down after it picked its port (Start brings
	// it up on the same port).
	Stopped bool
}

// testBroker is the embedded broker or a real Mosquitto, with a record of
// everything published through it, retain flags kept.
type testBroker struct {
	kind  brokerKind
	dir   string
	users map[string]string
	emb   *mqttbroker.Broker
	mos   *realmosquitto.Broker
	sub   *captureSub // Mosquitto only: mosquitto_sub -V 5 --retain-as-published
	// subs are the finished captures of earlier mosquitto_sub runs.
	subs [][]byte
	up   bool
}

func startBroker(t *testing.T, kind brokerKind, opts brokerOptions) *testBroker {
	t.Helper()
	users := map[string]string(nil)
	if len(opts.Users) > 0 {
		users = map[string]string{testUser: testPass}
		for u, p := range opts.Users {
			users[u] = p
		}
	}
	b := &testBroker{kind: kind, dir: cleanTempDir(t, "broker"), users: users}
	var err error
	switch kind {
	case embedded:
		b.emb, err = mqttbroker.Start(mqttbroker.Options{Users: users})
	case mosquitto:
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		b.mos, err = realmosquitto.Start(ctx, b.dir, realmosquitto.Options{Users: users})
	}
	if err != nil {
		t.Fatalf("start %s broker: %v", kind, err)
	}
	b.up = true
	t.Cleanup(func() { b.Stop(t) })
	if opts.Stopped {
		b.Stop(t)
		return b
	}
	b.startCapture(t)
	return b
}

// URL is tcp://127.0.0.1:PORT, stable across Stop and Start.
func (b *testBroker) URL() string {
	if b.emb != nil {
		return b.emb.URL()
	}
	return b.mos.URL()
}

// Stop takes the broker down (connections refused on its port).
func (b *testBroker) Stop(t *testing.T) {
	t.Helper()
	if !b.up {
		return
	}
	b.up = false
	b.stopCapture(t)
	var err error
	if b.emb != nil {
		err = b.emb.Close()
	} else {
		err = b.mos.Close()
	}
	if err != nil {
		t.Errorf("stop %s broker: %v", b.kind, err)
	}
}

// Start brings a stopped broker back on the same port, empty (no retained
// messages survive), and starts a fresh capture.
func (b *testBroker) Start(t *testing.T) {
	t.Helper()
	if b.up {
		return
	}
	var err error
	if b.emb != nil {
		err = b.emb.Restart()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		err = b.mos.Restart(ctx)
	}
	if err != nil {
		t.Fatalf("restart %s broker: %v", b.kind, err)
	}
	b.up = true
	b.startCapture(t)
}

// CaptureText is everything published so far as `mosquitto_sub -V 5
// --retain-as-published -F '%r %t %p'` lines. For Mosquitto it is that
// capture: it also holds the retained messages a (re)subscription receives.
func (b *testBroker) CaptureText() []byte {
	if b.emb != nil {
		return b.emb.Capture()
	}
	var all []byte
	for _, c := range b.subs {
		all = append(all, c...)
	}
	if b.sub != nil {
		all = append(all, b.sub.read()...)
	}
	return all
}

// Capture is CaptureText parsed, the test's own marker topics left out.
func (b *testBroker) Capture() []pub { return parseCapture(b.CaptureText()) }

func (b *testBroker) startCapture(t *testing.T) {
	t.Helper()
	if b.kind != mosquitto {
		return
	}
	b.sub = startCaptureSub(t, b)
}

func (b *testBroker) stopCapture(t *testing.T) {
	if b.sub == nil {
		return
	}
	b.subs = append(b.subs, b.sub.stop())
	b.sub = nil
}

// captureSub is a mosquitto_sub writing to a file.
type captureSub struct {
	cmd  *exec.Cmd
	file string
	done chan struct{}
}

// startCaptureSub starts mosquitto_sub on '#' and returns once it is
// subscribed: a marker published after its start has come back through it.
func startCaptureSub(t *testing.T, b *testBroker) *captureSub {
	t.Helper()
	bin, err := exec.LookPath("mosquitto_sub")
	if err != nil {
		peertest.RequirePeer(t, fmt.Errorf("mosquitto_sub (package mosquitto-clients): %w", err))
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(b.URL(), "tcp://"), ":")
	f, err := os.CreateTemp(b.dir, "capture-*.txt")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-V", "5", "--retain-as-published", "-F", "%r %t %p", "-t", "#", "-h", host, "-p", port, "-q", "1"}
	if b.users != nil {
		args = append(args, "-u", testUser, "-P", testPass)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start mosquitto_sub: %v", err)
	}
	f.Close()
	s := &captureSub{cmd: cmd, file: f.Name(), done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }()
	marker := "e2e/ready/" + filepath.Base(f.Name())
	mc := dialObserver(t, b)
	defer mc.Disconnect(0)
	waitFor(t, 10*time.Second, "mosquitto_sub subscribed", func() (bool, string) {
		select {
		case <-s.done:
			t.Fatalf("mosquitto_sub exited: %s", s.read())
		default:
		}
		if strings.Contains(string(s.read()), " "+marker+" ") {
			return true, ""
		}
		mc.Publish(marker, 1, false, "ready").WaitTimeout(time.Second)
		return false, "marker not seen yet"
	})
	return s
}

func (s *captureSub) read() []byte {
	b, _ := os.ReadFile(s.file)
	return b
}

// stop ends mosquitto_sub and returns its whole capture.
func (s *captureSub) stop() []byte {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	return s.read()
}

// cleanTempDir is a temporary directory whose path has no shell characters
// (subtest names put parentheses into t.TempDir paths, and ES pastes paths
// unquoted into sh command lines). It is removed when t ends.
func cleanTempDir(t testing.TB, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cabinet-e2e-"+what+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv("CABINET_E2E_KEEP") == "1" && t.Failed() {
			t.Logf("kept %s (CABINET_E2E_KEEP=1)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}
