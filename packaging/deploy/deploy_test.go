package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realdropbear"
)

// These tests deploy with the real OpenSSH client to a real Dropbear on
// loopback (simulator/realdropbear), into a fake root: the server runs on
// this machine, so the test reads what arrived "on the cabinet" directly.

func writeScript(name, body string) error {
	return os.WriteFile(name, []byte("#!/bin/sh\n"+body+"\n"), 0o755)
}

// fakeInstall writes a stand-in for the cabinet binary: run on the cabinet,
// it keeps a copy of itself, records its arguments and standard input in
// rec, writes a line to each output and exits with code.
func fakeInstall(t *testing.T, rec string, code int) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "fake-cabinet")
	body := fmt.Sprintf(`rec=%s
cp "$0" "$rec/uploaded"
printf '%%s\n' "$@" > "$rec/argv"
cat > "$rec/stdin"
echo "install: all done"
echo "install: a warning" >&2
exit %d`, Quote(rec), code)
	if err := writeScript(name, body); err != nil {
		t.Fatal(err)
	}
	return name
}

// recordingSSH wraps ssh in a script that appends each command line it is
// run with to a log, to check what deploy puts on command lines.
func recordingSSH(t *testing.T, sshCommand []string) (argv []string, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "ssh.log")
	wrapper := filepath.Join(dir, "ssh")
	if err := writeScript(wrapper, fmt.Sprintf(`printf '%%s\n' "$*" >> %s
exec ssh "$@"`, Quote(log))); err != nil {
		t.Fatal(err)
	}
	return append([]string{wrapper}, sshCommand[1:]...), log
}

// fakeRoot is a cabinet's / for cabinet.paths.root, with batocera.version
// when version is not "".
func fakeRoot(t *testing.T, version string) string {
	t.Helper()
	root := t.TempDir()
	if version != "" {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(VersionFile)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, VersionFile), []byte(version+" 2024/11/20 10:00\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

type result struct {
	code           int
	err            error
	stdout, stderr string
	took           time.Duration
}

func deploy(t *testing.T, o Options) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	o.Stdout, o.Stderr = &stdout, &stderr
	start := time.Now()
	code, err := Run(ctx, o)
	r := result{code: code, err: err, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	t.Logf("deploy: exit %d, %v\nstdout:\n%s\nstderr:\n%s", r.code, r.err, r.stdout, r.stderr)
	return r
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDeploy(t *testing.T) {
	s := realdropbear.Start(t, realdropbear.Options{})
	root := fakeRoot(t, "41")
	rec := t.TempDir()
	bin := fakeInstall(t, rec, 0)
	sshArgv, sshLog := recordingSSH(t, s.SSHCommand())
	secrets := []string{"s3cret-one", "it's s3cret $two"}
	r := deploy(t, Options{
		Host:       s.Host(),
		SSHCommand: sshArgv,
		Sets:       []string{RootKey + "=" + root, "cabinet.mqtt.broker=tcp://ha.lan:1883"},
		Saves:      []string{"cabinet.mqtt.username=cabinet user"},
		SecretKeys: []string{"cabinet.mqtt.password", "cabinet.mcp.token"},
		Binary:     bin,
		Stdin:      strings.NewReader(strings.Join(secrets, "\n") + "\n"),
	})
	if r.code != 0 || r.err != nil {
		t.Fatalf("exit %d, %v", r.code, r.err)
	}
	want, err := release.FileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := release.FileSHA256(filepath.Join(rec, "uploaded")); got != want {
		t.Errorf("the cabinet ran a binary with sha256 %s, sent %s", got, want)
	}
	if !strings.Contains(r.stderr, "copy verified: sha256 "+want) || !strings.Contains(r.stderr, "cabinet: x86_64, Batocera 41") {
		t.Errorf("progress lacks the verified hash or the cabinet's description:\n%s", r.stderr)
	}
	wantArgv := "install\n--set\ncabinet.paths.root=" + root + "\n--set\ncabinet.mqtt.broker=tcp://ha.lan:1883\n--save\ncabinet.mqtt.username=cabinet user\n--save-secret\ncabinet.mqtt.password\n--save-secret\ncabinet.mcp.token\n"
	if got := readFile(t, filepath.Join(rec, "argv")); got != wantArgv {
		t.Errorf("the cabinet ran with arguments\n%s\nwant\n%s", got, wantArgv)
	}
	if got, want := readFile(t, filepath.Join(rec, "stdin")), strings.Join(secrets, "\n")+"\n"; got != want {
		t.Errorf("install's stdin is %q, want %q", got, want)
	}
	if !strings.Contains(r.stdout, "install: all done") || !strings.Contains(r.stderr, "install: a warning") {
		t.Errorf("install's output did not stream back: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	commandLines := readFile(t, sshLog)
	for _, sec := range []string{"s3cret-one", "s3cret $two"} {
		for where, text := range map[string]string{"an ssh command line": commandLines, "deploy's stdout": r.stdout, "deploy's stderr": r.stderr, "install's arguments": readFile(t, filepath.Join(rec, "argv"))} {
			if strings.Contains(text, sec) {
				t.Errorf("secret %q appears in %s", sec, where)
			}
		}
	}
	if !strings.Contains(commandLines, "-O exit") {
		t.Errorf("deploy did not close the shared connection; ssh ran with:\n%s", commandLines)
	}
	// The copy is gone once install ran; only what install wrote stays.
	for _, name := range []string{".cabinet.deploy", ".cabinet.deploy.tmp"} {
		if _, err := os.Stat(filepath.Join(root, "userdata/system/cabinet/bin", name)); !os.IsNotExist(err) {
			t.Errorf("%s is left on the cabinet (%v)", name, err)
		}
	}
	// One login for every step (the rig's readiness check connects too,
	// but never logs in).
	if n := strings.Count(s.Log(), "auth succeeded"); n != 1 {
		t.Errorf("Dropbear saw %d logins, want 1 (multiplexed)", n)
	}
}

func TestDeployExitStatus(t *testing.T) {
	s := realdropbear.Start(t, realdropbear.Options{})
	rec := t.TempDir()
	r := deploy(t, Options{Host: s.Host(), SSHCommand: s.SSHCommand(), Sets: []string{RootKey + "=" + fakeRoot(t, "41")}, Binary: fakeInstall(t, rec, 3)})
	if r.code != 3 || r.err == nil || !strings.Contains(r.err.Error(), "install on cabinet failed (exit status 3)") {
		t.Errorf("got exit %d, %v; want 3 and a sentence", r.code, r.err)
	}
}

func TestDeployDryRun(t *testing.T) {
	s := realdropbear.Start(t, realdropbear.Options{})
	rec := t.TempDir()
	root := fakeRoot(t, "")
	r := deploy(t, Options{Host: s.Host(), SSHCommand: s.SSHCommand(), Sets: []string{RootKey + "=" + root}, Binary: fakeInstall(t, rec, 0), DryRun: true})
	if r.code != 0 || r.err != nil {
		t.Fatalf("exit %d, %v", r.code, r.err)
	}
	if got := readFile(t, filepath.Join(rec, "argv")); !strings.HasPrefix(got, "install\n--dry-run\n") {
		t.Errorf("the cabinet ran with arguments %q, want install --dry-run first", got)
	}
	for _, want := range []string{"dry run: the binary is copied to a temporary name", "dry run done: nothing was installed", "not Batocera?"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
}

// TestDeployFailures: each way of not getting in ends at once, with one
// sentence that says what to do, and never waits for an answer.
func TestDeployFailures(t *testing.T) {
	refused := realdropbear.Start(t, realdropbear.Options{RefuseKey: true})
	unknown := realdropbear.Start(t, realdropbear.Options{UnknownHostKey: true})
	closed := closedPortSSH(t, refused)
	tests := []struct {
		name string
		host string
		ssh  []string
		want string
	}{
		{"unreachable", "cabinet", closed, "cabinet refused the SSH connection: is the cabinet on and its SSH service enabled?"},
		{"refused key", refused.Host(), refused.SSHCommand(), "install your key there with `ssh-copy-id root@cabinet`"},
		{"unknown host key", unknown.Host(), unknown.SSHCommand(), "cabinet's host key is not in your known_hosts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := deploy(t, Options{Host: tt.host, SSHCommand: tt.ssh, Binary: "/nonexistent", Stdin: strings.NewReader("")})
			if r.code != 1 || r.err == nil || !strings.Contains(r.err.Error(), tt.want) {
				t.Fatalf("got exit %d, %v; want 1 and %q", r.code, r.err, tt.want)
			}
			if strings.Contains(r.err.Error(), "\n") {
				t.Errorf("more than one line: %q", r.err)
			}
			if r.took > 5*time.Second {
				t.Errorf("took %v", r.took)
			}
		})
	}
}

// closedPortSSH is an ssh command for Host "cabinet" on a loopback port
// nothing listens on (using s's key and known_hosts files).
func closedPortSSH(t *testing.T, s *realdropbear.Server) []string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	conf := filepath.Join(t.TempDir(), "ssh_config")
	body := fmt.Sprintf("Host cabinet\n  HostName 127.0.0.1\n  Port %d\n  User root\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n", port, s.KnownHostsPath())
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"ssh", "-F", conf}
}

// TestDeployFromSource builds the binary for the cabinet's real
// architecture from this checkout, copies it and runs it there (`version`
// until `install` exists).
func TestDeployFromSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Cabinet")
	}
	wd, _ := os.Getwd()
	src := FindSourceTree(wd)
	if src == "" {
		peertest.RequirePeer(t, fmt.Errorf("no Cabinet checkout with a go toolchain above %s", wd))
	}
	if _, err := exec.LookPath("git"); err != nil {
		peertest.RequirePeer(t, err)
	}
	uname, err := exec.Command("uname", "-m").Output()
	if err != nil {
		t.Fatal(err)
	}
	target, err := release.ForMachine(string(uname))
	if err != nil {
		t.Skip(err)
	}
	s := realdropbear.Start(t, realdropbear.Options{})
	r := deploy(t, Options{Host: s.Host(), SSHCommand: s.SSHCommand(), Sets: []string{RootKey + "=" + fakeRoot(t, "41")}, SourceDir: src, subcommand: "version"})
	if r.code != 0 || r.err != nil {
		t.Fatalf("exit %d, %v", r.code, r.err)
	}
	for _, want := range []string{"building " + target.BinaryName() + " 0.0.0-", "copy verified: sha256 ", "Cabinet is installed on cabinet"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	if !strings.HasPrefix(r.stdout, "cabinet 0.0.0-") || !strings.Contains(r.stdout, "linux/"+target.GOARCH) {
		t.Errorf("the built binary's `version` printed %q", r.stdout)
	}
}

// helperEnv makes the test binary run one deploy on its terminal (see
// TestInteractive) instead of the tests.
const helperEnv = "CABINET_DEPLOY_TEST_HELPER"

// TestInteractiveHelper is the deploy TestInteractive runs with a
// pseudo-terminal as its controlling terminal and standard streams.
func TestInteractiveHelper(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("run by TestInteractive")
	}
	var o Options
	if err := json.Unmarshal([]byte(os.Getenv(helperEnv+"_OPTIONS")), &o); err != nil {
		t.Fatal(err)
	}
	o.Stdin, o.Stdout, o.Stderr, o.IsTerminal = os.Stdin, os.Stdout, os.Stderr, IsTerminal(os.Stdin)
	code, err := Run(context.Background(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deploy:", err)
	}
	os.Exit(code)
}

// TestInteractive deploys from a terminal to a cabinet whose host key is
// not known yet: deploy asks for the secret without echo, ssh asks to
// confirm the key (deploy does not pass BatchMode then), and the answer
// typed on the terminal lets it through.
func TestInteractive(t *testing.T) {
	s := realdropbear.Start(t, realdropbear.Options{UnknownHostKey: true})
	root := fakeRoot(t, "41")
	rec := t.TempDir()
	// The rig's config checks strictly; this user's ssh asks instead (as
	// OpenSSH does by default).
	sshCommand := append(s.SSHCommand(), "-o", "StrictHostKeyChecking=ask")
	opts, _ := json.Marshal(Options{Host: s.Host(), SSHCommand: sshCommand, Sets: []string{RootKey + "=" + root}, Binary: fakeInstall(t, rec, 0), SecretKeys: []string{"cabinet.mqtt.password"}})
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInteractiveHelper$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", helperEnv+"_OPTIONS="+string(opts))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close() // the child holds it; the master reads EIO once it exits
	screen := make(chan string, 64)
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				screen <- string(buf[:n])
			}
			if err != nil {
				close(screen)
				return
			}
		}
	}()
	var seen strings.Builder
	await := func(what string) {
		t.Helper()
		for !strings.Contains(seen.String(), what) {
			select {
			case s, ok := <-screen:
				if !ok {
					t.Fatalf("the terminal closed before showing %q; it showed:\n%s", what, seen.String())
				}
				seen.WriteString(s)
			case <-ctx.Done():
				t.Fatalf("the terminal never showed %q; it showed:\n%s", what, seen.String())
			}
		}
	}
	await("cabinet.mqtt.password (not shown): ")
	master.Write([]byte("hunter2\n"))
	await("Are you sure you want to continue connecting")
	master.Write([]byte("yes\n"))
	for s := range screen {
		seen.WriteString(s)
	}
	err := cmd.Wait()
	t.Logf("terminal:\n%s", seen.String())
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if strings.Contains(seen.String(), "hunter2") {
		t.Error("the terminal showed the secret")
	}
	if got := readFile(t, filepath.Join(rec, "stdin")); got != "hunter2\n" {
		t.Errorf("install's stdin is %q, want the secret", got)
	}
	if known := readFile(t, s.KnownHostsPath()); !strings.Contains(known, "ssh-ed25519") {
		t.Errorf("the accepted key is not in known_hosts: %q", known)
	}
}
