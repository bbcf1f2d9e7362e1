package prism

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startTimeout bounds Prism's start: it parses the whole document first
// (about 5 s for RomM's 426 KB one on the development machine).
const startTimeout = 90 * time.Second

// Mock runs `prism mock` on doc (static examples, not --dynamic) on a free
// loopback port until t ends, and returns its base URL once it answers.
func Mock(t testing.TB, doc string) string {
	t.Helper()
	return start(t, "mock", doc)
}

// Proxy runs `prism proxy --errors` on doc in front of upstream: requests
// and responses are validated against doc, an invalid request is answered
// by Prism (422/401) without reaching upstream, and a response that breaks
// doc is replaced by a 500 whose sl-violations header lists why (see
// Violations).
func Proxy(t testing.TB, doc, upstream string) string {
	t.Helper()
	return start(t, "proxy", "--errors", doc, upstream)
}

// ProxyResponses is Proxy with --validate-request=false: every request
// reaches upstream (Prism still refuses one without the credentials the
// operation's security asks for), so that upstream's own 422s and 404s are
// validated too.
func ProxyResponses(t testing.TB, doc, upstream string) string {
	t.Helper()
	return start(t, "proxy", "--errors", "--validate-request=false", doc, upstream)
}

func start(t testing.TB, args ...string) string {
	t.Helper()
	bin := Require(t)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("prism: find a free port: %v", err)
		}
		url, err := launch(t, bin, port, args)
		if err == nil {
			return url
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatalf("prism %s: %v", args[0], lastErr)
	return ""
}

var errPortTaken = errors.New("port taken before prism bound it")

func launch(t testing.TB, bin string, port int, args []string) (string, error) {
	t.Helper()
	full := append(append([]string{}, args[0], "-p", strconv.Itoa(port), "-h", "127.0.0.1"), args[1:]...)
	cmd := exec.Command(bin, full...)
	// Its own process group, so the cleanup ends node and anything it forks.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &ringBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case err := <-exited:
			exited <- err
			log := out.String()
			if strings.Contains(log, "EADDRINUSE") {
				return "", errPortTaken
			}
			return "", fmt.Errorf("exited before answering (%v):\n%s", err, tail([]byte(log), 20))
		default:
		}
		if resp, err := client.Get(base + "/"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			stop()
			return "", fmt.Errorf("did not answer on %s within %s:\n%s", base, startTimeout, tail([]byte(out.String()), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("prism %s answered on %s after %s", args[0], base, time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("prism %s log tail:\n%s", args[0], tail([]byte(out.String()), 40))
		}
	})
	return base, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ringBuffer keeps the last max bytes of Prism's log.
type ringBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (r *ringBuffer) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b = append(r.b, p...)
	if over := len(r.b) - r.max; over > 0 {
		r.b = append(r.b[:0], r.b[over:]...)
	}
	return len(p), nil
}

func (r *ringBuffer) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.b)
}
