package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/library/rommreport"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// This file wires the save sync (package savesync) into the daemon: when it runs (a game ended
// and its emulator flushed, a game selected in ES, an install, the start, an idle pass), which
// games it takes (the installs, the games RomM was found to know), Home Assistant's sensor and
// event, and the MCP tools' view.

// Timing of the save sync.
const (
	// syncIdle is the idle pass: every game's saves, never during a game.
	syncIdle = 15 * time.Minute
	// selectDebounce lets the cursor settle: a game selected for this long is synced.
	selectDebounce = 2 * time.Second
	// flushQuiet is how long a save must stay unchanged after its game ended before it is
	// read (RetroArch writes it as the content unloads); flushMax bounds the wait.
	flushQuiet = 2 * time.Second
	flushMax   = 30 * time.Second
	flushPoll  = 250 * time.Millisecond
)

// syncReq asks the save sync loop for a pass.
type syncReq struct {
	trigger string
	game    savesync.Game // one game; ROM "" for every game
	resolve bool          // the game's RomM id is to be found first
	reply   chan syncReply
	// progress, when set, is told how many saves of the pass are done (MCP's notifications).
	progress func(done, total int)
}

type syncReply struct {
	res savesync.Result
	err error
}

// saveSync is the daemon's save sync.
type saveSync struct {
	d    *Daemon
	reqs chan syncReq

	mu sync.Mutex
	// playing is the game running, as the last event left it: ES's game-end names no game.
	playing  savesync.Game
	cfg      savesync.Config
	syncer   *savesync.Syncer
	resolver *rommreport.FileResolver
	syncing  bool
	held     string // RomM's failure that holds the passes back
	next     time.Time
	failures int
	shown    shownStates
	told     map[string]bool // conflicts and errors already announced
	// waiting are games that ended or were selected while RomM could not be asked.
	waiting map[string]savesync.Game
}

func newSaveSync(d *Daemon) *saveSync {
	return &saveSync{d: d, reqs: make(chan syncReq, 64), told: map[string]bool{}}
}

// ask queues r; a full queue drops it (a pass for every game follows anyway).
func (s *saveSync) ask(r syncReq) bool {
	select {
	case s.reqs <- r:
		return true
	default:
		return false
	}
}

// followed is told of every event once applied: it keeps the running game, and a game's end
// sends its saves once its emulator has flushed them.
func (s *saveSync) followed(ev tracker.Event) {
	snap := s.d.eng.snapshot()
	s.mu.Lock()
	if snap.Playing && snap.Current.Rom != "" {
		cur := snap.Current
		s.playing = savesync.Game{System: cur.System, ROM: cur.Rom, Core: cur.Core, Name: haentities.GameLabel(cur)}
		if cur.Emulator != "" && cur.Emulator != "libretro" {
			s.playing = savesync.Game{} // a standalone emulator keeps its saves its own way
		}
	}
	g := s.playing
	if ev.Kind == tracker.KindGameEnd {
		s.playing = savesync.Game{}
	}
	s.mu.Unlock()
	switch ev.Kind {
	case tracker.KindGameEnd:
		if ev.Path != "" && ev.Path != g.ROM {
			g = savesync.Game{System: ev.System, ROM: ev.Path, Core: ev.Core, Name: ev.Name}
			if ev.Emulator != "" && ev.Emulator != "libretro" {
				return
			}
		}
		if g.ROM != "" {
			s.ask(syncReq{trigger: "game ended", game: g, resolve: true})
		}
	case tracker.KindGameSelected:
		s.selected(ev)
	}
}

// selected is told of a game selected in ES: RomM's newer save is put in place before it is
// launched (the launcher's path never waits on the network).
func (s *saveSync) selected(ev tracker.Event) {
	if ev.Kind != tracker.KindGameSelected || ev.Path == "" || s.d.eng.snapshot().Screensaver {
		return // the screensaver's picks are not the player's
	}
	s.ask(syncReq{trigger: "game selected", game: savesync.Game{System: ev.System, ROM: ev.Path, Name: ev.Name}, resolve: true})
}

// installed is told of an install record written: the new game's saves come with it.
func (s *saveSync) installed(in install.Install) {
	if in.Listed && in.ROMID > 0 {
		s.ask(syncReq{trigger: "installed", game: savesync.Game{System: in.System, ROM: in.Path, ROMID: in.ROMID, Name: in.Name}})
	}
}

// run is the loop: a pass at start and every syncIdle when no game runs, one per request.
func (s *saveSync) run(ctx context.Context) error {
	tick, tc := s.d.clock.NewTicker(syncIdle)
	defer tick.Stop()
	wake := s.d.saveWake
	started := false
	pending := map[string]syncReq{} // selections waiting for the cursor to settle
	var settle <-chan time.Time
	var settleTimer interface{ Stop() bool }
	var retry <-chan time.Time
	var retryTimer interface{ Stop() bool }
	for {
		cfg := s.configure()
		if cfg.On && !started {
			started = true
			s.passAll(ctx, "start", nil)
		}
		// RomM failing: every game again once its backoff has passed.
		if retryTimer != nil {
			retryTimer.Stop()
			retryTimer, retry = nil, nil
		}
		if at, held := s.retryAt(); held && cfg.On {
			t, c := s.d.clock.NewTimer(max(at.Sub(s.d.clock.Now()), time.Millisecond))
			retryTimer, retry = t, c
		}
		select {
		case <-ctx.Done():
			return nil
		case <-retry:
			retryTimer, retry = nil, nil
			if s.d.eng.snapshot().Playing {
				s.mu.Lock()
				s.next = s.d.clock.Now().Add(rommreport.MinServerBackoff) // after the game, not during it
				s.mu.Unlock()
				continue
			}
			s.passAll(ctx, "retry", nil)
		case <-wake:
		case <-tc:
			if cfg.On && !s.d.eng.snapshot().Playing {
				s.passAll(ctx, "idle", nil)
			}
		case r := <-s.reqs:
			if r.trigger == "game selected" {
				pending = map[string]syncReq{r.game.ROM: r} // only the latest selection counts
				if settleTimer != nil {
					settleTimer.Stop()
				}
				t, c := s.d.clock.NewTimer(selectDebounce)
				settleTimer, settle = t, c
				continue
			}
			s.serve(ctx, cfg, r)
		case <-settle:
			settle = nil
			for _, r := range pending {
				if !s.d.eng.snapshot().Playing {
					s.serve(ctx, cfg, r)
				}
			}
			pending = map[string]syncReq{}
		}
	}
}

func (s *saveSync) serve(ctx context.Context, cfg savesync.Config, r syncReq) {
	answer := func(res savesync.Result, err error) {
		if r.reply != nil {
			r.reply <- syncReply{res, err}
		}
	}
	if !cfg.On {
		answer(savesync.Result{}, errors.New(offReason(cfg)))
		return
	}
	if r.game.ROM == "" {
		res, err := s.passAll(ctx, r.trigger, r.progress)
		answer(res, err)
		return
	}
	if r.trigger == "game ended" {
		s.waitFlush(ctx, r.game)
	}
	if r.reply == nil && !s.due() {
		s.later(r.game) // RomM is failing: the pass after its backoff takes it with every game
		return
	}
	g, err := s.known(ctx, cfg, r.game, r.resolve)
	if err != nil {
		if !errors.Is(err, errNotSynced) {
			s.later(r.game) // RomM could not be asked: with the next pass
		}
		answer(savesync.Result{}, err)
		return
	}
	res, err := s.pass(ctx, r.trigger, []savesync.Game{g}, r.progress)
	answer(res, err)
}

func offReason(cfg savesync.Config) string {
	if cfg.Problem != "" {
		return cfg.Problem
	}
	return "save sync is off: set cabinet.romm.sync_saves=1 (and pair with `cabinet romm pair --sync-saves`)"
}

// configure builds the syncer for the configuration in force.
func (s *saveSync) configure() savesync.Config {
	cfg := s.d.config().SaveSync
	s.mu.Lock()
	defer s.mu.Unlock()
	if reflect.DeepEqual(cfg, s.cfg) && (s.syncer != nil || !cfg.On) {
		return cfg
	}
	if cfg.Asked && !cfg.On && !reflect.DeepEqual(cfg, s.cfg) {
		s.d.log.Warn().Msg(cfg.Problem)
	}
	s.cfg, s.syncer, s.resolver = cfg, nil, nil
	s.failures, s.next, s.held = 0, time.Time{}, ""
	if !cfg.On {
		return cfg
	}
	c, err := s.d.rommClient(rommreport.Config{URL: cfg.URL, Token: cfg.Token, CAFile: cfg.CAFile})
	if err != nil {
		s.held = "the RomM client cannot be built: " + err.Error()
		s.d.log.Error().Err(err).Msg("save sync off")
		return cfg
	}
	s.syncer = &savesync.Syncer{Remote: c, DeviceID: cfg.DeviceID, Kept: savesync.Kept{DB: s.d.eng.store()},
		Layout: savesync.Layout{Saves: cfg.Saves}, Backups: s.backups(cfg), States: cfg.States,
		Running: func() string {
			if snap := s.d.eng.snapshot(); snap.Playing {
				return snap.Current.Rom
			}
			return ""
		},
		AutoLoads: s.autoLoads, Now: s.d.clock.Now, Log: s.d.log}
	s.resolver = s.d.romResolver(c, cfg.URL, cfg.Root, cfg.PlatformMap)
	return cfg
}

func (s *saveSync) backups(cfg savesync.Config) savesync.Backups {
	return savesync.Backups{Dir: savesync.Layout{Saves: cfg.Saves}.BackupDir(), Keep: cfg.Keep, MaxBytes: cfg.MaxBytes}
}

// autoLoads reads Batocera's autosave setting for the game, as its configgen does: a state is
// loaded at launch when it is on.
func (s *saveSync) autoLoads(system, rom string) bool {
	path := s.d.opts.ConfigFile
	if path == "" {
		return false
	}
	data, err := batoconf.ReadFile(path)
	if err != nil {
		return false
	}
	return household.PlanSave(func(k string) (string, bool) { return batoconf.Get(data, k) }, system, rom) == household.SaveAuto
}

// known finds g's RomM id (the install record, else RomM by the file's hashes or name) and
// remembers it for the idle passes.
func (s *saveSync) known(ctx context.Context, cfg savesync.Config, g savesync.Game, resolve bool) (savesync.Game, error) {
	if !cfg.Covers(g.System) {
		return g, fmt.Errorf("the saves of %s games are %w (%s)", g.System, errNotSynced, coverWhy(cfg, g.System))
	}
	kept := savesync.Kept{DB: s.d.eng.store()}
	if old, ok, _ := kept.Game(g.ROM); ok && g.ROMID == 0 {
		g.ROMID = old.ROMID
	}
	if g.ROMID == 0 && resolve {
		s.mu.Lock()
		res := s.resolver
		s.mu.Unlock()
		if res == nil {
			return g, errors.New("the RomM client is not ready")
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		id, ok, err := res.ROMID(cctx, haentities.Session{Rom: g.ROM, System: g.System})
		cancel()
		if err != nil {
			return g, fmt.Errorf("find the game in RomM: %w", err)
		}
		if !ok {
			return g, fmt.Errorf("RomM does not have %s: its saves stay on the cabinet (%w)", g.Title(), errNotSynced)
		}
		g.ROMID = id
	}
	if g.ROMID == 0 {
		return g, fmt.Errorf("RomM does not have %s: its saves stay on the cabinet (%w)", g.Title(), errNotSynced)
	}
	if err := kept.Remember(g); err != nil {
		s.d.log.Warn().Err(err).Msg("save sync")
	}
	return g, nil
}

// errNotSynced is wrapped when a game's saves are not the sync's: RomM does not have it, or its
// system is not covered.
var errNotSynced = errors.New("not synced")

// later keeps g for the next pass of every game: it ended or was selected while RomM could not
// be asked.
func (s *saveSync) later(g savesync.Game) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting == nil {
		s.waiting = map[string]savesync.Game{}
	}
	if len(s.waiting) < 1000 {
		s.waiting[g.ROM] = g
	}
}

// takeWaiting hands over the games kept by later.
func (s *saveSync) takeWaiting() map[string]savesync.Game {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.waiting
	s.waiting = nil
	return w
}

func coverWhy(cfg savesync.Config, system string) string {
	if savesync.Standalone(system) {
		return "its emulator keeps saves that do not map to one game"
	}
	return "not in cabinet.romm.sync_systems"
}

// everyGame is what the start and idle passes take: the games RomM was found to know and
// Cabinet's installs from this RomM, within the covered systems.
func (s *saveSync) everyGame(cfg savesync.Config) []savesync.Game {
	kept := savesync.Kept{DB: s.d.eng.store()}
	seen := map[string]bool{}
	var out []savesync.Game
	gs, _ := kept.Games()
	for _, g := range gs {
		if cfg.Covers(g.System) && !seen[g.ROM] {
			seen[g.ROM] = true
			out = append(out, g)
		}
	}
	ins, _ := install.Kept{DB: s.d.eng.store()}.Installs()
	for _, in := range ins {
		if in.RomM == cfg.URL && in.ROMID > 0 && cfg.Covers(in.System) && !seen[in.Path] {
			seen[in.Path] = true
			out = append(out, savesync.Game{System: in.System, ROM: in.Path, ROMID: in.ROMID, Name: in.Name})
		}
	}
	return out
}

func (s *saveSync) passAll(ctx context.Context, trigger string, progress func(done, total int)) (savesync.Result, error) {
	cfg := s.configure()
	if !cfg.On {
		return savesync.Result{}, errors.New(offReason(cfg))
	}
	gs := s.everyGame(cfg)
	var lookErr error
	for rom, g := range s.takeWaiting() {
		if slices.ContainsFunc(gs, func(x savesync.Game) bool { return x.ROM == rom }) {
			continue
		}
		found, err := s.known(ctx, cfg, g, true)
		switch {
		case err == nil:
			gs = append(gs, found)
		case !errors.Is(err, errNotSynced):
			s.later(g) // still not: the pass after
			lookErr = err
		}
	}
	if len(gs) == 0 && lookErr != nil {
		s.outcome(ctx, lookErr) // nothing else to try RomM with: its failure holds the passes back
		s.report()
		return savesync.Result{}, lookErr
	}
	return s.pass(ctx, trigger, gs, progress)
}

// retryAt is when the passes held back by RomM's failure go again.
func (s *saveSync) retryAt() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next, s.held != "" && !s.next.IsZero()
}

func (s *saveSync) due() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.d.clock.Now().Before(s.next)
}

// pass runs one sync and follows up: backoff, Home Assistant, the log.
func (s *saveSync) pass(ctx context.Context, trigger string, gs []savesync.Game, progress func(done, total int)) (savesync.Result, error) {
	s.mu.Lock()
	sy := s.syncer
	if sy == nil {
		held := s.held
		s.mu.Unlock()
		return savesync.Result{}, errors.New(held)
	}
	s.syncing = true
	s.mu.Unlock()
	s.report()
	res, err := sy.SyncProgress(ctx, trigger, gs, progress)
	s.mu.Lock()
	s.syncing = false
	s.mu.Unlock()
	if len(gs) > 0 || err != nil {
		s.outcome(ctx, err)
	}
	s.follow(res)
	s.report()
	return res, err
}

// outcome keeps RomM's backoff: a failed pass holds the next ones back (30 s doubling to
// 30 min, the reporter's), a pass that went through ends it.
func (s *saveSync) outcome(ctx context.Context, err error) {
	s.mu.Lock()
	switch {
	case err != nil && ctx.Err() == nil:
		wait := rommreport.MinServerBackoff
		for i := 0; i < s.failures && wait < rommreport.MaxServerBackoff; i++ {
			wait *= 2
		}
		s.failures++
		s.next = s.d.clock.Now().Add(min(wait, rommreport.MaxServerBackoff))
		first := s.held == ""
		s.held = err.Error()
		s.mu.Unlock()
		if first {
			s.d.log.Warn().Err(err).Msg("saves not synced with RomM; they stay on the cabinet and are tried again")
			s.problem(haentities.SaveProblemError, savesync.Game{}, "", err.Error(), "The saves stay on the cabinet; Cabinet tries again by itself. Check that RomM is up and that the cabinet's pairing still works (cabinet doctor).")
		}
	case err == nil:
		s.failures, s.next, s.held = 0, time.Time{}, ""
		s.mu.Unlock()
	default:
		s.mu.Unlock()
	}
}

// follow logs a pass and tells the household of new conflicts and errors.
func (s *saveSync) follow(res savesync.Result) {
	if res.Count(savesync.Uploaded)+res.Count(savesync.Downloaded)+res.Count(savesync.Conflicted)+res.Count(savesync.Failed) > 0 {
		s.d.log.Info().Int("session", res.Session).Int("uploaded", res.Count(savesync.Uploaded)).Int("downloaded", res.Count(savesync.Downloaded)).
			Int("conflicts", res.Count(savesync.Conflicted)).Int("failed", res.Count(savesync.Failed)).Msg("saves synced with RomM")
	}
	for _, it := range res.Items {
		switch it.Action {
		case savesync.Conflicted:
			c, ok, _ := savesync.Kept{DB: s.d.eng.store()}.Conflict(it.Game.ROMID, it.Slot)
			if !ok {
				continue
			}
			id := fmt.Sprintf("c/%d/%s/%s/%s", c.Game.ROMID, c.Slot, c.LocalHash, c.RomMHash)
			if s.tell(id) {
				s.problem(haentities.SaveProblemConflict, c.Game, c.Slot, c.Reason, savesync.HowToResolve(c))
			}
		case savesync.Failed:
			if s.tell(fmt.Sprintf("e/%d/%s/%s", it.Game.ROMID, it.Slot, it.Detail)) {
				s.d.log.Warn().Str("game", it.Game.Title()).Str("slot", it.Slot).Msg(it.Detail)
				s.problem(haentities.SaveProblemError, it.Game, it.Slot, it.Detail, "The save on the cabinet is as it was; Cabinet tries again at the next sync.")
			}
		case savesync.Downloaded:
			if it.Hidden != "" {
				s.d.log.Warn().Str("game", it.Game.Title()).Str("state", it.Hidden).Msg("RomM's save is in place, but Batocera loads the game's auto state at launch, which hides it")
				s.problem(haentities.SaveProblemError, it.Game, it.Slot, "RomM's save is in place, but Batocera loads the auto state "+it.Hidden+" when the game starts, which takes over from it",
					"Load the save from RetroArch's menu (or restart the game without its state), or move that state aside; turn off auto-save for the game to keep this from happening.")
			}
		}
	}
}

// tell reports whether id is new (each conflict or error is announced once per daemon).
func (s *saveSync) tell(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.told[id] {
		return false
	}
	if len(s.told) > 1000 {
		s.told = map[string]bool{}
	}
	s.told[id] = true
	return true
}

// Status is the sync as the household sees it.
func (s *saveSync) Status() savesync.Status {
	s.mu.Lock()
	cfg, syncing, held, next := s.cfg, s.syncing, s.held, s.next
	s.mu.Unlock()
	if !reflect.DeepEqual(cfg, s.d.config().SaveSync) {
		cfg = s.d.config().SaveSync
	}
	st := savesync.Kept{DB: s.d.eng.store()}.Describe(cfg, syncing, held, s.backups(cfg), s.d.clock.Now())
	if held != "" {
		st.NextTry = next
	}
	return st
}

// report publishes sensor.batocera_save_sync when it changed.
func (s *saveSync) report() {
	settings := s.d.eng.currentRules().Settings
	if !settings.SaveSync {
		return
	}
	s.shown.publish(s.d, haentities.SaveSyncStates(settings, saveSyncState(s.Status()), s.d.clock.Now()))
}

func (s *saveSync) problem(kind string, g savesync.Game, slot, detail, todo string) {
	settings := s.d.eng.currentRules().Settings
	if !settings.SaveSync {
		return
	}
	s.d.publish(haentities.SaveProblemMessage(settings, haentities.SaveProblem{Kind: kind, Game: g.Title(), System: g.System,
		ROM: g.ROM, Slot: slot, Detail: detail, Todo: todo}, s.d.clock.Now()))
}

func saveSyncState(st savesync.Status) haentities.SaveSyncState {
	return haentities.SaveSyncState{State: st.State, LastSync: st.LastSync, UploadsToday: st.UploadsToday, DownloadsToday: st.DownloadsToday,
		Conflicts: st.Conflicts, LastError: st.LastError, BackupBytes: st.BackupBytes}
}

// waitFlush waits until the game's saves stop changing: RetroArch writes the .srm as the
// content unloads, which may be after ES's game-end.
func (s *saveSync) waitFlush(ctx context.Context, g savesync.Game) {
	cfg := s.d.config().SaveSync
	l := savesync.Layout{Saves: cfg.Saves}
	paths := []string{l.Path(g, savesync.Battery)}
	if cfg.States {
		paths = append(paths, l.Path(g, savesync.AutoState))
	}
	look := func() string {
		var b bytes.Buffer
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil {
				fmt.Fprintf(&b, "%d/%d;", fi.Size(), fi.ModTime().UnixNano())
			}
			b.WriteByte('|')
		}
		return b.String()
	}
	deadline := s.d.clock.Now().Add(flushMax)
	last, since := look(), s.d.clock.Now()
	for s.d.clock.Now().Before(deadline) {
		t, c := s.d.clock.NewTimer(flushPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-c:
		}
		if now := look(); now != last {
			last, since = now, s.d.clock.Now()
			continue
		}
		if s.d.clock.Now().Sub(since) >= flushQuiet {
			return
		}
	}
}

// Sync runs a pass now (MCP's library_sync_saves): one game, or every game.
func (s *saveSync) Sync(ctx context.Context, g savesync.Game, progress func(done, total int)) (savesync.Result, error) {
	if s.d.eng.snapshot().Playing && g.ROM == "" {
		return savesync.Result{}, errors.New("a game is running: its saves are the emulator's until it ends; sync after it, or name another game")
	}
	reply := make(chan syncReply, 1)
	r := syncReq{trigger: "asked", game: g, resolve: true, reply: reply, progress: progress}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		return savesync.Result{}, ctx.Err()
	}
	select {
	case rep := <-reply:
		return rep.res, rep.err
	case <-ctx.Done():
		return savesync.Result{}, ctx.Err()
	}
}

// Saves describes one game's saves (MCP's library_saves).
func (s *saveSync) Saves(ctx context.Context, g savesync.Game) (savesync.Saves, error) {
	cfg := s.configure()
	s.mu.Lock()
	sy := s.syncer
	s.mu.Unlock()
	if g.ROMID == 0 {
		if old, ok, _ := (savesync.Kept{DB: s.d.eng.store()}).Game(g.ROM); ok {
			g.ROMID = old.ROMID
		} else if sy != nil {
			if found, err := s.known(ctx, cfg, g, true); err == nil {
				g = found
			}
		}
	}
	if sy == nil {
		sy = &savesync.Syncer{Kept: savesync.Kept{DB: s.d.eng.store()}, Layout: savesync.Layout{Saves: cfg.Saves}, Backups: s.backups(cfg), States: cfg.States}
	}
	return sy.Describe(ctx, g), nil
}

// Resolve settles a conflict (MCP's library_resolve_save).
func (s *saveSync) Resolve(ctx context.Context, romID int, slot, keep string) (savesync.Item, error) {
	s.configure()
	s.mu.Lock()
	sy := s.syncer
	held := s.held
	s.mu.Unlock()
	if sy == nil {
		if held == "" {
			held = offReason(s.d.config().SaveSync)
		}
		return savesync.Item{}, errors.New(held)
	}
	it, err := sy.Resolve(ctx, romID, slot, keep)
	s.report()
	return it, err
}

// rommSaves adapts the RomM client to the sync (compile-time check that it fits).
var _ savesync.Remote = (*romm.Client)(nil)
