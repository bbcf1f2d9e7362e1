// Package osupdate asks Batocera whether a newer Batocera is published,
// with the same command EmulationStation's update notification runs.
//
// Since June 2026 ES runs "batocera-upgrade --check-upgrade"; before, it
// ran "batocera-config canupdate". Both fetch
// <updates.url or https://updates.batocera.org>/<board>/<updates.type>/last/batocera.version
// with wget, print that version on one line and exit 0 when it differs
// from the installed /usr/share/batocera/batocera.version, 12 when it is
// the same, and 2 when the server cannot be reached. Two traps, both
// handled here:
//
//   - Only a batocera-upgrade whose text has --check-upgrade may be run:
//     an older one takes its first argument as a download URL and starts
//     an upgrade. Otherwise the check falls back to batocera-config.
//   - batocera-upgrade --check-upgrade stores wget's result with
//     "local available=$(wget ...)", which hides wget's failure: offline
//     it prints an empty line and exits 0, "update available". An empty
//     answer is therefore ErrOffline, never an update.
//
// "Available" is Batocera's: the published version differs from the
// installed one, which includes a downgrade; comparing versions is the
// caller's business (it knows the installed version).
package osupdate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"time"
)

const (
	// DefaultUpgrade is where Batocera installs batocera-upgrade.
	DefaultUpgrade = "/usr/bin/batocera-upgrade"
	// DefaultConfig is where Batocera installs batocera-config.
	DefaultConfig = "/usr/bin/batocera-config"
	// DefaultTimeout bounds one check: it goes to the network, and the
	// scripts call wget without a timeout of its own.
	DefaultTimeout = 60 * time.Second
	// MaxOutput bounds what one check may print; more is an error.
	MaxOutput = 4 << 10
	// MaxVersion bounds a version string.
	MaxVersion = 64
	// maxScript bounds how much of batocera-upgrade is read to see whether
	// it knows --check-upgrade (Batocera's is about 18 KB).
	maxScript = 1 << 20
	// checkFlag is the option a batocera-upgrade must know to be run.
	checkFlag = "--check-upgrade"
)

// The exit statuses of both check commands.
const (
	exitUpdate    = 0  // the published version differs
	exitUpToDate  = 12 // the published version is the installed one
	exitNoServer  = 2  // the server could not be reached or answered junk
	exitNoCommand = 10 // batocera-config does not know canupdate
)

// Errors callers can test with errors.Is.
var (
	// ErrOffline: the update server could not be reached, did not answer
	// in time, or answered nothing.
	ErrOffline = errors.New("the Batocera update server could not be reached; " +
		"check the cabinet's network connection (and updates.url in batocera.conf, if set)")
	// ErrUnsupported: this Batocera has neither check command.
	ErrUnsupported = errors.New("this Batocera has no update check Cabinet knows " +
		"(batocera-upgrade --check-upgrade or batocera-config canupdate); check for updates in Batocera's menu")
	// ErrMalformed: the answer is not a version.
	ErrMalformed = errors.New("unexpected output")
)

// Result is what the update server publishes for this cabinet.
type Result struct {
	Latest    string // the published version, such as "43 2026/05/14 10:00": printable, at most MaxVersion bytes
	Available bool   // Latest differs from the installed version
}

// Checker runs Batocera's update check. Its zero value uses the default
// paths, DefaultTimeout and Exec. It holds no state.
type Checker struct {
	Upgrade string        // path of batocera-upgrade; "" is DefaultUpgrade
	Config  string        // path of batocera-config, the fallback; "" is DefaultConfig
	Timeout time.Duration // bound of one check; 0 is DefaultTimeout
	// Run runs a command and returns its stdout; a non-zero exit is an
	// error with an ExitCode() int method (see ExitError). nil is Exec.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Check asks the update server for the published version.
func (c *Checker) Check(ctx context.Context) (Result, error) {
	bin, arg, err := c.command()
	if err != nil {
		return Result{}, err
	}
	op := bin + " " + arg
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", op, err)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	run := c.Run
	if run == nil {
		run = Exec
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := run(ctx, bin, arg)
	code := exitUpdate
	if err != nil {
		var coded interface{ ExitCode() int }
		switch {
		case errors.Is(err, context.Canceled):
			return Result{}, fmt.Errorf("%s: %w", op, err)
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			return Result{}, fmt.Errorf("%s: %w (no answer within %v)", op, ErrOffline, timeout)
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
			return Result{}, fmt.Errorf("%s: %w", op, ErrUnsupported)
		case !errors.As(err, &coded):
			return Result{}, fmt.Errorf("%s: %w", op, err)
		}
		code = coded.ExitCode()
	}
	if len(out) > MaxOutput {
		return Result{}, fmt.Errorf("%s: %w: more than %d bytes", op, ErrMalformed, MaxOutput)
	}
	res, perr := parseCheck(out, code)
	if perr != nil {
		return Result{}, fmt.Errorf("%s: %w%s", op, perr, stderrOf(err))
	}
	return res, nil
}

// command is the check to run: batocera-upgrade when it knows
// --check-upgrade, else batocera-config canupdate.
func (c *Checker) command() (bin, arg string, err error) {
	upgrade, config := c.Upgrade, c.Config
	if upgrade == "" {
		upgrade = DefaultUpgrade
	}
	if config == "" {
		config = DefaultConfig
	}
	if knowsCheck(upgrade) {
		return upgrade, checkFlag, nil
	}
	if executable(config) {
		return config, "canupdate", nil
	}
	return "", "", fmt.Errorf("check for a Batocera update (neither %s %s nor %s canupdate): %w",
		upgrade, checkFlag, config, ErrUnsupported)
}

// knowsCheck reports whether the script at path is executable and
// mentions --check-upgrade.
func knowsCheck(path string) bool {
	if !executable(path) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxScript))
	return err == nil && bytes.Contains(b, []byte(checkFlag))
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
