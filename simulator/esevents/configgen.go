package esevents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Configgen events: the first argument of every configgen user script.
const (
	GameStart = "gameStart"
	GameStop  = "gameStop"
)

// Configgen runs Batocera configgen's user scripts the way emulatorlauncher.py's
// callExternalScripts does: every file with an executable bit under
// /usr/share/batocera/configgen/scripts and /userdata/system/scripts (recursively) is called with
// a real argv [script, gameStart|gameStop, system, emulator, core, rom], one after the other,
// blocking the launch. The zero value uses a real Batocera's paths.
type Configgen struct {
	// Root is prepended to the two script directories; "" means "/".
	Root string
	// Dir is the scripts' working directory (configgen inherits ES's); default <Root>/userdata.
	Dir string
	// Home is $HOME; default <Root>/userdata/system.
	Home string
	// Env is added after the inherited environment and HOME.
	Env []string
	// Stdout and Stderr receive the scripts' output (configgen's own, which ES sends to
	// es_launch_stdout.log / es_launch_stderr.log). nil discards it.
	Stdout, Stderr io.Writer
}

// Run calls the scripts for event (GameStart or GameStop) and returns when the last one has
// exited. Like configgen it walks the system directory then the user directory on gameStart, and
// the reverse on gameStop. Unlike configgen, which takes os.listdir order, each directory is
// walked in name order so tests are deterministic. A script's exit status is ignored; a script
// that cannot be executed (no #! line, for instance) stops the walk with an error, as the Python
// exception aborts the launch on Batocera. Cancelling ctx kills the running script's process group.
func (c *Configgen) Run(ctx context.Context, event, system, emulator, core, rom string) error {
	dirs := []string{c.under(ConfiggenSystemScriptsDir), c.under(ConfiggenUserScriptsDir)}
	switch event {
	case GameStart:
	case GameStop:
		dirs[0], dirs[1] = dirs[1], dirs[0]
	default:
		return fmt.Errorf("configgen scripts: unknown event %q, want %q or %q", event, GameStart, GameStop)
	}
	args := []string{event, system, emulator, core, rom}
	for _, dir := range dirs {
		if err := c.walk(ctx, dir, args); err != nil {
			return fmt.Errorf("configgen scripts %s: %w", event, err)
		}
	}
	return nil
}

// ScriptDirs returns the two directories Run walks, in gameStart order.
func (c *Configgen) ScriptDirs() []string {
	return []string{c.under(ConfiggenSystemScriptsDir), c.under(ConfiggenUserScriptsDir)}
}

func (c *Configgen) under(rel string) string {
	root := c.Root
	if root == "" {
		root = "/"
	}
	return filepath.Join(root, rel)
}

// walk is callExternalScripts: is_dir follows symlinks (a symlink loop ends, as in Python, when
// stat fails with ELOOP or ENAMETOOLONG), everything else with an executable bit for us is run.
func (c *Configgen) walk(ctx context.Context, dir string, args []string) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil
	}
	entries, err := os.ReadDir(dir) // sorted by name: a deterministic stand-in for os.listdir
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			if err := c.walk(ctx, path, args); err != nil {
				return err
			}
			continue
		}
		if unix.Access(path, unix.X_OK) != nil {
			continue
		}
		if err := c.call(ctx, path, args); err != nil {
			return err
		}
	}
	return nil
}

// call is subprocess.call([script, *args]): a direct execve, no shell.
func (c *Configgen) call(ctx context.Context, path string, args []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = c.Dir
	if cmd.Dir == "" {
		cmd.Dir = c.under("userdata")
	}
	home := c.Home
	if home == "" {
		home = c.under("userdata/system")
	}
	cmd.Env = append(append(os.Environ(), "HOME="+home), c.Env...)
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A background child that keeps a piped Stdout/Stderr open would otherwise hold Wait forever.
	cmd.WaitDelay = 5 * time.Second

	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("run %s: %w", path, ctx.Err())
	case err == nil, errors.As(err, &exit), errors.Is(err, exec.ErrWaitDelay):
		return nil // configgen ignores the exit status
	default:
		return fmt.Errorf("run %s: %w", path, err)
	}
}
