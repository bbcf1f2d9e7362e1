package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// sshClient runs shell commands on the cabinet with the system's OpenSSH
// client, so the user's ~/.ssh/config, keys and agent apply. All commands
// share one connection (OpenSSH multiplexing through a socket in a private
// directory), so a password is asked at most once.
type sshClient struct {
	argv        []string // the ssh program and the user's words (--ssh-command)
	host        string   // [user@]host as given
	controlPath string
	batch       bool // never prompt: BatchMode=yes
}

// Connection options deploy adds after the user's words (ssh takes the
// first value of an option, so the user's -o wins). Host keys are checked
// as the user's config says: deploy never adds StrictHostKeyChecking or
// UserKnownHostsFile.
const (
	// connectTimeout bounds the TCP connect and SSH handshake.
	connectTimeout = "10"
	// controlPersist keeps the shared connection this long once idle: long
	// enough to outlast a cold cross-build between the first command and
	// the upload (a new connection could ask for the password again), and
	// deploy closes it with `ssh -O exit` anyway.
	controlPersist = "300"
)

func (c *sshClient) options() []string {
	opts := []string{
		"-o", "ControlMaster=auto",
		"-o", "ControlPath=" + c.controlPath,
		"-o", "ControlPersist=" + controlPersist,
		"-o", "ConnectTimeout=" + connectTimeout,
		// A cabinet switched off mid-install ends the command in a minute,
		// not at the step's deadline.
		"-o", "ServerAliveInterval=15",
		"-o", "ServerAliveCountMax=4",
	}
	if c.batch {
		opts = append(opts, "-o", "BatchMode=yes")
	}
	return opts
}

// run runs command (one shell command line, its words already quoted) on
// the cabinet under ctx's deadline. ssh's own stderr goes to stderr as well
// as being read for failures. The error is a *sshError when ssh could not
// log in, a *remoteExit when the command failed.
func (c *sshClient) run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	args := append(append(append([]string{}, c.argv[1:]...), c.options()...), "--", c.host, command)
	cmd := exec.CommandContext(ctx, c.argv[0], args...)
	tail := &tailBuffer{max: 8 << 10}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, io.MultiWriter(stderr, tail)
	// The connection master ssh forks keeps running; should it hold our
	// pipes, Wait must not wait for it.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return fmt.Errorf("no answer from %s within %s: is the cabinet still on the network?", c.host, time.Since(start).Round(time.Second))
		}
		return fmt.Errorf("interrupted: %w", ctxErr)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("run %s: %w (name your ssh client with --ssh-command or CABINET_SSH_COMMAND)", c.argv[0], err)
	}
	if exit.ExitCode() == 255 {
		if se := classify(c.host, tail.String()); se != nil {
			return se
		}
	}
	return &remoteExit{code: exit.ExitCode(), stderr: tail.String()}
}

// close ends the shared connection.
func (c *sshClient) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(append([]string{}, c.argv[1:]...), "-o", "ControlPath="+c.controlPath, "-O", "exit", "--", c.host)
	cmd := exec.CommandContext(ctx, c.argv[0], args...)
	cmd.WaitDelay = time.Second
	cmd.Run() // no master (a failed login) is fine
}

// remoteExit is a remote command that ran and failed.
type remoteExit struct {
	code   int
	stderr string
}

func (e *remoteExit) Error() string {
	if line := lastLine(e.stderr); line != "" {
		return fmt.Sprintf("exit status %d: %s", e.code, line)
	}
	return fmt.Sprintf("exit status %d", e.code)
}

// failure is why ssh could not run a command at all.
type failure int

const (
	hostKeyUnknown failure = iota + 1
	hostKeyChanged
	authRefused
	connRefused
	unresolved
	timedOut
	noRoute
)

// sshError is a login that failed, in one sentence that says what to do.
type sshError struct {
	kind failure
	msg  string
}

func (e *sshError) Error() string { return e.msg }

// sshMessages map what OpenSSH prints when it exits 255 to a failure, the
// first match winning (a changed key also prints "Host key verification
// failed").
var sshMessages = []struct {
	needle string
	kind   failure
}{
	{"REMOTE HOST IDENTIFICATION HAS CHANGED", hostKeyChanged},
	{"Host key verification failed", hostKeyUnknown},
	{"Permission denied", authRefused},
	{"Too many authentication failures", authRefused},
	{"Connection refused", connRefused},
	{"Could not resolve hostname", unresolved},
	{"Name or service not known", unresolved},
	{"Connection timed out", timedOut},
	{"Operation timed out", timedOut},
	{"No route to host", noRoute},
	{"Network is unreachable", noRoute},
}

// classify reads ssh's stderr after it exited 255: nil when it names none
// of the failures ssh reports (then the remote command itself may have
// exited 255).
func classify(host, stderr string) *sshError {
	for _, m := range sshMessages {
		if strings.Contains(stderr, m.needle) {
			return &sshError{kind: m.kind, msg: explain(m.kind, host)}
		}
	}
	return nil
}

// explain is the sentence for a failure to reach host.
func explain(kind failure, host string) string {
	login := loginOf(host)
	name := login[strings.LastIndex(login, "@")+1:]
	switch kind {
	case hostKeyUnknown:
		return fmt.Sprintf("%s's host key is not in your known_hosts: connect once with `ssh %s`, check the fingerprint and answer yes, then run deploy again", name, login)
	case hostKeyChanged:
		return fmt.Sprintf("%s's host key has changed since you last connected (a reinstalled cabinet, or someone in between): if you reinstalled it, forget the old key with `ssh-keygen -R %s`, then run deploy again", name, name)
	case authRefused:
		return fmt.Sprintf("%s refused the login: install your key there with `ssh-copy-id %s` (a fresh Batocera's root password is linux), then run deploy again", name, login)
	case connRefused:
		return fmt.Sprintf("%s refused the SSH connection: is the cabinet on and its SSH service enabled?", name)
	case unresolved:
		return fmt.Sprintf("cannot resolve %s: check the name, or use the cabinet's IP address", name)
	case timedOut:
		return fmt.Sprintf("%s did not answer within %ss: is the cabinet on and on this network?", name, connectTimeout)
	case noRoute:
		return fmt.Sprintf("no route to %s: is the cabinet on and on this network?", name)
	}
	return "ssh to " + name + " failed"
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
