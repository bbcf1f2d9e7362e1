package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestSecretLines(t *testing.T) {
	keys := []string{"cabinet.mqtt.password", "cabinet.mcp.token"}
	tests := []struct {
		name, in string
		want     []string
		wantErr  string
	}{
		{"one per line", "s3cret\nother one\n", []string{"s3cret", "other one"}, ""},
		{"crlf", "s3cret\r\nx\r\n", []string{"s3cret", "x"}, ""},
		{"last line unterminated", "s3cret\nx", []string{"s3cret", "x"}, ""},
		{"extra lines ignored", "a\nb\nc\n", []string{"a", "b"}, ""},
		{"too few", "s3cret\n", nil, "ended after 1 of 2 secrets"},
		{"none", "", nil, "ended after 0 of 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secretLines(strings.NewReader(tt.in), keys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows a secret: %v", err)
				}
				return
			}
			if err != nil || strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// openPTY opens a pseudo-terminal pair: the master is the "keyboard and
// screen", the slave the terminal the prompt runs on.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestPromptSecret types a secret on a real pseudo-terminal: the prompt
// shows, the secret does not, and the terminal echoes again afterwards.
func TestPromptSecret(t *testing.T) {
	master, slave := openPTY(t)
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	screen := make(chan string, 64)
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				screen <- string(buf[:n])
			}
			if err != nil {
				close(screen)
				return
			}
		}
	}()
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := promptSecret(context.Background(), slave, bufio.NewReader(slave), "cabinet.mqtt.password")
		done <- result{v, err}
	}()
	var seen strings.Builder
	wait := func(what string) {
		t.Helper()
		deadline := time.After(cabinettest.Deadline)
		for !strings.Contains(seen.String(), what) {
			select {
			case s := <-screen:
				seen.WriteString(s)
			case <-deadline:
				t.Fatalf("the terminal never showed %q; it shows %q", what, seen.String())
			}
		}
	}
	wait("cabinet.mqtt.password (not shown): ") // echo is off once the prompt shows
	if _, err := master.Write([]byte("hunter2\n")); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(cabinettest.Deadline):
		t.Fatal("promptSecret did not return")
	}
	if r.err != nil || r.v != "hunter2" {
		t.Fatalf("got %q, %v; want hunter2", r.v, r.err)
	}
	// The newline promptSecret prints after the answer; had the terminal
	// echoed, the secret would be before it.
	wait("\n")
	if strings.Contains(seen.String(), "hunter2") {
		t.Errorf("the terminal echoed the secret: %q", seen.String())
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag {
		t.Errorf("terminal flags %#x after the prompt, %#x before", after.Lflag, before.Lflag)
	}
}

// TestPromptSecretInterrupted gives the terminal back when the context
// ends before an answer (Ctrl-C).
func TestPromptSecretInterrupted(t *testing.T) {
	_, slave := openPTY(t)
	before, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := promptSecret(ctx, slave, bufio.NewReader(slave), "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	after, _ := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if after.Lflag&unix.ECHO != before.Lflag&unix.ECHO {
		t.Errorf("echo left %v", after.Lflag&unix.ECHO != 0)
	}
}

func TestIsTerminal(t *testing.T) {
	_, slave := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	tests := []struct {
		name string
		in   io.Reader
		want bool
	}{
		{"pty", slave, true},
		{"pipe", r, false},
		{"reader", strings.NewReader("x"), false},
	}
	for _, tt := range tests {
		if got := IsTerminal(tt.in); got != tt.want {
			t.Errorf("%s: IsTerminal = %v, want %v", tt.name, got, tt.want)
		}
	}
}
