package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/controllers"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// This file wires the household's play-time rules (package household) into
// the daemon: the enforcer's view of the running game, the screen and the
// quit path it acts through, Home Assistant's states and events, the
// controls of Home Assistant and MCP, and the writes of cabinet.household.*
// keys to the configuration file.

// saveWait bounds the wait for RetroArch's save state before the quit: the
// game is closed within about two seconds of its limit.
const saveWait = 1500 * time.Millisecond

// newEnforcer builds the enforcer over the daemon's engine and links.
func (d *Daemon) newEnforcer() *household.Enforcer {
	pub := &householdStates{d: d}
	return &household.Enforcer{Clock: d.clock, Log: d.log, Store: d.eng.store(), Now: d.opts.Now, Synced: d.clockSynced,
		Rules:   func() household.Rules { return d.config().Household },
		Running: d.runningGame, Applied: d.eng.appliedCh,
		Screen: householdScreen{d}, Ender: householdEnder{d},
		Report: pub.report, Event: pub.event, Armed: d.opts.HouseholdArmed}
}

// runningGame is the tracker's running game, as the enforcer counts it.
func (d *Daemon) runningGame() household.Running {
	snap := d.eng.snapshot()
	r := household.Running{LastBootID: snap.Last.BootID, LastEnd: snap.Last.EndBoot, LastFrom: snap.Last.EndBoot - snap.Last.Duration}
	if snap.Playing && !snap.CurrentIgnored {
		r.Playing, r.BootID, r.From = true, snap.CurrentBootID, snap.CurrentBoot
		r.Name, r.System, r.Rom = haentities.GameLabel(snap.Current), snap.Current.System, snap.Current.Rom
		r.Profile = snap.Current.Profile
	}
	return r
}

// householdStates publishes the rules' states when they change, and their
// events, when Home Assistant is told about them (cabinet.household.enabled
// or cabinet.ha.household).
type householdStates struct {
	d     *Daemon
	shown shownStates
}

// shownStates publishes a set of state messages only when it differs from the last one
// published: a loop that reports at every step sends only changes.
type shownStates struct {
	mu   sync.Mutex
	last []byte
}

func (p *shownStates) publish(d *Daemon, msgs []haentities.Message) {
	var key [][]byte
	for _, m := range msgs {
		key = append(key, []byte(m.Topic), m.Payload)
	}
	k := bytes.Join(key, []byte{0})
	p.mu.Lock()
	same := bytes.Equal(k, p.last)
	p.last = k
	p.mu.Unlock()
	if !same {
		d.publish(msgs...)
	}
}

func (p *householdStates) announced() (haentities.Settings, bool) {
	s := p.d.eng.currentRules().Settings
	return s, s.Household || s.LimitsOn
}

func (p *householdStates) report(st household.Status) {
	s, on := p.announced()
	if !on {
		return
	}
	p.shown.publish(p.d, haentities.HouseholdStates(s, householdState(p.d.config().Household.For(st.Profile), st), p.d.clock.Now()))
}

func (p *householdStates) event(ev household.Event) {
	s, on := p.announced()
	if !on {
		return
	}
	p.d.publish(haentities.LimitEventMessage(s, ev.Kind, ev.Game, ev.Detail, ev.Profile, ev.Minutes, ev.When, p.d.clock.Now()))
}

// householdState is a status as Home Assistant's entities show it.
func householdState(r household.Rules, st household.Status) haentities.HouseholdState {
	h := haentities.HouseholdState{Enabled: st.Enabled, State: string(st.State), LimitMinutes: st.Limit, BonusMinutes: st.Bonus,
		UsedSeconds: int64(st.Used / time.Second), LeftSeconds: -1, WhyBlocked: st.Refusal, Paused: st.Paused, Day: st.Day,
		ClockTrusted: st.ClockTrusted, Profile: st.Profile, Player: st.Player}
	if st.Left >= 0 {
		h.LeftSeconds = int64(st.Left / time.Second)
	}
	if r.Bedtime != nil {
		h.Bedtime = r.Bedtime.String()
	}
	return h
}

// householdScreen shows the enforcer's messages over the game (RetroArch)
// or in ES's menus.
type householdScreen struct{ d *Daemon }

func (s householdScreen) OverGame(ctx context.Context, text string) error {
	l := s.d.links()
	// SHOW_MSG has no reply: GET_STATUS says whether a game shows it.
	st, err := l.RetroArch.Status(ctx)
	if err != nil {
		return err
	}
	if st.State != retroarch.StatePlaying && st.State != retroarch.StatePaused {
		return errors.New("retroarch runs no game")
	}
	return l.RetroArch.ShowMessage(ctx, text)
}

func (s householdScreen) Notify(ctx context.Context, text string) error {
	return s.d.es().Notify(ctx, text)
}

// householdEnder saves a RetroArch game as Batocera's settings allow, then
// quits it through the MCP tools' quit path (without their rate limit).
type householdEnder struct{ d *Daemon }

func (x householdEnder) Plan(ctx context.Context, g household.Running) household.SavePlan {
	st, err := x.d.links().RetroArch.Status(ctx)
	if err != nil || st.State != retroarch.StatePlaying && st.State != retroarch.StatePaused {
		return household.SaveUnknown
	}
	conf, err := batoconf.ReadFile(x.d.opts.ConfigFile)
	if err != nil {
		x.d.log.Debug().Err(err).Msg("household: batocera.conf unreadable; Batocera's defaults assumed for saving")
	}
	return household.PlanSave(func(k string) (string, bool) { return batoconf.Get(conf, k) }, g.System, g.Rom)
}

func (x householdEnder) End(ctx context.Context, g household.Running, save bool) (household.Ending, error) {
	var ending household.Ending
	if save {
		plan := x.Plan(ctx, g)
		switch plan {
		case household.SaveAuto:
			ending.Saved = true // RetroArch writes its .auto state as it closes (ES's /emukill is a SIGTERM)
		case household.SaveNewSlot:
			if err := x.saveState(ctx); err != nil {
				ending.SaveNote = "not saved: " + err.Error()
			} else {
				ending.Saved = true
			}
		default:
			ending.SaveNote = plan.String()
		}
	}
	srv := x.d.mcpServer(false)
	if srv == nil {
		return ending, errors.New("the tools are not ready")
	}
	_, err := srv.QuitForRules(ctx)
	return ending, err
}

// saveState sends SAVE_STATE and waits (bounded) for the new state file in
// RetroArch's savestate_directory.
func (x householdEnder) saveState(ctx context.Context) error {
	l := x.d.links()
	dir, err := l.RetroArch.ConfigParam(ctx, retroarch.ConfigSavestateDirectory)
	if err != nil || dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("RetroArch did not say where it saves states")
	}
	// RetroArch names a path on this machine; under cabinet.paths.root (a
	// simulated tree) a path it names inside the tree is used as it is.
	if _, err := os.Stat(dir); err != nil && l.ResolvePath != nil {
		dir = l.ResolvePath(dir)
	}
	since := time.Now()
	before := newestState(dir)
	if err := l.RetroArch.Send(ctx, retroarch.CmdSaveState); err != nil {
		return fmt.Errorf("RetroArch did not take the save command")
	}
	deadline := time.Now().Add(saveWait)
	for {
		if t := newestState(dir); t.After(before) && !t.Before(since.Add(-time.Second)) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("RetroArch wrote no save state within %v (the core may not support save states)", saveWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newestState is the newest modification time of a save-state file in dir
// and the folders right under it (RetroArch may sort states by core or
// game), looking at no more than a few thousand entries.
func newestState(dir string) time.Time {
	var newest time.Time
	seen := 0
	var walk func(string, int)
	walk = func(d string, depth int) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return
		}
		for _, e := range entries {
			if seen++; seen > 4000 {
				return
			}
			if e.IsDir() {
				if depth < 1 {
					walk(filepath.Join(d, e.Name()), depth+1)
				}
				continue
			}
			if !isStateFile(e.Name()) {
				continue
			}
			if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.ModTime().After(newest) {
				newest = info.ModTime()
			}
		}
	}
	walk(dir, 0)
	return newest
}

// isStateFile matches RetroArch's state names: .state, .state1 …, .state.auto.
func isStateFile(name string) bool {
	ext := filepath.Ext(name)
	if ext == ".auto" {
		ext = filepath.Ext(name[:len(name)-len(ext)])
	}
	if len(ext) < 6 || ext[:6] != ".state" {
		return false
	}
	for _, c := range ext[6:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// writeSettings writes cabinet.* keys to the configuration file the way
// batocera-settings-set does, and reloads it at once. It fails when a value
// does not take effect (an environment variable or --set overrides it).
func (d *Daemon) writeSettings(ctx context.Context, values map[string]string) error {
	file := d.opts.ConfigFile
	if file == "" {
		return errors.New("cabinet serve runs without a configuration file to write; set the keys in batocera.conf")
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kvs := make([]batoconf.KV, 0, len(keys))
	for _, k := range keys {
		kvs = append(kvs, batoconf.KV{Key: k, Value: values[k]})
	}
	d.writing.Lock()
	defer d.writing.Unlock()
	data, err := batoconf.ReadFile(file) // a missing file reads as empty
	if err != nil {
		return err
	}
	out, err := batoconf.Set(data, kvs...)
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	if err := batoconf.WriteFile(file, out); err != nil {
		return err
	}
	d.reload(ctx)
	d.mu.Lock()
	cfgErr := d.cfgErr
	d.mu.Unlock()
	if cfgErr != nil {
		return fmt.Errorf("%s was written, but the configuration is invalid so the last good one stays in force: %w", file, cfgErr)
	}
	got := d.config().Household.Values()
	for _, k := range keys {
		want, _ := household.Parse(map[string]string{k: values[k]})
		if household.IsKey(k) && want.Values()[k] != got[k] {
			return fmt.Errorf("%s was written, but %s is still %q: a CABINET_ environment variable or --set of cabinet serve overrides it", file, k, got[k])
		}
	}
	return nil
}

// householdControls are the household's controls from Home Assistant
// (sensors.HouseholdControl) and MCP (tools.Household).
type householdControls struct{ d *Daemon }

func (c householdControls) enforcer() (*household.Enforcer, error) {
	if c.d.household == nil {
		return nil, errors.New("the play-time rules are not running yet; try again in a moment")
	}
	return c.d.household, nil
}

func (c householdControls) report(st household.Status) household.Report {
	rep := household.NewReport(c.d.config().Household, st, time.Local)
	if c.d.uiModes != nil {
		if m := c.d.uiModes.mode(); m != "" {
			rep.UIMode = &m
		}
	}
	return rep
}

// Report is the rules and today's budget.
func (c householdControls) Report(ctx context.Context) (household.Report, error) {
	e, err := c.enforcer()
	if err != nil {
		return household.Report{}, err
	}
	return c.report(e.Status()), nil
}

// SetRules writes cabinet.household.* keys and applies them.
func (c householdControls) SetRules(ctx context.Context, values map[string]string, by string) (household.Report, error) {
	for k, v := range values {
		if err := household.Check(k, v); err != nil {
			return household.Report{}, err
		}
	}
	if err := c.d.writeSettings(ctx, values); err != nil {
		return household.Report{}, err
	}
	c.d.log.Info().Str("by", by).Int("keys", len(values)).Msg("household: rules changed")
	return c.Report(ctx)
}

// SetEnabled turns the rules on or off (switch.batocera_limits).
func (c householdControls) SetEnabled(ctx context.Context, on bool, by string) error {
	v := "0"
	if on {
		v = "1"
	}
	_, err := c.SetRules(ctx, map[string]string{household.Prefix + "enabled": v}, by)
	return err
}

func (c householdControls) SetTodayLimit(ctx context.Context, minutes int, by string) (household.Report, error) {
	e, err := c.enforcer()
	if err != nil {
		return household.Report{}, err
	}
	st, err := e.SetTodayLimit(minutes, by)
	return c.report(st), err
}

func (c householdControls) Grant(ctx context.Context, minutes int, by string) (household.Report, error) {
	e, err := c.enforcer()
	if err != nil {
		return household.Report{}, err
	}
	st, err := e.Grant(minutes, by)
	return c.report(st), err
}

func (c householdControls) Pause(ctx context.Context, on bool, by string) (household.Report, error) {
	e, err := c.enforcer()
	if err != nil {
		return household.Report{}, err
	}
	st, err := e.Pause(on, by)
	return c.report(st), err
}

// haHousehold is householdControls as Home Assistant's controls call them.
type haHousehold struct{ householdControls }

func (h haHousehold) SetTodayLimit(ctx context.Context, minutes int, by string) error {
	_, err := h.householdControls.SetTodayLimit(ctx, minutes, by)
	return err
}

func (h haHousehold) Grant(ctx context.Context, minutes int, by string) error {
	_, err := h.householdControls.Grant(ctx, minutes, by)
	return err
}

func (h haHousehold) Pause(ctx context.Context, on bool, by string) error {
	_, err := h.householdControls.Pause(ctx, on, by)
	return err
}

func (h haHousehold) SetPlayer(ctx context.Context, name, by string) error {
	_, err := h.householdControls.SetPlayer(ctx, name, by)
	return err
}

// SetPlayer chooses the profile playing from the next game ("" none).
func (c householdControls) SetPlayer(ctx context.Context, name, by string) (household.Report, error) {
	e, err := c.enforcer()
	if err != nil {
		return household.Report{}, err
	}
	st, err := e.SetPlayer(name, by)
	return c.report(st), err
}

// padsChanged chooses the player by the game pad picked up: when the pads connected include one
// profile's bound pad and no other profile's, that profile plays (from the next game; a game
// running keeps its player). Two bound pads at once choose nobody: the choice stays as it was.
func (d *Daemon) padsChanged(pads []controllers.Pad) {
	e := d.household
	if e == nil {
		return
	}
	rules := d.config().Household
	var bound []string
	for _, p := range rules.Profiles {
		if slices.ContainsFunc(pads, func(pad controllers.Pad) bool { return p.Holds(pad.Key) }) {
			bound = append(bound, p.Name)
		}
	}
	if len(bound) != 1 || e.Player() == bound[0] {
		return
	}
	if _, err := e.SetPlayer(bound[0], "pad"); err != nil {
		d.log.Warn().Err(err).Msg("household: the player of the pad picked up not chosen")
	}
}
