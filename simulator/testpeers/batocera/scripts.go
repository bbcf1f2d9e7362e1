package batocera

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// batoceraPath finds the absolute paths the scripts use that belong to the
// Batocera root: /usr/..., /userdata/..., /etc/..., /var/..., where a path
// starts (line start, blank, quote, '=', '(' or a redirection). /bin/bash
// in the #! line and /dev/null stay: the host's are the same thing.
var batoceraPath = regexp.MustCompile(`(?m)(^|[\s"'=(<>])(/(?:usr|userdata|etc|var)/)`)

// rewritePaths is script with each Batocera path moved under root.
func rewritePaths(script []byte, root string) []byte {
	return batoceraPath.ReplaceAll(script, []byte("${1}"+root+"${2}"))
}

// Services runs the tree's real batocera-services with args under bash
// (as Batocera's ES and users do) and returns its stdout; it fails t when
// the script exits non-zero. Its stderr (warnings such as "Invalid service
// name") is logged.
func (tr *Tree) Services(t testing.TB, args ...string) string {
	t.Helper()
	r := tr.Run(t, "bash", append([]string{tr.Path("usr/bin/batocera-services")}, args...)...)
	if r.ExitCode != 0 {
		t.Fatalf("batocera-services %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.ExitCode, r.Stdout, r.Stderr)
	}
	if r.Stderr != "" {
		t.Logf("batocera-services %q stderr:\n%s", args, r.Stderr)
	}
	return r.Stdout
}

// S99 runs the tree's real S99userservices with action ("start" or
// "stop") under bash, as init does, and returns its stdout. Its exit
// status means nothing: the script ends with `test "${1}" = "stop" &&
// wait`, so `start` exits 1. `start` backgrounds each enabled service and
// returns without waiting for them (wait on what the service does);
// `stop` returns once every stop call it backgrounded has ended. Services
// still running when t ends are killed.
func (tr *Tree) S99(t testing.TB, action string) string {
	t.Helper()
	r := tr.Run(t, "bash", tr.Path("etc/init.d/S99userservices"), action)
	if r.Stderr != "" {
		t.Logf("S99userservices %s stderr:\n%s", action, r.Stderr)
	}
	return r.Stdout
}

// SettingsGet runs the tree's real batocera-settings-get for key, as the
// scripts do (no -f): the value and true, or "" and false when the tool
// exits non-zero (key absent, or no batocera.conf).
func (tr *Tree) SettingsGet(t testing.TB, key string) (string, bool) {
	t.Helper()
	r := tr.Run(t, GetName, "--", key)
	if r.ExitCode != 0 {
		return "", false
	}
	return strings.TrimSuffix(r.Stdout, "\n"), true
}

// Run runs name (looked up in Env's PATH, so the tree's tools come first)
// with args, in the tree's root (Batocera's init runs in /) and with Env,
// within Timeout. It fails t only when the command cannot start or does
// not end in time.
func (tr *Tree) Run(t testing.TB, name string, args ...string) Result {
	t.Helper()
	if !strings.Contains(name, "/") {
		if p := tr.lookPath(name); p != "" {
			name = p
		}
	}
	timeout := tr.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return run(t, runSpec{timeout: timeout, env: tr.Env(), dir: tr.root}, name, args...)
}

// lookPath finds name in the tree's usr/bin, then the host's PATH: exec
// looks names up in the test process's PATH, not the child's.
func (tr *Tree) lookPath(name string) string {
	p := tr.Path("usr/bin/" + name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}
