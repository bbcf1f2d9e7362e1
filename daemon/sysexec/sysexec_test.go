package sysexec

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	out, err := Run(context.Background(), 8, "/bin/sh", "-c", "printf '0123456789'; printf 'oops\n' >&2; exit 3")
	var e *ExitError
	if !errors.As(err, &e) || e.Code != 3 || Stderr(err) != "oops" {
		t.Errorf("exit: %v (stderr %q), want exit status 3 saying oops", err, Stderr(err))
	}
	if string(out) != "01234567" {
		t.Errorf("output %q, want the first 8 bytes", out)
	}
	if out, err := Run(context.Background(), 64, "/bin/sh", "-c", "echo fine"); err != nil || string(out) != "fine\n" || Stderr(err) != "" {
		t.Errorf("success: %q, %v", out, err)
	}
}

// A deadline kills the tool and what it started (a sleep that holds the
// pipes would otherwise hold the caller).
func TestRunDeadlineKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, 64, "/bin/sh", "-c", "sleep 30 & sleep 30")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("returned after %v", d)
	}
}

func TestRunMissing(t *testing.T) {
	_, err := Run(context.Background(), 64, "/nonexistent/batocera-audio")
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("err %v, want no such file", err)
	}
}
