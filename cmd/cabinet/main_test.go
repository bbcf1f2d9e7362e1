package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs the switchboard in-process.
func runCmd(t *testing.T, environ []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Environ: environ})
	return code, out.String(), errb.String()
}

func TestSwitchboard(t *testing.T) {
	if code, _, stderr := runCmd(t, nil, "frobnicate"); code != exitUsage || !strings.Contains(stderr, `unknown command "frobnicate"`) || !strings.Contains(stderr, "Commands:") {
		t.Errorf("unknown command: code %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCmd(t, nil); code != exitUsage {
		t.Errorf("no command: code %d, want %d", code, exitUsage)
	}
	for _, c := range commands() {
		code, stdout, stderr := runCmd(t, nil, c.name, "-h")
		if code != exitOK {
			t.Errorf("%s -h: code %d (stderr %q)", c.name, code, stderr)
		}
		if !strings.Contains(stderr, "Usage: cabinet "+c.name) || stdout != "" {
			t.Errorf("%s -h: stdout %q stderr %q", c.name, stdout, stderr)
		}
	}
	if code, _, stderr := runCmd(t, nil, "version", "--bogus"); code != exitUsage || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad flag: code %d stderr %q", code, stderr)
	}
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runCmd(t, nil, "version")
	if code != 0 || !strings.HasPrefix(stdout, "cabinet ") || !strings.Contains(stdout, "go1.") || !strings.Contains(stdout, "linux/") {
		t.Errorf("version: %d %q", code, stdout)
	}
}

func TestConfigCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := write("typo.conf", "cabinet.mqtt.brokr=x\ncabinet.mqtt.password=hunter2secret\n")
	code, stdout, stderr := runCmd(t, []string{"CABINET_CONFIG=" + typo}, "config")
	if code != exitOK || !strings.Contains(stderr, "did you mean cabinet.mqtt.broker?") {
		t.Errorf("typo: code %d stderr %q", code, stderr)
	}
	if strings.Contains(stdout+stderr, "hunter2secret") || !strings.Contains(stdout, "cabinet.mqtt.password=********") {
		t.Errorf("secret not masked:\n%s", stdout)
	}
	if !lineWith(stdout, "cabinet.mqtt.password=********", "# file: "+typo+" line 2") {
		t.Errorf("no provenance for the file value:\n%s", stdout)
	}
	bad := write("bad.conf", "cabinet.tracker.min_session_seconds=abc\n")
	code, _, stderr = runCmd(t, []string{"CABINET_CONFIG=" + bad}, "config")
	if code != exitError || !strings.Contains(stderr, "cabinet.tracker.min_session_seconds") {
		t.Errorf("invalid: code %d stderr %q", code, stderr)
	}
	code, stdout, _ = runCmd(t, []string{"CABINET_CONFIG=" + typo, "CABINET_NAME=Env Name"}, "config", "--json", "--set", "cabinet.log.level=debug")
	if code != exitOK || !strings.Contains(stdout, `"source": "env: CABINET_NAME"`) || !strings.Contains(stdout, `"source": "flag: --set"`) {
		t.Errorf("json: %d %s", code, stdout)
	}
}

// lineWith reports whether one line of text contains every part.
func lineWith(text string, parts ...string) bool {
	for _, line := range strings.Split(text, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
