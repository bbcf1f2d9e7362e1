package uimode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// DefaultInitScript is Batocera's init script for ES, which
// batocera-es-swissknife --restart runs (stop, then start).
const DefaultInitScript = "/etc/init.d/S31emulationstation"

// Bounds of an apply.
const (
	// stopWait: the init script waits up to 20 s for ES to exit.
	stopWait = 40 * time.Second
	// startWait: the init script starts ES in the background at once.
	startWait = 20 * time.Second
	// DefaultUpWait bounds the wait for ES's API after the start: ES
	// answers once its game lists are loaded, which takes a while on a
	// large library.
	DefaultUpWait = 2 * time.Minute
	pollEvery     = 250 * time.Millisecond
)

// Service stops and starts EmulationStation.
type Service interface {
	Stop(ctx context.Context) error
	Start(ctx context.Context) error
}

// InitScript is Service through Batocera's init script (its path:
// DefaultInitScript). The script runs in a session of its own, so the ES
// it starts does not belong to the daemon's process group (the service's
// stop would take it along), with its output in a file, not a pipe (ES,
// started in the background, keeps the script's stdout open).
type InitScript struct{ Path string }

// Stop runs `S31emulationstation stop`: ES gets SIGTERM, which saves no
// setting, and the script waits up to 20 s for it to exit.
func (s InitScript) Stop(ctx context.Context) error { return s.run(ctx, "stop", stopWait) }

// Start runs `S31emulationstation start`.
func (s InitScript) Start(ctx context.Context) error { return s.run(ctx, "start", startWait) }

func (s InitScript) run(ctx context.Context, verb string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := os.CreateTemp("", "cabinet-es-init-*")
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.Path, verb, err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.CommandContext(ctx, s.Path, verb)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if err == nil {
		return nil
	}
	out.Seek(0, io.SeekStart)
	tail, _ := io.ReadAll(io.LimitReader(out, 512))
	detail := untrusted.Clean(strings.TrimSpace(string(tail)), 200)
	if ctx.Err() != nil {
		err = fmt.Errorf("did not finish within %s", limit)
	}
	if detail != "" {
		return fmt.Errorf("%s %s: %w: %s", s.Path, verb, err, detail)
	}
	return fmt.Errorf("%s %s: %w", s.Path, verb, err)
}

// Errors Apply answers that callers tell apart. Each says what to do.
var (
	// ErrGameRunning: a game runs; restarting ES would end it.
	ErrGameRunning = errors.New("a game is running, and the mode changes only when EmulationStation restarts, " +
		"which would end it: try again once the game is over")
	// ErrESDown: ES does not answer, so whether a game runs is unknown.
	ErrESDown = errors.New("EmulationStation is not answering, so nothing was changed: try again once it shows its menus")
	// ErrForced: batocera.conf forces a mode over es_settings.cfg.
	ErrForced = errors.New("batocera.conf forces the mode with es.customsargs, which wins over the setting")
)

// State is the mode as read back.
type State struct {
	Mode      string // the mode in effect: Forced, else Setting
	Setting   string // es_settings.cfg's UIMode (Full when unset)
	Forced    string // the mode es.customsargs forces; "" none
	Restarted bool   // Apply restarted ES
	Changed   bool   // Apply wrote the setting
	Text      string // one sentence for people
}

// Applier reads and changes the mode. One apply runs at a time.
type Applier struct {
	Settings     string // es_settings.cfg (DefaultSettings)
	BatoceraConf string // batocera.conf, for es.customsargs; "" none
	Backup       string // where the file is copied before each change
	Service      Service
	// ES says whether a game runs and when ES answers again (*es.Client).
	ES interface {
		RunningGame(ctx context.Context) (*es.Game, error)
		Caps(ctx context.Context) (es.Caps, error)
	}
	UpWait time.Duration // 0: DefaultUpWait
	Clock  clock.Clock   // nil: real time

	mu sync.Mutex
}

// Read reads the mode back from the files.
func (a *Applier) Read() (State, error) {
	set, err := ReadSettings(a.Settings)
	if err != nil {
		return State{}, err
	}
	st := State{Mode: set.Mode, Setting: set.Mode}
	if a.BatoceraConf != "" {
		conf, err := batoconf.ReadFile(a.BatoceraConf)
		if err != nil {
			return State{}, err
		}
		if st.Forced = Forced(conf); st.Forced != "" {
			st.Mode = st.Forced
		}
	}
	return st, nil
}

// Plan says what Apply(ctx, mode) would do now, changing nothing.
func (a *Applier) Plan(ctx context.Context, mode string) (State, error) {
	st, err := a.check(mode)
	if err != nil || st.Mode == mode {
		return st, err
	}
	if _, err := a.idle(ctx); err != nil {
		return st, err
	}
	st.Text = fmt.Sprintf("Would restart EmulationStation in %s (it is in %s now); the cabinet shows its menus again "+
		"after a few seconds.", Describe(mode), Describe(st.Mode))
	return st, nil
}

// check validates mode against what the files say; a State whose Mode is
// already mode says so in its Text.
func (a *Applier) check(mode string) (State, error) {
	if _, err := haentities.ParseUIMode([]byte(mode)); err != nil {
		return State{}, err
	}
	st, err := a.Read()
	if err != nil {
		return st, err
	}
	if st.Forced != "" && st.Forced != mode {
		return st, fmt.Errorf("%w: it forces %s; remove --force-%s from es.customsargs first",
			ErrForced, Describe(st.Forced), strings.ToLower(st.Forced))
	}
	if st.Mode == mode {
		st.Text = fmt.Sprintf("EmulationStation is already in %s.", Describe(mode))
	}
	return st, nil
}

// idle checks that ES answers and runs no game.
func (a *Applier) idle(ctx context.Context) (*es.Game, error) {
	g, err := a.ES.RunningGame(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrESDown, err)
	}
	if g != nil {
		return g, fmt.Errorf("%s: %w", untrusted.Clean(g.Name, 80), ErrGameRunning)
	}
	return nil, nil
}

// Apply changes the mode: unless ES is in it already, it stops ES, writes
// the setting (after a backup) and starts ES again, then reads the mode
// back. It refuses while a game runs or ES does not answer.
func (a *Applier) Apply(ctx context.Context, mode string) (State, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st, err := a.check(mode)
	if err != nil || st.Mode == mode {
		return st, err
	}
	if _, err := a.idle(ctx); err != nil {
		return st, err
	}
	data, err := os.ReadFile(a.Settings)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("read EmulationStation's settings: %w", err)
	}
	if _, err := SetMode(data, mode); err != nil { // a file ES cannot read is not touched, nor is ES
		return st, err
	}
	if err := a.Service.Stop(ctx); err != nil {
		return st, fmt.Errorf("stop EmulationStation: %w; nothing was changed", err)
	}
	st.Restarted = true
	// ES may have saved its settings on the way out: read the file again.
	werr := a.write(mode)
	if err := a.Service.Start(ctx); err != nil {
		return st, fmt.Errorf("start EmulationStation again: %w; start it from the cabinet's power menu or restart the cabinet", err)
	}
	if werr != nil {
		return st, fmt.Errorf("%w; EmulationStation was started again in %s", werr, Describe(st.Mode))
	}
	st.Changed = true
	back, err := a.Read()
	if err != nil {
		return st, err
	}
	back.Restarted, back.Changed = true, true
	if back.Mode != mode {
		return back, fmt.Errorf("es_settings.cfg was written, but reads back %s: check what else writes it", Describe(back.Mode))
	}
	if err := a.waitUp(ctx); err != nil {
		back.Text = fmt.Sprintf("Switched to %s; EmulationStation is still starting (%v).", Describe(mode), err)
		return back, nil
	}
	back.Text = fmt.Sprintf("Switched to %s: EmulationStation restarted.", Describe(mode))
	if mode != haentities.UIModeFull {
		// The passkey is a grown-up's secret: named, never shown.
		back.Text += " On the cabinet, EmulationStation's passkey entered with the pad leaves it (or choose Full here)."
	}
	return back, nil
}

// write backs up es_settings.cfg and writes the mode into it.
func (a *Applier) write(mode string) error {
	data, err := os.ReadFile(a.Settings)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read EmulationStation's settings: %w", err)
	}
	out, err := SetMode(data, mode)
	if err != nil {
		return err
	}
	if a.Backup != "" && len(data) > 0 {
		err := os.MkdirAll(filepath.Dir(a.Backup), 0o755)
		if err == nil {
			err = batoconf.Replace(a.Backup, data, "the backup of es_settings.cfg")
		}
		if err != nil {
			return fmt.Errorf("%w: es_settings.cfg was not changed", err)
		}
	}
	return batoconf.Replace(a.Settings, out, "es_settings.cfg")
}

// waitUp waits until ES answers again.
func (a *Applier) waitUp(ctx context.Context) error {
	clk := clock.Or(a.Clock)
	wait := a.UpWait
	if wait <= 0 {
		wait = DefaultUpWait
	}
	deadline := clk.Now().Add(wait)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := a.ES.Caps(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if !clk.Now().Before(deadline) {
			return fmt.Errorf("not answering after %s", wait)
		}
		t, tc := clk.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-tc:
		}
	}
}
