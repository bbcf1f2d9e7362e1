package household

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/hook/playday"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Timing of the enforcer.
const (
	// PersistEvery bounds the play a power cut can take back: the ledger is
	// written at least this often while a game runs.
	PersistEvery = 30 * time.Second
	// IdleCheck bounds the wait while no game runs (the clock may be set
	// meanwhile, which moves the day).
	IdleCheck = 5 * time.Minute
	// retryEnd is how long a game that should have ended may still run
	// before it is ended again (a launch refused before ES listed it).
	retryEnd = 3 * time.Second
	// upRepeat is how often warn_only repeats "time is up" over the game.
	upRepeat = 5 * time.Minute
	// endTimeout bounds one save-and-quit.
	endTimeout = 20 * time.Second
)

// Running is the game the daemon's tracker sees running.
type Running struct {
	// Profile is the player the game's start was given ("" none, or a start the daemon did not
	// take: then the player chosen now).
	Profile string
	Playing bool
	// BootID and From are its start on the boot clock.
	BootID string
	From   time.Duration
	Name   string
	System string
	Rom    string
	// LastBootID, LastFrom and LastEnd are the last logged session on the
	// boot clock: the end of a game the daemon did not see end (it was
	// stopped meanwhile).
	LastBootID        string
	LastFrom, LastEnd time.Duration
}

// Screen shows the player a message.
type Screen interface {
	// OverGame shows text over the running game (RetroArch's SHOW_MSG);
	// an error when nothing answers.
	OverGame(ctx context.Context, text string) error
	// Notify shows text in EmulationStation's menus.
	Notify(ctx context.Context, text string) error
}

// Ender saves and closes the running game.
type Ender interface {
	// Plan says how the game's progress can be kept (RetroArch's answer
	// and Batocera's settings).
	Plan(ctx context.Context, g Running) SavePlan
	// End saves the game when save is set and the plan allows, then quits
	// it (the MCP tools' quit path, never rate limited).
	End(ctx context.Context, g Running, save bool) (Ending, error)
}

// Ending is what End did.
type Ending struct {
	Saved bool
	// SaveNote says why nothing was saved ("" when saving was not asked).
	SaveNote string
}

// Event kinds (event.batocera_limit).
const (
	EventWarned   = "warned"
	EventReached  = "reached"
	EventExtended = "extended"
	EventRefused  = "refused"
)

// Event is something the household may want to hear about.
type Event struct {
	Kind string
	Game string
	// Profile is whose time it is ("" the cabinet's).
	Profile string
	Detail  string
	Minutes int
	By      string
	When    time.Time
}

// Enforcer applies the rules on the cabinet: it counts play into the
// ledger, warns the player, saves and quits at the limit, ends launches
// that are not allowed, and reports the status and events. Run is its loop;
// the other methods are the household's controls (Home Assistant, MCP).
type Enforcer struct {
	Clock clock.Clock
	Log   zerolog.Logger
	Store *store.Store
	// Now stamps the moment on the wall and boot clocks; Synced says
	// whether the wall clock is set (bootclock.Synced).
	Now    func() tracker.Stamp
	Synced func(time.Time) bool
	// Location is the local time zone (nil: time.Local).
	Location *time.Location
	Rules    func() Rules
	Running  func() Running
	// Applied is closed at the tracker's next apply (a game started or
	// ended).
	Applied func() <-chan struct{}
	Screen  Screen
	Ender   Ender
	// Report receives the status after every step; Event the events.
	Report func(Status)
	Event  func(Event)
	// Armed, when set, is told the wait of each timer the loop has armed
	// (a benchmark steps a fake clock to it).
	Armed func(time.Duration)

	mu      sync.Mutex
	ledger  Ledger
	loaded  bool
	written time.Time // Clock time of the last write
	wake    chan struct{}
	once    sync.Once
	shows   sync.WaitGroup
	cancel  context.CancelFunc // the message being repeated
	request *timeRequest       // the player's request waiting for an answer
}

func (e *Enforcer) loc() *time.Location {
	if e.Location == nil {
		return time.Local
	}
	return e.Location
}

func (e *Enforcer) init() {
	e.once.Do(func() { e.wake = make(chan struct{}, 1) })
}

// kick runs a step now.
func (e *Enforcer) kick() {
	e.init()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// moment is now on both clocks.
func (e *Enforcer) moment() playday.Moment {
	now := e.Now()
	return playday.Moment{Wall: now.At, Boot: now.Boot, BootID: now.BootID, Synced: e.Synced(now.At)}
}

// load reads the ledger once (e.mu held).
func (e *Enforcer) load() {
	if e.loaded {
		return
	}
	l, err := LoadLedger(e.Store)
	if err != nil {
		e.Log.Error().Err(err).Msg("household play time")
	}
	e.ledger, e.loaded = l, true
}

// save writes the ledger (e.mu held).
func (e *Enforcer) save(l Ledger) error {
	if err := SaveLedger(e.Store, l); err != nil {
		return err
	}
	e.ledger, e.written = l, e.Clock.Now()
	return nil
}

// Run enforces the rules until ctx ends.
func (e *Enforcer) Run(ctx context.Context) error {
	e.init()
	defer func() {
		e.mu.Lock()
		if e.cancel != nil {
			e.cancel()
		}
		e.mu.Unlock()
		e.shows.Wait()
	}()
	for {
		applied := e.Applied()
		wait := e.step(ctx)
		wait = max(wait, 10*time.Millisecond)
		t, tc := e.Clock.NewTimer(wait)
		if e.Armed != nil {
			e.Armed(wait)
		}
		select {
		case <-ctx.Done():
			t.Stop()
			e.flush()
			return nil
		case <-applied:
		case <-e.wake:
		case <-tc:
		}
		t.Stop()
	}
}

// flush writes what was counted since the last write (at a clean stop).
func (e *Enforcer) flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.loaded {
		return
	}
	if err := e.save(e.ledger); err != nil {
		e.Log.Warn().Err(err).Msg("household play time not written at stop")
	}
}

// action is what a step decided to do outside the lock.
type action int

const (
	doNothing action = iota
	doRefuse
	doEnd
	doTell
	doWarn
	doUp
)

// step brings the ledger to now, decides, acts, and says how long to wait.
func (e *Enforcer) step(ctx context.Context) time.Duration {
	all := e.Rules()
	run := e.Running()
	loc := e.loc()
	e.mu.Lock()
	m, full := e.current(loc)
	// Whose time: the counted game's player (fixed at its launch), else the player now.
	prof := full.profileNow()
	l, rules := full.as(prof), all.For(prof)
	newGame := false
	var before Status // the rules just before a new game
	g := l.Game
	if g != nil && (!run.Playing || run.BootID != g.BootID || run.From != g.From) {
		// The counted game ended: up to now when it was seen running in
		// this boot (woken by the apply that ended it), else up to the
		// logged session's end or the last moment it was counted.
		end := g.To
		switch {
		case run.LastBootID == g.BootID && absDur(run.LastFrom-g.From) < 5*time.Second:
			end = max(end, run.LastEnd)
		case g.BootID == m.BootID && !run.Playing:
			end = max(end, m.Boot)
		}
		if !g.Refused {
			l.Play = playday.AddSpan(l.Play, playday.Span{From: g.To, To: end}, m, loc)
		}
		l.Game, g = nil, nil
		// A next game is the player's now.
		full.put(prof, l)
		prof = full.Player
		l, rules = full.as(prof), all.For(prof)
	}
	// The end is enforced unless at_limit is warn_only; a pause always is.
	enforce := func(s Status) bool { return s.EndBy == EndPaused || rules.AtLimit != WarnOnly }
	if run.Playing && run.BootID == m.BootID && run.BootID != "" && g == nil && run.Profile != "" && run.Profile != prof {
		// The game's start carries its player (fixed as it launched): its rules and time.
		full.put(prof, l)
		prof = run.Profile
		l, rules = full.as(prof), all.For(prof)
	}
	if run.Playing && run.BootID == m.BootID && run.BootID != "" && g == nil {
		before = Evaluate(rules, l, m, nil, loc)
		g = &Game{BootID: run.BootID, From: run.From, To: run.From, Name: run.Name, System: run.System, Profile: prof,
			Refused: (rules.Enabled || l.Paused) && before.Refusal != "" && enforce(before)}
		l.Game, newGame = g, true
	}
	var span *playday.Span
	if g != nil {
		span = g.count(&l, m, loc)
	}
	st := Evaluate(rules, l, m, span, loc)
	act, first := doNothing, false
	var point int
	switch {
	case g == nil || !rules.Enabled && !l.Paused:
	case newGame && g.Refused:
		g.EndedAt = m.Boot
		act, first, st = doRefuse, true, before
	case g.Refused:
		// Still running: ended again, unless the rules allow it by now
		// (time granted meanwhile); its time counts from then on.
		st = Evaluate(rules, l, m, nil, loc)
		switch {
		case st.Refusal == "" || !enforce(st):
			g.Refused, g.From, g.To = false, m.Boot, m.Boot
		case m.Boot-g.EndedAt >= retryEnd:
			g.EndedAt, act = m.Boot, doRefuse
		}
	case st.Remaining == 0 && !enforce(st):
		if !g.Reached || m.Boot-g.UpAt >= upRepeat {
			act, first, g.UpAt = doUp, !g.Reached, m.Boot
			g.Reached = true
		}
	case st.Remaining == 0:
		if !g.Reached || m.Boot-g.EndedAt >= retryEnd {
			act, first, g.EndedAt = doEnd, !g.Reached, m.Boot
			g.Reached = true
		}
	case newGame || !g.Told:
		g.Told = true
		// Points already passed are not announced again.
		for _, p := range rules.WarnAt {
			if st.Remaining >= 0 && st.Remaining <= time.Duration(p)*time.Minute {
				g.Warned = append(g.Warned, p)
			}
		}
		if st.Remaining >= 0 {
			act = doTell
		}
	default:
		// Time granted since: points above what is left may come again.
		g.Reached = false
		g.Warned = slices.DeleteFunc(g.Warned, func(p int) bool {
			return st.Remaining > time.Duration(p)*time.Minute+30*time.Second
		})
		for _, p := range rules.WarnAt {
			if st.Remaining >= 0 && st.Remaining <= time.Duration(p)*time.Minute && !slices.Contains(g.Warned, p) {
				g.Warned = append(g.Warned, p)
				act, point = doWarn, p
			}
		}
	}
	st.Profile, before.Profile = prof, prof
	st.Player, before.Player = full.Player, full.Player
	full.put(prof, l)
	// Written at every decision, and at least every PersistEvery while a
	// game runs.
	was := e.ledger.as(prof)
	if act != doNothing || l.Game == nil && e.ledger.Game != nil || l.Play.Day != was.Play.Day ||
		l.Play.BootID != was.Play.BootID || l.Play.Trusted != was.Play.Trusted ||
		e.Clock.Since(e.written) >= PersistEvery {
		if err := e.save(full); err != nil {
			e.Log.Warn().Err(err).Msg("household play time not written; trying again")
			e.ledger = full
		}
	} else {
		e.ledger = full
	}
	e.mu.Unlock()

	if e.Report != nil {
		e.Report(st)
	}
	e.act(ctx, act, first, rules, st, run, point)
	return e.next(rules, st, g, m)
}

// act carries out a decision. Messages are shown by their own goroutine;
// ending a game waits for it (bounded).
func (e *Enforcer) act(ctx context.Context, act action, first bool, rules Rules, st Status, run Running, point int) {
	now := e.Now().At
	switch act {
	case doRefuse:
		if first {
			e.Log.Info().Str("game", gameLabel(run.Name)).Str("why", st.Refusal).Msg("household: launch not allowed; ending it")
		}
		ectx, cancel := context.WithTimeout(ctx, endTimeout)
		_, err := e.Ender.End(ectx, run, false)
		cancel()
		if err != nil {
			e.Log.Warn().Err(err).Msg("household: could not end the refused game; trying again")
		}
		if !first {
			return
		}
		e.notify(ctx, refusedText(st, run.Name))
		e.event(Event{Kind: EventRefused, Game: gameLabel(run.Name), Profile: st.Profile, Detail: st.Refusal, When: now})
	case doEnd:
		// Saved once: an end tried again (the game still runs) only quits.
		save := first && (rules.AtLimit == SaveQuit || st.EndBy == EndPaused)
		e.Log.Info().Str("game", gameLabel(run.Name)).Str("by", string(st.EndBy)).Bool("save", save).Msg("household: time is up; ending the game")
		if first {
			e.show(ctx, upText(st), 1)
		}
		ectx, cancel := context.WithTimeout(ctx, endTimeout)
		ending, err := e.Ender.End(ectx, run, save)
		cancel()
		if err != nil {
			e.Log.Warn().Err(err).Msg("household: could not end the game; trying again")
		}
		if !first {
			return
		}
		e.notify(ctx, endedText(st, run.Name, ending))
		detail := upText(st)
		if ending.Saved {
			detail += " The game was saved."
		} else if ending.SaveNote != "" {
			detail += " " + ending.SaveNote + "."
		}
		e.event(Event{Kind: EventReached, Game: gameLabel(run.Name), Profile: st.Profile, Detail: detail, When: now})
	case doUp:
		e.show(ctx, upText(st), 3)
		if first {
			e.event(Event{Kind: EventReached, Game: gameLabel(run.Name), Profile: st.Profile, Detail: upText(st), When: now})
		}
	case doTell:
		e.show(ctx, startText(st), 3)
	case doWarn:
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		plan := e.Ender.Plan(pctx, run)
		cancel()
		e.show(ctx, warnText(rules, st, plan), 3)
		e.event(Event{Kind: EventWarned, Game: gameLabel(run.Name), Profile: st.Profile, Detail: leftText(st), Minutes: point, When: now})
	}
}

// next is how long the loop may wait: the next warning point or the end
// while a game runs (and the next write), else midnight, bedtime's edges or
// the idle check.
func (e *Enforcer) next(rules Rules, st Status, g *Game, m playday.Moment) time.Duration {
	wait := IdleCheck
	loc := e.loc()
	if d := playday.NextMidnight(m, loc).Sub(m.Wall) + time.Second; d < wait {
		wait = d
	}
	if b := rules.Bedtime; b != nil && st.ClockTrusted {
		now := m.Wall.In(loc)
		for _, at := range []int{b.From, b.To} {
			if d := nextAt(now, at, loc).Sub(now); d > 0 && d < wait {
				wait = d
			}
		}
	}
	if g == nil {
		return wait
	}
	wait = min(wait, PersistEvery)
	if !rules.Enabled || st.Remaining < 0 {
		return wait
	}
	if st.Remaining > 0 {
		wait = min(wait, st.Remaining)
	} else {
		wait = min(wait, retryEnd)
	}
	for _, p := range rules.WarnAt {
		if d := st.Remaining - time.Duration(p)*time.Minute; d > 0 && d < wait {
			wait = d
		}
	}
	return wait
}

// show puts text over the game, times times about 3 s apart (a SHOW_MSG
// lasts about 3 s), and falls back to an ES notification when RetroArch
// does not answer within a few seconds (it may still be starting). A newer
// message replaces one still being repeated.
func (e *Enforcer) show(ctx context.Context, text string, times int) {
	e.mu.Lock()
	if e.cancel != nil {
		e.cancel()
	}
	sctx, cancel := context.WithCancel(ctx)
	e.cancel = cancel
	e.mu.Unlock()
	e.shows.Add(1)
	go func() {
		defer e.shows.Done()
		defer cancel()
		shown, tries := 0, 0
		for shown < times {
			octx, ocancel := context.WithTimeout(sctx, time.Second)
			err := e.Screen.OverGame(octx, text)
			ocancel()
			switch {
			case err == nil:
				shown++
			case sctx.Err() != nil:
				return
			default:
				if tries++; tries >= 5 {
					nctx, ncancel := context.WithTimeout(sctx, 5*time.Second)
					if err := e.Screen.Notify(nctx, text); err != nil {
						e.Log.Debug().Err(err).Msg("household: message not shown")
					}
					ncancel()
					return
				}
			}
			if shown >= times {
				return
			}
			t, tc := e.Clock.NewTimer(3 * time.Second)
			select {
			case <-sctx.Done():
				t.Stop()
				return
			case <-tc:
			}
		}
	}()
}

// notify shows text in ES's menus (after a game was ended).
func (e *Enforcer) notify(ctx context.Context, text string) {
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := e.Screen.Notify(nctx, text); err != nil {
		e.Log.Debug().Err(err).Msg("household: notification not shown")
	}
}

func (e *Enforcer) event(ev Event) {
	if e.Event != nil {
		e.Event(ev)
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
