package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The peak memory of a command the tests run. The kernel carries the largest resident size of
// the memory a process replaced at exec into its ru_maxrss, and os/exec starts a child sharing
// the test process's memory until that exec: a child of the test process reports the test's own
// peak (hundreds of MiB once it built hostile answers), whatever the child used. So the command
// runs under a reaper, this test binary started afresh (reaperEnv set), whose small memory is all
// its child inherits; the reaper prints the child's ru_maxrss on its last line of stderr.

const (
	reaperEnv    = "CABINET_TEST_REAPER"
	reaperPrefix = "cabinet-test-maxrss: "
)

// reap runs args as a command with this process's standard streams, prints its peak RSS and
// returns its exit code.
func reap(args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, reaperEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "reaper: %v\n", err)
		return 125
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		fmt.Fprintf(os.Stderr, "\n%s%d\n", reaperPrefix, ru.Maxrss<<10)
	}
	return cmd.ProcessState.ExitCode()
}

// runMeasured runs the cabinet binary with env and args under the reaper, and returns its exit
// code, output and peak RSS in bytes.
func runMeasured(t testing.TB, env []string, args ...string) (code int, stdout, stderr string, peak int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{builtCabinet.Path(t)}, args...)...)
	cmd.Env = append(append([]string(nil), env...), reaperEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("cabinet %s: %v", strings.Join(args, " "), err)
	}
	stderr = errb.String()
	i := strings.LastIndex(stderr, "\n"+reaperPrefix)
	if i < 0 {
		t.Fatalf("cabinet %s: the reaper printed no peak:\n%s", strings.Join(args, " "), lastLines(stderr, 10))
	}
	peak, perr := strconv.ParseInt(strings.TrimSpace(stderr[i+1+len(reaperPrefix):]), 10, 64)
	if perr != nil {
		t.Fatalf("the reaper's peak: %v", perr)
	}
	return cmd.ProcessState.ExitCode(), out.String(), stderr[:i], peak
}
