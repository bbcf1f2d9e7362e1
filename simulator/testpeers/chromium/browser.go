package chromium

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Browser is a running headless Chromium with one page (tab) attached.
type Browser struct {
	conn    *conn
	session string // the page's flattened DevTools session
	frame   string // the page's main frame
	timeout time.Duration

	dir       string // the browser's temporary directory: profile and HOME
	tmp       string // its TMPDIR, removed by Close
	cmd       *exec.Cmd
	closeOnce sync.Once
	exited    chan struct{} // closed when the process has been waited for
	stderr    *tail
	// stderrDone is closed when every process holding stderr is gone.
	stderrDone chan struct{}

	console console

	// Started is how long the launch took: process start to a page ready
	// for commands.
	Started time.Duration
}

// launchTimeout bounds the start: process, first answer, page attached.
const launchTimeout = 60 * time.Second

// Launch starts Chromium for t (skipping t when it is not installed, see
// Require) with a fresh profile in t.TempDir(), and kills it when t ends;
// when t failed, its stderr tail is logged. A failed start fails t.
func Launch(t testing.TB, opts Options) *Browser {
	t.Helper()
	bin := Require(t)
	dir := t.TempDir() // removed after the browser is killed (cleanups run in reverse)
	b, err := start(bin, dir, opts)
	if err != nil {
		t.Fatalf("launch chromium: %v", err)
	}
	t.Cleanup(func() {
		b.Close()
		if t.Failed() {
			t.Logf("chromium stderr tail:\n%s", b.stderr.String())
		}
	})
	return b
}

func start(bin, dir string, opts Options) (*Browser, error) {
	begin := time.Now()
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 30 * time.Second
	}
	home := filepath.Join(dir, "home")
	profile := filepath.Join(dir, "profile")
	for _, d := range []string{home, profile} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := writePreferences(profile); err != nil {
		return nil, err
	}
	a, err := args(profile, opts)
	if err != nil {
		return nil, err
	}
	// TMPDIR holds the singleton socket a killed browser leaves behind;
	// a short path of its own, as a socket path is limited to 107 bytes.
	tmp, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		return nil, err
	}
	// fd 3: Chromium reads commands; fd 4: it writes replies and events.
	// Its stdout and stderr go to a pipe of ours too, so that Wait
	// returns when Chromium exits, though its helpers still hold them.
	var pipes [6]*os.File // cmdR, cmdW, outR, outW, errR, errW
	for i := 0; i < len(pipes) && err == nil; i += 2 {
		pipes[i], pipes[i+1], err = os.Pipe()
	}
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	if err != nil {
		closeAll(pipes[:]...)
		os.RemoveAll(tmp)
		return nil, err
	}
	cmdR, cmdW, outR, outW, errR, errW := pipes[0], pipes[1], pipes[2], pipes[3], pipes[4], pipes[5]
	cmd := exec.Command(bin, a...)
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	cmd.Stdout, cmd.Stderr = errW, errW
	// A HOME of its own: Chromium creates ~/.pki/nssdb and caches there.
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
	}
	// Its own process group (renderers and helpers are killed with it),
	// and killed if the test binary dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	closeAll(cmdR, outW, errW)
	if err != nil {
		closeAll(cmdW, outR, errR)
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	b := &Browser{dir: dir, tmp: tmp, timeout: opts.CallTimeout, cmd: cmd,
		exited: make(chan struct{}), stderr: newTail(64 << 10), stderrDone: make(chan struct{})}
	go func() {
		io.Copy(b.stderr, errR)
		errR.Close()
		close(b.stderrDone)
	}()
	go func() {
		cmd.Wait()
		outR.Close() // should a helper still hold fd 4
		close(b.exited)
	}()
	b.conn = newConn(outR, cmdW, b.exitReason)
	ctx, cancel := context.WithTimeout(context.Background(), launchTimeout)
	defer cancel()
	if err := b.attach(ctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("%w\nstderr tail:\n%s", err, b.stderr.String())
	}
	b.Started = time.Since(begin)
	return b, nil
}

// attach opens a page and prepares its session.
func (b *Browser) attach(ctx context.Context) error {
	// The page Chromium opened at start (about:blank, the last argument).
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := b.conn.call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
		return err
	}
	var target struct {
		TargetID string `json:"targetId"`
	}
	for _, ti := range targets.TargetInfos {
		if ti.Type == "page" {
			target.TargetID = ti.TargetID
			break
		}
	}
	if target.TargetID == "" {
		if err := b.conn.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
			return err
		}
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.conn.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return err
	}
	b.session = att.SessionID
	session := b.session
	b.conn.listen(func(e event) {
		if e.SessionID == session {
			b.console.see(e)
		}
	})
	for _, m := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}},
		{"Network.enable", nil},
		{"Runtime.enable", nil},
		{"Log.enable", nil},
	} {
		if err := b.conn.call(ctx, b.session, m.method, m.params, nil); err != nil {
			return err
		}
	}
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := b.conn.call(ctx, b.session, "Page.getFrameTree", nil, &tree); err != nil {
		return err
	}
	b.frame = tree.FrameTree.Frame.ID
	return nil
}

// deadline is ctx, bounded by Options.CallTimeout when it has no deadline.
func (b *Browser) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, b.timeout)
}

// exitReason says how the browser went away, with its stderr tail; it
// waits a moment for the process to be reaped.
func (b *Browser) exitReason() error {
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("chromium closed its devtools pipe; stderr tail:\n%s", b.stderr.String())
	}
	// Its last words may still be in the pipe.
	select {
	case <-b.stderrDone:
	case <-time.After(500 * time.Millisecond):
	}
	return fmt.Errorf("chromium exited (%v); stderr tail:\n%s", b.cmd.ProcessState, b.stderr.String())
}

// Close kills the browser and its helpers and waits for them. Launch's
// cleanup calls it; calling it again does nothing.
func (b *Browser) Close() {
	b.closeOnce.Do(func() {
		b.conn.shut(errClosing)
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
		b.conn.w.Close()
		// Chromium's crash handlers leave the process group (they call
		// setsid) and write in the profile; they are known by it.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			left := processesMentioning(b.dir)
			if len(left) == 0 {
				break
			}
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		os.RemoveAll(b.tmp)
	})
}

// Stderr is what Chromium wrote to stderr and stdout lately (the last
// 64 KB, without its D-Bus connection errors).
func (b *Browser) Stderr() string { return b.stderr.String() }
