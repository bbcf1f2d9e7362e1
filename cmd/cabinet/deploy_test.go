package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/deploy"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realdropbear"
)

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		args       []string
		positional []string
		sets       string
	}{
		{[]string{"root@cab"}, []string{"root@cab"}, ""},
		{[]string{"root@cab", "--set", "a=1", "--set", "b=2"}, []string{"root@cab"}, "a=1 b=2"},
		{[]string{"--set", "a=1", "root@cab", "--set", "b=2"}, []string{"root@cab"}, "a=1 b=2"},
		{[]string{"--set", "a=1", "--", "-odd", "x"}, []string{"-odd", "x"}, "a=1"},
		{nil, nil, ""},
	}
	for _, tt := range tests {
		var sets setFlag
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.Var(&sets, "set", "")
		got, err := parseInterspersed(fs, tt.args)
		if err != nil || strings.Join(got, " ") != strings.Join(tt.positional, " ") || sets.String() != tt.sets {
			t.Errorf("%q: got %q, sets %q, %v; want %q, %q", tt.args, got, sets.String(), err, tt.positional, tt.sets)
		}
	}
}

func TestDeployUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"deploy"}, "name one cabinet"},
		{[]string{"deploy", "a", "b"}, "name one cabinet"},
		{[]string{"deploy", "cab", "--save-secret", "cabinet.mqtt.password=hunter2"}, "never taken from the command line"},
		{[]string{"deploy", "cab", "--save", "cabinet.mqtt.broker"}, "want key=value"},
	}
	for _, tt := range tests {
		code, _, stderr := runCmd(t, nil, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.want)
		}
	}
}

// TestDeployCommand runs `cabinet deploy` through the switchboard against
// a real Dropbear, the ssh client named by CABINET_SSH_COMMAND, with a
// stand-in binary whose exit status deploy passes on.
func TestDeployCommand(t *testing.T) {
	s := realdropbear.Start(t, realdropbear.Options{})
	root := t.TempDir()
	bin := filepath.Join(t.TempDir(), "fake-cabinet")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"remote: $*\"\nread secret\n[ \"$secret\" = s3cret ] || exit 9\nexit 4\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	environ := []string{"CABINET_SSH_COMMAND=" + strings.Join(s.SSHCommand(), " ")}
	var out, errb strings.Builder
	code := run(t.Context(), []string{"deploy", s.Host(), "--set", deploy.RootKey + "=" + root, "--binary", bin, "--save-secret", "cabinet.mqtt.password"},
		&env{Stdin: strings.NewReader("s3cret\n"), Stdout: &out, Stderr: &errb, Environ: environ})
	if code != 4 {
		t.Errorf("exit %d, want the remote's 4\nstderr:\n%s", code, errb.String())
	}
	if want := "remote: install --set cabinet.paths.root=" + root + " --save-secret cabinet.mqtt.password"; !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
	if !strings.Contains(errb.String(), "cabinet deploy: install on cabinet failed (exit status 4)") {
		t.Errorf("no one-line summary in stderr:\n%s", errb.String())
	}
}
