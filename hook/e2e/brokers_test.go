package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// testBroker is a shared test broker with a record of everything published
// through it, retain flags kept: the embedded broker's own, or on Mosquitto
// a mosquitto_sub capture.
type testBroker struct {
	*cabinettest.Broker
	dir string      // Mosquitto only: where the captures go
	sub *captureSub // Mosquitto only: mosquitto_sub -V 5 --retain-as-published
	// subs are the finished captures of earlier mosquitto_sub runs.
	subs [][]byte
}

func startBroker(t *testing.T, kind cabinettest.Kind, opts cabinettest.BrokerOptions) *testBroker {
	t.Helper()
	b := &testBroker{Broker: cabinettest.StartBroker(t, kind, opts)}
	if kind == cabinettest.Mosquitto {
		b.dir = cabinettest.TempDir(t, "capture")
	}
	// Registered after the broker's clean-up and the capture dir's, so it
	// runs before them.
	t.Cleanup(b.stopCapture)
	if b.Up() {
		b.startCapture(t)
	}
	return b
}

// Start brings a stopped broker back on the same port, empty (no retained
// messages survive), and starts a fresh capture.
func (b *testBroker) Start(t *testing.T) {
	t.Helper()
	if b.Up() {
		return
	}
	b.Broker.Start(t)
	b.startCapture(t)
}

// CaptureText is everything published so far as `mosquitto_sub -V 5
// --retain-as-published -F '%r %t %p'` lines. For Mosquitto it is that
// capture: it also holds the retained messages a (re)subscription receives.
func (b *testBroker) CaptureText() []byte {
	if emb := b.Embedded(); emb != nil {
		return emb.Capture()
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
	if b.Kind != cabinettest.Mosquitto {
		return
	}
	b.sub = startCaptureSub(t, b)
}

func (b *testBroker) stopCapture() {
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
	if user, pass, ok := b.Credentials(); ok {
		args = append(args, "-u", user, "-P", pass)
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
	mc := b.Dial(t)
	defer mc.Disconnect(0)
	cabinettest.Await(t, "mosquitto_sub subscribed", nil, func() (bool, string) {
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
