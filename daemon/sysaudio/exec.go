package sysaudio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/sysexec"
)

// ExitError is a command that ran and exited non-zero.
type ExitError = sysexec.ExitError

// Exec runs batocera-audio (sysexec.Run, at most MaxOutput+1 bytes of
// stdout: the caller sees an overflow).
func Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	return sysexec.Run(ctx, MaxOutput+1, name, args...)
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
	if s := sysexec.Stderr(err); s != "" {
		return ": " + snippet([]byte(s))
	}
	return ""
}

// commandLine is how errors name a call.
func commandLine(bin string, args []string) string {
	return strings.Join(append([]string{bin}, args...), " ")
}
