// Package realdropbear starts a real Dropbear SSH server (Debian package
// dropbear-bin, the server Batocera runs) on a free loopback port for
// tests, with a client key, a known_hosts file and an ssh config for the
// system's OpenSSH client. Test code only.
//
// Dropbear 2022.83 reads authorized keys from the logged-in user's home
// only, and CI runs as root, so the server runs inside a private mount
// namespace whose /root is an empty tmpfs holding just the test's
// authorized_keys: the machine's real /root is never written.
package realdropbear

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// Alias is the Host name the ssh config gives the server.
const Alias = "cabinet"

// Options choose what the server accepts.
type Options struct {
	// RefuseKey leaves the client key out of authorized_keys, so the
	// server refuses it (a cabinet nobody ran ssh-copy-id for).
	RefuseKey bool
	// UnknownHostKey leaves the client's known_hosts file empty (a
	// cabinet never connected to before).
	UnknownHostKey bool
	// AllowPasswords lets Dropbear offer password logins. Off by default
	// (-s) so that no test can block on a password prompt.
	AllowPasswords bool
}

// Server is a running Dropbear.
type Server struct {
	dir, config, knownHosts, clientKey string
	port                               int
	cmd                                *exec.Cmd
	done                               chan struct{}
	log                                *lockedBuffer
}

// startTimeout bounds key generation plus the server's start.
const startTimeout = 20 * time.Second

// Start starts Dropbear for t and stops it, and every process of its
// namespace, when t ends. Missing tools or a machine that refuses mount
// namespaces go through peertest.RequirePeer; a failed start fails t.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	peertest.RequirePeer(t, Available())
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s := &Server{dir: t.TempDir()}
	hostKey := filepath.Join(s.dir, "host_ed25519")
	s.clientKey = filepath.Join(s.dir, "client_ed25519")
	if err := run(ctx, "dropbearkey", "-t", "ed25519", "-f", hostKey); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "realdropbear", "-f", s.clientKey); err != nil {
		t.Fatal(err)
	}
	hostPub, err := publicHostKey(ctx, hostKey)
	if err != nil {
		t.Fatal(err)
	}
	authorized := s.clientKey + ".pub"
	if opts.RefuseKey {
		authorized = ""
	}
	// A port picked by the kernel may be taken again before Dropbear binds
	// it; try a few.
	var startErr error
	for attempt := 0; attempt < 5; attempt++ {
		if startErr = s.start(ctx, hostKey, authorized, opts); startErr == nil {
			break
		}
		if !errors.Is(startErr, errPortTaken) {
			break
		}
	}
	if startErr != nil {
		t.Fatalf("start dropbear: %v", startErr)
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("dropbear log:\n%s", s.log.String())
		}
	})
	known := ""
	if !opts.UnknownHostKey {
		known = fmt.Sprintf("[127.0.0.1]:%d %s\n", s.port, hostPub)
	}
	s.knownHosts = filepath.Join(s.dir, "known_hosts")
	if err := os.WriteFile(s.knownHosts, []byte(known), 0o600); err != nil {
		t.Fatal(err)
	}
	s.config = filepath.Join(s.dir, "ssh_config")
	conf := fmt.Sprintf(`Host %s
  HostName 127.0.0.1
  Port %d
  User root
  IdentityFile %s
  IdentitiesOnly yes
  UserKnownHostsFile %s
  StrictHostKeyChecking yes
`, Alias, s.port, s.clientKey, s.knownHosts)
	if err := os.WriteFile(s.config, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// Available says why a real Dropbear cannot run here, or nil.
func Available() error {
	for _, tool := range []string{"dropbear", "dropbearkey", "unshare", "ssh", "ssh-keygen"} {
		if _, err := lookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (Debian: apt-get install dropbear-bin openssh-client util-linux)", tool)
		}
	}
	// Mounting a tmpfs in a new mount namespace needs CAP_SYS_ADMIN.
	out, err := exec.Command("unshare", "--mount", "--propagation", "private", "true").CombinedOutput()
	if err != nil {
		return fmt.Errorf("cannot make a private mount namespace here (needs root): %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// lookPath finds a tool in PATH or in the sbin directories Debian puts
// Dropbear in.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func run(ctx context.Context, name string, args ...string) error {
	bin, err := lookPath(name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// publicHostKey is "ssh-ed25519 AAAA…" of a Dropbear key file.
func publicHostKey(ctx context.Context, hostKey string) (string, error) {
	bin, err := lookPath("dropbearkey")
	if err != nil {
		return "", err
	}
	out, err := exec.CommandContext(ctx, bin, "-y", "-f", hostKey).Output()
	if err != nil {
		return "", fmt.Errorf("dropbearkey -y: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && strings.HasPrefix(f[0], "ssh-") {
			return f[0] + " " + f[1], nil
		}
	}
	return "", fmt.Errorf("dropbearkey -y printed no public key: %s", out)
}

var errPortTaken = errors.New("port taken")

// namespaceScript runs in the new mount namespace: $1 is the public key to
// authorize ("" for none), the rest is Dropbear's command line. The tmpfs
// hides the real /root from Dropbear and its sessions only; the mount is
// private, so it never propagates back to the machine.
const namespaceScript = `set -e
mount -t tmpfs -o mode=0700 tmpfs /root
mkdir -m 0700 /root/.ssh
if [ -n "$1" ]; then cp "$1" /root/.ssh/authorized_keys; fi
shift
exec "$@"`

func (s *Server) start(ctx context.Context, hostKey, authorized string, opts Options) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dropbear, err := lookPath("dropbear")
	if err != nil {
		return err
	}
	args := []string{"--mount", "--propagation", "private", "sh", "-c", namespaceScript, "realdropbear", authorized,
		dropbear, "-F", "-E", "-p", "127.0.0.1:" + strconv.Itoa(s.port), "-r", hostKey, "-P", filepath.Join(s.dir, "dropbear.pid")}
	if !opts.AllowPasswords {
		args = append(args, "-s")
	}
	cmd := exec.Command("unshare", args...)
	s.log = &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	// Its own process group, and killed if the test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start unshare: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	for {
		if banner(addr) {
			return nil
		}
		select {
		case <-s.done:
			if strings.Contains(s.log.String(), "in use") {
				return errPortTaken
			}
			return fmt.Errorf("dropbear exited at start: %s", s.log.String())
		case <-ctx.Done():
			s.stop()
			return fmt.Errorf("dropbear did not answer on %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// banner says whether an SSH server answers at addr.
func banner(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.HasPrefix(line, "SSH-")
}

// stop kills Dropbear and every process left in its mount namespace (the
// session processes Dropbear forks call setsid, so its process group does
// not hold them).
func (s *Server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	pid := s.cmd.Process.Pid
	ns, nsErr := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid))
	own, _ := os.Readlink("/proc/self/ns/mnt")
	syscall.Kill(-pid, syscall.SIGKILL)
	// Kill until none is left: a process may fork while the others die,
	// and a killed one lingers a moment.
	for deadline := time.Now().Add(5 * time.Second); nsErr == nil && ns != own && time.Now().Before(deadline); {
		members := namespaceMembers(ns)
		if len(members) == 0 {
			break
		}
		for _, p := range members {
			syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
	s.cmd = nil
}

// namespaceMembers lists the processes whose mount namespace is ns.
func namespaceMembers(ns string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil && l == ns {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Host is the ssh config alias to connect to.
func (s *Server) Host() string { return Alias }

// SSHCommand is the client command line: ssh with the server's config.
func (s *Server) SSHCommand() []string { return []string{"ssh", "-F", s.config} }

// KnownHostsPath is the client's known_hosts file.
func (s *Server) KnownHostsPath() string { return s.knownHosts }

// Log is what Dropbear logged so far.
func (s *Server) Log() string { return s.log.String() }

// lockedBuffer collects a process's output while tests read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
