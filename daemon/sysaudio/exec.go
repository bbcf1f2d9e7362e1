package sysaudio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"
)

// maxStderr bounds the stderr Exec keeps for an ExitError.
const maxStderr = 1 << 10

// waitDelay is how long Exec waits for output pipes once the command is
// gone or killed: a grandchild holding them must not hold the caller.
const waitDelay = 500 * time.Millisecond

// ExitError is a command that ran and exited non-zero.
type ExitError struct {
	Code   int
	Stderr string // at most 1 KiB of it
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the command's exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// Exec runs name with args, without a shell and with the caller's
// environment, and returns at most MaxOutput+1 bytes of its stdout (the
// caller sees the overflow; the rest is drained so the command never
// blocks on a full pipe). A non-zero exit is an *ExitError; when ctx ends
// first, the command and everything it started are killed and the error
// is ctx's.
func Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	stdout := &capped{max: MaxOutput + 1}
	stderr := &capped{max: maxStderr}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	ownProcessGroup(cmd)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.b, nil
	case ctx.Err() != nil:
		return stdout.b, ctx.Err()
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return stdout.b, &ExitError{Code: exit.ExitCode(), Stderr: string(stderr.b)}
	}
	return stdout.b, err
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	b   []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// commandError says what went wrong with the command op, run with
// ctx bounded by timeout.
func commandError(ctx context.Context, op string, timeout time.Duration, err error) error {
	var coded interface{ ExitCode() int }
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return fmt.Errorf("%s: %w (limit %v)", op, ErrTimeout, timeout)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return fmt.Errorf("%s: %w", op, ErrMissing)
	case errors.As(err, &coded):
		return fmt.Errorf("%s: exit status %d%s", op, coded.ExitCode(), stderrOf(err))
	}
	return fmt.Errorf("%s: %w", op, err)
}

// stderrOf is ": <what the command said>" from an ExitError, or "".
func stderrOf(err error) string {
	var e *ExitError
	if !errors.As(err, &e) {
		return ""
	}
	s := strings.TrimSpace(e.Stderr)
	if s == "" {
		return ""
	}
	return ": " + snippet([]byte(s))
}

// commandLine is how errors name a call.
func commandLine(bin string, args []string) string {
	return strings.Join(append([]string{bin}, args...), " ")
}
