// Package sysexec runs the cabinet's own tools (batocera-audio,
// batocera-upgrade…) for the daemon: no shell, bounded output, a deadline
// that kills the tool and everything it started.
package sysexec

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxStderr bounds the stderr Run keeps for an ExitError.
const maxStderr = 1 << 10

// waitDelay is how long Run waits for output pipes once the command is
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

// Run runs name with args, without a shell and with the caller's
// environment, and returns at most limit bytes of its stdout (the rest is
// drained so the command never blocks on a full pipe; a caller that must
// see an overflow passes its maximum plus one). Its stdout is a pipe, not a
// terminal (batocera-upgrade answers scripts differently from people). A
// non-zero exit is an *ExitError; when ctx ends first, the command and
// everything it started are killed and the error is ctx's.
func Run(ctx context.Context, limit int, name string, args ...string) ([]byte, error) {
	stdout := &capped{max: limit}
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

// Stderr is what the command said on stderr, trimmed, when err is an
// ExitError; "" otherwise.
func Stderr(err error) string {
	var e *ExitError
	if !errors.As(err, &e) {
		return ""
	}
	return strings.TrimSpace(e.Stderr)
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

// MaxSnippet bounds the quoted output an error carries.
const MaxSnippet = 200

// Snippet quotes at most MaxSnippet characters of b (output of a tool, for
// an error message), escapes included,
// and says how long b was when it cut.
func Snippet(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		q := strconv.Quote(string(b[i : i+n]))
		if r == utf8.RuneError && n == 1 {
			q = fmt.Sprintf(`"\x%02x"`, b[i])
		}
		q = q[1 : len(q)-1]
		if sb.Len()+len(q) > MaxSnippet {
			fmt.Fprintf(&sb, `"… (%d bytes)`, len(b))
			return sb.String()
		}
		sb.WriteString(q)
		i += n
	}
	sb.WriteByte('"')
	return sb.String()
}
