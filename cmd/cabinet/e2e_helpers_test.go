package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// The end-to-end tests (e2e_*_test.go) run the built binary as a user or an
// MCP client would: as a subprocess, configured only by CABINET_CONFIG.

// builtCabinet is the binary the end-to-end tests share: built (or taken
// from the cache shared with the other test packages) on first use, and
// released by TestMain.
var builtCabinet cabinettest.Lazy

// releaseCabinet is the binary built as releases are (packaging/release's tags), for the tests
// of what a cabinet runs.
var releaseCabinet = cabinettest.Lazy{Flags: []string{"-tags", release.Tags}}

func TestMain(m *testing.M) {
	if os.Getenv(reaperEnv) == "1" {
		os.Exit(reap(os.Args[1:]))
	}
	cabinettest.ShortParallel()
	code := m.Run()
	builtCabinet.Close()
	releaseCabinet.Close()
	os.Exit(code)
}

// cabinetBinary is the binary's path.
func cabinetBinary(t testing.TB) string { return builtCabinet.Path(t) }

// simCabinet starts the simulator in-process and writes a cabinet.conf that
// points every command at it.
func simCabinet(t *testing.T, opts simulator.Options) (*simulator.Cabinet, string) {
	t.Helper()
	cab, err := simulator.Start(opts)
	if err != nil {
		t.Fatalf("start the simulator: %v", err)
	}
	t.Cleanup(func() { cab.Close() })
	conf, err := cab.WriteConfig(t.TempDir())
	if err != nil {
		t.Fatalf("write the simulator's config: %v", err)
	}
	return cab, conf
}

// installCabinet is a simulated cabinet with its fake RomM, ES started, and
// cabinet.library.allow_install on: the library install tests' cabinet. It
// returns the cabinet and the environment of commands run against it.
func installCabinet(t *testing.T) (*simulator.Cabinet, []string) {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{RomM: true})
	if err != nil {
		t.Fatalf("start the simulator: %v", err)
	}
	t.Cleanup(func() { cab.Close() })
	cab.ES.Start()
	conf, err := cab.WriteConfig(t.TempDir(), "cabinet.library.allow_install=1")
	if err != nil {
		t.Fatalf("write the simulator's config: %v", err)
	}
	return cab, configEnv(conf)
}

// configEnv is the environment of a command run against conf: this
// process's, without the CABINET_* and MCPCHECK_TOKEN variables that would
// change what the test sees.
func configEnv(conf string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CABINET_") && !strings.HasPrefix(kv, "CABINET_REQUIRE_PEERS=") ||
			strings.HasPrefix(kv, "MCPCHECK_TOKEN=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CABINET_CONFIG="+conf)
}

// runBinary runs the binary to completion under a deadline and returns its
// exit code and output.
func runBinary(t testing.TB, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cabinetBinary(t), args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatalf("cabinet %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// waitRetroArch waits until the simulator's RetroArch satisfies cond (it
// signals every change).
func waitRetroArch(t *testing.T, cab *simulator.Cabinet, what string, cond func(fakeretroarch.Snapshot) bool) {
	t.Helper()
	if s, err := cab.RetroArch.WaitFor(cabinettest.Context(t), cond); err != nil {
		t.Fatalf("waiting for %s: %v (RetroArch %+v)", what, err, s)
	}
}

// waitMenu waits until the simulated ES runs no game (it signals nothing:
// looked at every 20 ms).
func waitMenu(t *testing.T, cab *simulator.Cabinet) {
	t.Helper()
	cabinettest.Await(t, "ES to return to the menu", nil, func() (bool, string) {
		g, running := cab.ES.Running()
		return !running, "ES still runs " + g.Name
	})
}

// stopProcess sends sig and waits for the process to end, killing it if it
// has not within cabinettest.Deadline; it returns Wait's error.
// startSimulate runs `cabinet simulate --write-config <dir> args…` from bin
// and waits until it is ready. It returns the environment that points the
// other commands at the simulator's config, its output, and stop (Ctrl-C and
// wait), which the caller defers: a test may start two simulators in turn.
func startSimulate(t *testing.T, bin string, args ...string) (env []string, out *cabinettest.LogBuffer, stop func()) {
	t.Helper()
	dir := t.TempDir()
	sim := exec.Command(bin, append([]string{"simulate", "--write-config", dir}, args...)...)
	env = configEnv(filepath.Join(dir, simulator.ConfigFile))
	sim.Env = env
	out = &cabinettest.LogBuffer{}
	sim.Stdout = out
	if err := sim.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sim.Wait() }()
	stop = func() { stopProcess(t, sim, syscall.SIGINT, done) }
	out.AwaitLine(t, "the simulator to be ready", "Stop with Ctrl-C")
	return env, out, stop
}

func stopProcess(t testing.TB, cmd *exec.Cmd, sig syscall.Signal, done <-chan error) error {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signal %v: %v", sig, err)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(cabinettest.Deadline):
		cmd.Process.Kill()
		<-done
		t.Errorf("%s did not stop within %v of %v", cmd.Path, cabinettest.Deadline, sig)
		return errors.New("killed")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
