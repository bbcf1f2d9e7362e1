package reales

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// Addr is where ES's web API listens: fixed (es-app HttpServerThread,
// listen(ip, 1234), 127.0.0.1 unless PublicWebAccess).
const Addr = "127.0.0.1:1234"

// URL is the API's base, for cabinet.es.url.
const URL = "http://" + Addr

// lockName is the flock every real ES on this machine holds while it lives.
const lockName = "cabinet-real-es.lock"

// lockWait bounds the wait for another test process's ES to finish.
const lockWait = 5 * time.Minute

// ES is one real EmulationStation for one test.
type ES struct {
	t    testing.TB
	bin  string
	opts Options
	l    layout

	// Home is ES's HOME; Scripts its scripts folder (per-event folders and
	// root scripts: install the wrappers here); UserScripts the configgen
	// user scripts folder the emulator runs; ROMs the roms folder
	// (ROMs/<system>/<file>).
	Home, Scripts, UserScripts, ROMs string

	lock    *os.File
	prev    string // what the lock's previous holder wrote in it
	cmd     *exec.Cmd
	exited  chan struct{} // closed when xvfb-run has exited; Stop reaps it
	stopped bool
	// launches counts Launch calls; the emulator's log says how many ran.
	launches int
}

// New checks the peer (a missing one skips t, or fails it under
// CABINET_REQUIRE_PEERS=1) and lays out a fresh HOME in opts.Dir. ES is not
// started yet: install the scripts, then call Start.
func New(t testing.TB, opts Options) *ES {
	t.Helper()
	bin := Require(t)
	if opts.Dir == "" {
		t.Fatal("reales: Options.Dir is required")
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 60 * time.Second
	}
	l := newLayout(opts.Dir)
	if err := l.write(opts); err != nil {
		t.Fatalf("reales: lay out HOME: %v", err)
	}
	return &ES{t: t, bin: bin, opts: opts, l: l, Home: l.home, Scripts: l.scripts, UserScripts: l.userScripts, ROMs: l.roms}
}

// ROM is the path of a game of the library, as ES stores it.
func (e *ES) ROM(system, file string) string { return filepath.Join(e.ROMs, system, file) }

// Start takes the machine's real-ES lock, starts ES under Xvfb and waits
// until its API answers GET /caps (ES gives no other signal: the server
// starts once the game lists are loaded, es-app main.cpp). Stop runs when
// t ends.
func (e *ES) Start() {
	e.t.Helper()
	if e.cmd != nil {
		e.t.Fatal("reales: Start called twice")
	}
	e.takeLock()
	e.t.Cleanup(e.Stop)
	e.startProcess()
}

// Restart quits ES as its menu does (it writes its game lists on the way
// out), waits until it and its X server are gone, and starts it again
// with the same HOME, keeping the machine's real-ES lock.
func (e *ES) Restart() {
	e.t.Helper()
	if e.cmd == nil {
		e.t.Fatal("reales: Restart before Start")
	}
	e.Quit()
	e.reap()
	e.startProcess()
}

// Terminate does to ES what Batocera's `S31emulationstation stop` does
// (killall emulationstation: SIGTERM, then a wait for it to exit) and
// clears away its X server; StartAgain starts it again with the same HOME,
// keeping the machine's real-ES lock.
func (e *ES) Terminate() {
	e.t.Helper()
	if e.cmd == nil {
		e.t.Fatal("reales: Terminate before Start")
	}
	signalExe(e.cmd.Process.Pid, e.bin, syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(cabinettest.Deadline):
		e.t.Fatalf("reales: EmulationStation did not exit within %v of SIGTERM\n%s", cabinettest.Deadline, e.LogTail())
	}
	e.reap()
}

// StartAgain starts ES after Terminate.
func (e *ES) StartAgain() {
	e.t.Helper()
	if e.cmd != nil {
		e.t.Fatal("reales: StartAgain while ES runs")
	}
	e.startProcess()
}

// reap clears away what is left of an exited ES's process group (Xvfb
// first with SIGTERM: it removes its files then) and waits until its port
// is free.
func (e *ES) reap() {
	pgid := e.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	cabinettest.Eventually(5*time.Second, nil, func() (bool, string) { return len(groupMembers(pgid, "")) == 0, "" })
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-e.exited
	e.cmd.Wait()
	e.cmd = nil
	e.waitPortFree(10 * time.Second)
}

// startProcess starts ES under Xvfb and waits for its API.
func (e *ES) startProcess() {
	e.t.Helper()
	if c, err := net.DialTimeout("tcp", Addr, time.Second); err == nil {
		c.Close()
		e.t.Fatalf("reales: something already listens on %s (ES's fixed port)%s; stop it first", Addr, e.previousHint())
	}
	out, err := os.OpenFile(e.l.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		e.t.Fatal(err)
	}
	defer out.Close()
	// As run-headless.sh does: ES leaves /tmp/emulationstation.ready behind.
	os.Remove("/tmp/emulationstation.ready")
	cmd := exec.Command("xvfb-run", "-a", "-s", "-screen 0 1280x720x24",
		e.bin, "--windowed", "--resolution", "1280", "720", "--no-splash", "--debug")
	cmd.Dir = e.l.home
	cmd.Env = e.env()
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so Stop reaches Xvfb, ES and what ES started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("reales: start xvfb-run: %v", err)
	}
	e.cmd, e.exited = cmd, make(chan struct{})
	fmt.Fprintf(e.lock, "test process %d\nprocess group %d\n", os.Getpid(), cmd.Process.Pid)
	go waitExit(cmd.Process.Pid, e.exited)
	if err := e.waitAPI(e.opts.StartTimeout); err != nil {
		e.t.Fatalf("reales: %v\n%s", err, e.LogTail())
	}
	e.t.Logf("real EmulationStation up in %v (HOME=%s)", time.Since(start).Round(time.Millisecond), e.Home)
}

// env is ES's environment: the test's, HOME, the stubs first in PATH, no
// sound card, and opts.Env.
func (e *ES) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "PATH", "DISPLAY", "XAUTHORITY", "SDL_AUDIODRIVER":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env,
		"HOME="+e.l.home,
		"PATH="+e.l.stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
		"SDL_AUDIODRIVER=dummy",
	), e.opts.Env...)
}

// waitAPI polls GET /caps (ES has no other signal) until it answers 200,
// ES exits, or d passes.
func (e *ES) waitAPI(d time.Duration) error {
	var last error
	ok, _ := cabinettest.Eventually(d, func() <-chan struct{} { return e.exited }, func() (bool, string) {
		if !e.Running() {
			return true, ""
		}
		ctx, cancel := e.ctx(time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL+"/caps", nil)
		if err != nil {
			last = err
			return false, ""
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err
			return false, ""
		}
		resp.Body.Close()
		last = fmt.Errorf("GET /caps: %s", resp.Status)
		return resp.StatusCode == http.StatusOK, ""
	})
	switch {
	case !e.Running():
		return fmt.Errorf("EmulationStation exited before its API answered")
	case !ok:
		return fmt.Errorf("EmulationStation's API did not answer GET /caps within %v (last: %v)", d, last)
	}
	return nil
}

// Running says whether ES (xvfb-run) still runs.
func (e *ES) Running() bool {
	if e.exited == nil {
		return false
	}
	select {
	case <-e.exited:
		return false
	default:
		return true
	}
}

// Stop ends ES and Xvfb (ES first, so xvfb-run stops its server and cleans
// up, then the whole process group), releases the lock and fails the test
// if a stub ran. It runs when t ends; calling it earlier is fine.
func (e *ES) Stop() {
	e.t.Helper()
	if e.stopped {
		return
	}
	e.stopped = true
	if e.cmd != nil {
		pgid := e.cmd.Process.Pid
		if e.Running() {
			// SIGKILL, not SIGTERM: SDL turns SIGTERM into a quit, and ES would
			// fire quit at the test's hooks on its way out. Once ES is gone,
			// xvfb-run stops its X server and removes its files.
			killExe(pgid, e.bin)
			select {
			case <-e.exited:
			case <-time.After(5 * time.Second):
			}
		}
		// Then what is left of the group: the emulator, hooks still running,
		// Xvfb. SIGTERM first (Xvfb removes its lock file and socket in /tmp
		// on SIGTERM, not on SIGKILL), then SIGKILL. xvfb-run, the group's
		// leader, is not reaped yet, so the group id is still this ES's.
		syscall.Kill(-pgid, syscall.SIGTERM)
		cabinettest.Eventually(5*time.Second, nil, func() (bool, string) { return len(groupMembers(pgid, "")) == 0, "" })
		syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-e.exited:
			e.cmd.Wait()
		case <-time.After(10 * time.Second):
			e.t.Errorf("reales: xvfb-run (pid %d) did not exit after SIGKILL", pgid)
		}
		e.waitPortFree(5 * time.Second)
	}
	if calls := e.StubCalls(); len(calls) > 0 {
		e.t.Errorf("EmulationStation ran what must never run here (the stubs in its PATH recorded it):\n  %s\n%s",
			strings.Join(calls, "\n  "), e.LogTail())
	} else if e.t.Failed() {
		e.t.Logf("real EmulationStation, log tail:\n%s", e.LogTail())
	}
	if e.lock != nil {
		e.lock.Close() // releases the flock
		e.lock = nil
	}
}

// waitPortFree waits until nothing answers on Addr any more.
func (e *ES) waitPortFree(d time.Duration) {
	free, _ := cabinettest.Eventually(d, nil, func() (bool, string) {
		c, err := net.DialTimeout("tcp", Addr, 200*time.Millisecond)
		if err != nil {
			return true, ""
		}
		c.Close()
		return false, ""
	})
	if !free {
		e.t.Errorf("reales: %s still answers after ES was stopped", Addr)
	}
}

// StubCalls are the stub runs recorded so far ("shutdown -r now", …).
func (e *ES) StubCalls() []string {
	b, err := os.ReadFile(e.l.stubLog)
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// ctx bounds one request to ES.
func (e *ES) ctx(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
