package osupdate

import (
	"context"

	"github.com/batocera-cabinet/cabinet/daemon/sysexec"
)

// ExitError is a command that ran and exited non-zero.
type ExitError = sysexec.ExitError

// Exec runs a check command (sysexec.Run, at most MaxOutput+1 bytes of
// stdout: the caller sees an overflow).
func Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	return sysexec.Run(ctx, MaxOutput+1, name, args...)
}

// stderrOf is ": <what the command said>" from an ExitError, or "".
func stderrOf(err error) string {
	if s := sysexec.Stderr(err); s != "" {
		return ": " + snippet([]byte(s))
	}
	return ""
}
