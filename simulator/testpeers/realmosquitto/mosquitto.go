// Package realmosquitto starts a real Mosquitto broker (Debian package
// mosquitto) on a free loopback port for tests: optional password
// authentication, and stop/start on the same port to play a broker restart.
package realmosquitto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Options configure the broker.
type Options struct {
	Users map[string]string // user → password; empty: anonymous allowed
	// Persist keeps retained messages across Restart (Mosquitto's
	// persistence file), as a home broker usually does.
	Persist bool
}

// Broker is a running Mosquitto.
type Broker struct {
	dir  string
	addr string
	conf string
	cmd  *exec.Cmd
	done chan struct{}
}

// Binary finds the mosquitto executable (it lives in /usr/sbin on Debian).
func Binary() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("mosquitto is not installed (Debian: apt-get install mosquitto mosquitto-clients)")
}

// Available says why a real Mosquitto cannot run here, or nil.
func Available() error { _, err := Binary(); return err }

// Start writes a config into dir and starts Mosquitto on a free port.
func Start(ctx context.Context, dir string, opts Options) (*Broker, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	var conf strings.Builder
	fmt.Fprintf(&conf, "listener %s 127.0.0.1\n", port)
	if os.Geteuid() == 0 {
		// Run as root, Mosquitto drops to user "mosquitto", which cannot
		// read our password file nor write our temp dir.
		conf.WriteString("user root\n")
	}
	if len(opts.Users) == 0 {
		conf.WriteString("allow_anonymous true\n")
	} else {
		pw := filepath.Join(dir, "passwd")
		if err := writePasswords(ctx, pw, opts.Users); err != nil {
			return nil, err
		}
		fmt.Fprintf(&conf, "allow_anonymous false\npassword_file %s\n", pw)
	}
	if opts.Persist {
		fmt.Fprintf(&conf, "persistence true\npersistence_location %s/\nautosave_interval 1\n", dir)
	} else {
		conf.WriteString("persistence false\n")
	}
	fmt.Fprintf(&conf, "log_dest file %s\nlog_type error\nlog_type warning\nlog_type notice\n", filepath.Join(dir, "mosquitto.log"))
	b := &Broker{dir: dir, addr: addr, conf: filepath.Join(dir, "mosquitto.conf")}
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o644); err != nil {
		return nil, err
	}
	if err := b.start(ctx, bin); err != nil {
		return nil, err
	}
	return b, nil
}

// writePasswords builds a Mosquitto password file with mosquitto_passwd.
func writePasswords(ctx context.Context, path string, users map[string]string) error {
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		return err
	}
	for _, u := range names {
		out, err := exec.CommandContext(ctx, "mosquitto_passwd", "-b", path, u, users[u]).CombinedOutput()
		if err != nil {
			return fmt.Errorf("mosquitto_passwd (package mosquitto): %v: %s", err, out)
		}
	}
	return nil
}

func (b *Broker) start(ctx context.Context, bin string) error {
	cmd := exec.Command(bin, "-c", b.conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mosquitto: %w", err)
	}
	b.cmd, b.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(b.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-b.done:
			log, _ := os.ReadFile(filepath.Join(b.dir, "mosquitto.log"))
			return fmt.Errorf("mosquitto exited at start: %s", log)
		case <-ctx.Done():
			b.Close()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b.Close()
			return fmt.Errorf("mosquitto did not listen on %s within 10s", b.addr)
		}
	}
}

// Addr is host:port; URL is tcp://host:port.
func (b *Broker) Addr() string { return b.addr }

// URL is the form cabinet.mqtt.broker takes.
func (b *Broker) URL() string { return "tcp://" + b.addr }

// Close stops Mosquitto (SIGTERM, then SIGKILL) and waits for it.
func (b *Broker) Close() error {
	if b.cmd == nil || b.cmd.Process == nil {
		return nil
	}
	syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
	}
	b.cmd = nil
	return nil
}

// Restart stops and starts Mosquitto on the same port.
func (b *Broker) Restart(ctx context.Context) error {
	b.Close()
	bin, err := Binary()
	if err != nil {
		return err
	}
	return b.start(ctx, bin)
}
