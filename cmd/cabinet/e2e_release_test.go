package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestReleaseBuildDemoSimulate builds the binary as releases are built
// (-tags release) and checks that demo and simulate, left out of it, exit 2
// with one line saying where they run (-h: the same line, exit 0), and that
// the usage text says so.
func TestReleaseBuildDemoSimulate(t *testing.T) {
	bin, err := cabinettest.Compile("-tags", release.Tags)
	if err != nil {
		t.Fatalf("build the release-tagged binary: %v", err)
	}
	defer bin.Close()
	run := func(args ...string) (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin.Path, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("cabinet %s: %v", strings.Join(args, " "), err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	}

	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"demo"}, exitUsage},
		{[]string{"demo", "--once", "--speed", "5"}, exitUsage},
		{[]string{"demo", "-h"}, exitOK},
		{[]string{"simulate"}, exitUsage},
		{[]string{"simulate", "--write-config", dir, "--hooks"}, exitUsage},
		{[]string{"simulate", "--help"}, exitOK},
	} {
		name := tc.args[0]
		want := "cabinet " + name + ": runs from a checkout of Cabinet's source (go run ./cmd/cabinet " + name + "), not from a release build\n"
		code, stdout, stderr := run(tc.args...)
		if code != tc.code || stdout != "" || stderr != want {
			t.Errorf("cabinet %s: exit %d, stdout %q, stderr %q; want exit %d, no stdout, stderr %q",
				strings.Join(tc.args, " "), code, stdout, stderr, tc.code, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("simulate --write-config wrote %d files in a release build, want none", len(ents))
	}

	code, _, usage := run("-h")
	if code != exitOK {
		t.Errorf("cabinet -h: exit %d, want 0", code)
	}
	for _, name := range []string{"demo", "simulate"} {
		found := false
		for _, line := range strings.Split(usage, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), name+" ") {
				found = strings.HasSuffix(line, "(from a source checkout only)")
			}
		}
		if !found {
			t.Errorf("cabinet -h does not say that %s runs from a source checkout only:\n%s", name, usage)
		}
	}
	if code, stdout, stderr := run("version"); code != exitOK || !strings.HasPrefix(stdout, "cabinet ") {
		t.Errorf("cabinet version: exit %d, stdout %q, stderr %q; want the version", code, stdout, stderr)
	}
}
