package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/uimode"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/packaging"
)

// This file wires EmulationStation's UI mode (package uimode) and Cabinet's
// entries in ES (packaging.Entries) into the daemon: the ui_mode select's
// state, kept to the file (ES's own passkey unlock rewrites it), the
// changes from Home Assistant and MCP, and the answers to the entries.

// uiModeTimeout bounds one change from Home Assistant: ES's stop (20 s at
// most), its start and the wait for its API.
const uiModeTimeout = 4 * time.Minute

// uiModes is the daemon's side of the UI mode.
type uiModes struct {
	d     *Daemon
	a     *uimode.Applier
	shown shownStates
}

func newUIModes(d *Daemon, sys System, layout paths.Layout) *uiModes {
	return &uiModes{d: d, a: &uimode.Applier{Settings: sys.ESSettings, BatoceraConf: d.opts.ConfigFile,
		Backup: filepath.Join(layout.State, "es_settings.cfg.bak"), Service: uimode.InitScript{Path: sys.ESInit},
		ES: uiModeES{d}, Clock: d.clock}}
}

// uiModeES is the ES client of the moment (a reload may replace it).
type uiModeES struct{ d *Daemon }

func (e uiModeES) RunningGame(ctx context.Context) (*es.Game, error) {
	return e.d.es().RunningGame(ctx)
}
func (e uiModeES) Caps(ctx context.Context) (es.Caps, error) { return e.d.es().Caps(ctx) }

// mode is the mode read back; "" when the files cannot be read.
func (u *uiModes) mode() string {
	st, err := u.a.Read()
	if err != nil {
		u.d.log.Warn().Err(err).Msg("EmulationStation's UI mode not read")
		return ""
	}
	return st.Mode
}

// publish sends the select's state when it changed.
func (u *uiModes) publish() {
	s := u.d.eng.currentRules().Settings
	if !s.Household {
		return
	}
	u.shown.publish(u.d, haentities.UIModeStates(s, u.mode(), u.d.clock.Now()))
}

// run publishes the mode at start and whenever es_settings.cfg changes
// (ES's menus save it: the passkey's unlock sets Full).
func (u *uiModes) run(ctx context.Context) error {
	u.publish()
	dir := filepath.Dir(u.a.Settings)
	w, err := watchDir(dir)
	if err != nil {
		u.d.log.Warn().Err(err).Msg("EmulationStation's settings not watched; the UI mode is read again after each change from here")
		<-ctx.Done()
		return nil
	}
	return u.d.watchFiles(ctx, w, func(context.Context) { u.publish() }, u.a.Settings)
}

// apply changes the mode for Home Assistant's select, in the background:
// it takes ES's restart, longer than a command waits. The state is
// published afterwards whatever happened, so the select shows the mode
// in force.
func (u *uiModes) apply(mode, by string) {
	ctx, cancel := context.WithTimeout(u.d.runCtx, uiModeTimeout)
	go func() {
		defer cancel()
		defer u.publish()
		st, err := u.a.Apply(ctx, mode)
		if err != nil {
			u.d.log.Warn().Str("by", by).Str("mode", mode).Str("reason", err.Error()).Msg("UI mode not changed")
			return
		}
		u.d.log.Info().Str("by", by).Str("mode", st.Mode).Bool("restarted", st.Restarted).Msg("UI mode set")
	}()
}

// PlanUIMode says what SetUIMode would do.
func (c householdControls) PlanUIMode(ctx context.Context, mode string) (string, error) {
	st, err := c.d.uiModes.a.Plan(ctx, mode)
	return st.Text, err
}

// SetUIMode changes the mode and reads it back.
func (c householdControls) SetUIMode(ctx context.Context, mode, by string) (household.Report, string, error) {
	ctx, cancel := context.WithTimeout(ctx, uiModeTimeout)
	defer cancel()
	st, err := c.d.uiModes.a.Apply(ctx, mode)
	c.d.uiModes.publish()
	if err != nil {
		return household.Report{}, "", err
	}
	c.d.log.Info().Str("by", by).Str("mode", st.Mode).Bool("restarted", st.Restarted).Msg("UI mode set")
	rep, err := c.Report(ctx)
	return rep, st.Text, err
}

// SetUIMode is Home Assistant's select: applied in the background.
func (h haHousehold) SetUIMode(_ context.Context, mode, by string) error {
	h.d.uiModes.apply(mode, by)
	return nil
}

// DenyTime answers the player's request for more time with no.
func (h haHousehold) DenyTime(_ context.Context, by string) error {
	e, err := h.enforcer()
	if err != nil {
		return err
	}
	_, err = e.Deny(by)
	return err
}

// entry answers one of Cabinet's entries chosen in ES (`cabinet entry`).
func (d *Daemon) entry(_ context.Context, name string) (string, error) {
	e := d.household
	if e == nil {
		return "Cabinet is starting: try again in a moment.", nil
	}
	switch entry, _ := packaging.EntryNamed(name); entry.Name {
	case packaging.EntryAskTime:
		return e.RequestTime(entry.Minutes)
	case packaging.EntryTimeLeft:
		return e.TimeLeftText(), nil
	}
	return "", fmt.Errorf("%q is not one of Cabinet's entries: reinstall Cabinet (cabinet install)", untrusted.Clean(name, 40))
}
