package batocera

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout bounds every command the rig runs, unless Tree.Timeout
// says otherwise.
const DefaultTimeout = 30 * time.Second

// Result is what a command run through the rig did.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// runSpec is how run starts a command.
type runSpec struct {
	timeout time.Duration
	env     []string // nil: the test process's
	dir     string   // "": the test process's
}

// run runs name with args and returns its output and exit status; it fails
// t when the command cannot start or outlives the timeout.
//
// Output goes to files, not pipes: S99userservices backgrounds the
// services it starts, and a child holding a pipe would keep Wait from
// returning. The command gets its own process group, killed as a whole
// on timeout and, for children left running, when t ends.
func run(t testing.TB, spec runSpec, name string, args ...string) Result {
	t.Helper()
	stdout, stderr := outputFile(t), outputFile(t)
	ctx, cancel := context.WithTimeout(context.Background(), spec.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = spec.env, spec.dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	res := Result{Stdout: readBack(t, stdout), Stderr: readBack(t, stderr)}
	if cmd.Process != nil {
		pgid := cmd.Process.Pid
		// What the command left running (a service S99 started) is
		// ours to stop; ESRCH just means nothing was left.
		t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("%s %q: no end within %v\nstdout:\n%s\nstderr:\n%s", name, args, spec.timeout, res.Stdout, res.Stderr)
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", name, args, err)
	}
	return res
}

func outputFile(t testing.TB) *os.File {
	t.Helper()
	f, err := os.CreateTemp("", "cabinet-batocera-out-")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(f.Name()) // the descriptor is all we need
	return f
}

func readBack(t testing.TB, f *os.File) string {
	t.Helper()
	defer f.Close()
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatalf("read command output: %v", err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read command output: %v", err)
	}
	return string(b)
}
