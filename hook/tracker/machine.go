package tracker

import (
	"github.com/batocera-cabinet/cabinet/haentities"
)

// effect is something a step produced besides the new state.
type effect struct {
	typ      string // haentities.EventSessionStart, EventSessionEnd, or a haentities.Cabinet* type
	at       Stamp
	sess     haentities.Session
	ignored  bool                   // session_start of a screensaver launch: never emitted
	deferred bool                   // session_start emitted only once the start is final
	ach      haentities.Achievement // an unlock's (EventAchievementUnlocked)
}

// step applies one event, in event order, and appends what it produced to fx.
func (c *Core) step(ev Event, cfg Config, fx *[]effect) {
	e := ev.Stamp()
	if ev.BootID != "" && c.Seen.BootID != "" && ev.BootID != c.Seen.BootID {
		c.newBoot(cfg, fx)
	}
	switch ev.Kind {
	case KindStart:
		c.Online, c.Sleeping = true, false
		c.clearScreensaver(e)
		if c.Open.ID != "" {
			c.end(e, cfg, fx) // ES (re)started: nothing it launched is still running
		}
		c.cabinet(haentities.CabinetStart, e, fx)
	case KindGameStart:
		c.Online, c.Sleeping = true, false // a launch clears ES's sleep without a wake
		if IsEntry(ev.Path) {
			break // Cabinet's own entry: ES is back in its menus within a second
		}
		c.gameStart(ev, cfg, fx)
		c.clearScreensaver(e)
	case KindGameEnd:
		c.Online = true
		if c.Open.ID != "" && since(c.Open.Start, e) >= 0 {
			c.end(e, cfg, fx) // game-end has no arguments: it ends whatever runs
		}
		c.clearScreensaver(e)
	case KindGameSelected:
		c.Online = true
		switch {
		case c.SS.On && !showsGames(c.SS.Type):
			c.clearScreensaver(e) // a suspend/dim/black screensaver picks no game: the user is back
		case c.SS.On:
			// The game the screensaver shows. After screensaver-stop the user is browsing: the hook's
			// flag may still let those events through, but they are not the screensaver's.
			c.SS.Sel = Selection{Key: gameKey(ev.Path), Name: eventName(ev), At: e}
		}
	case KindSystemSelected:
		c.Online = true
		c.clearScreensaver(e)
	case KindScreensaverStart:
		c.Online = true
		c.SS = Screensaver{On: true, Type: ev.Arg, Start: e}
	case KindScreensaverStop:
		c.Online = true
		c.clearScreensaver(e)
	case KindSleep:
		c.Online, c.Sleeping = true, true // sleep may repeat without a wake in between
		c.cabinet(haentities.CabinetSleep, e, fx)
	case KindWake:
		c.Online, c.Sleeping = true, false
		c.clearScreensaver(e)
		c.cabinet(haentities.CabinetWake, e, fx)
	case KindQuit:
		switch ev.Arg {
		case "reboot":
			c.down(haentities.CabinetReboot, e, cfg, fx) // one reboot event, not a quit as well
		case "shutdown":
			c.down(haentities.CabinetShutdown, e, cfg, fx)
		default:
			c.down(haentities.CabinetQuit, e, cfg, fx) // ES restarts and fires start
		}
	case KindReboot:
		c.down(haentities.CabinetReboot, e, cfg, fx)
	case KindShutdown:
		c.down(haentities.CabinetShutdown, e, cfg, fx)
	case KindStopped:
		c.Online = false
	case KindAchievement:
		c.Online = true
		c.achievement(ev, fx)
	}
	if c.Seen.At.IsZero() || c.Seen.BootID != e.BootID || since(c.Seen, e) >= 0 {
		c.Seen = e
	}
}

// newBoot forgets what the previous boot left running: its session ends at the last event seen in
// that boot (a power cut gives no better end), the screensaver and sleep are gone.
func (c *Core) newBoot(cfg Config, fx *[]effect) {
	if c.Open.ID != "" && c.Open.Start.BootID == c.Seen.BootID {
		c.end(c.Seen, cfg, fx)
	} else if c.Open.ID != "" {
		c.end(c.Open.Start, cfg, fx)
	}
	c.SS = Screensaver{}
	c.Sleeping = false
}

// down is quit, reboot or shutdown: ES goes away, the cabinet goes offline.
func (c *Core) down(typ string, e Stamp, cfg Config, fx *[]effect) {
	if c.Open.ID != "" {
		c.end(e, cfg, fx)
	}
	c.SS = Screensaver{}
	c.Sleeping = false
	c.Online = false
	c.cabinet(typ, e, fx)
}

func (c *Core) cabinet(typ string, e Stamp, fx *[]effect) {
	*fx = append(*fx, effect{typ: typ, at: e})
}

func (c *Core) clearScreensaver(e Stamp) {
	if c.SS.On {
		c.SS.On = false
		c.SS.Stop = e
	}
}

// showsGames reports whether a screensaver type picks games (and fires game-selected for them).
func showsGames(typ string) bool {
	switch typ {
	case "dim", "black", "suspend":
		return false
	}
	return true
}

// gameStart opens a session, or merges a second report of the running one.
func (c *Core) gameStart(ev Event, cfg Config, fx *[]effect) {
	e := ev.Stamp()
	key := gameKey(ev.Path)
	if c.Open.ID != "" {
		if c.sameLaunch(ev, key, cfg) {
			c.merge(ev, key)
			return
		}
		c.end(e, cfg, fx) // a different game started: the old one's game-end was missed
	}
	// A screensaver launch: the game the screensaver showed last, while it was active or stopped at
	// most ScreensaverWindow ago (its game-selected may still be on its way: session_start waits
	// until the launch is final anyway, see Deferred below).
	ss := c.SS
	active := ss.On || within(ss.Stop, e, cfg.ScreensaverWindow)
	sameAsShown := active && !ss.Sel.At.At.IsZero() &&
		(key != "" && key == ss.Sel.Key || key == "" && eventName(ev) == ss.Sel.Name)
	sys := ev.System
	if sys == "" {
		sys = systemFromPath(ev.Path)
	}
	o := Open{
		Session: haentities.Session{
			Game: eventName(ev), System: sys, SystemName: ev.SystemName, Rom: ev.Path,
			Emulator: ev.Emulator, Core: ev.Core, Source: string(ev.Source), Started: ev.At, Profile: ev.Profile,
		},
		Start:    e,
		Key:      key,
		NameRank: nameRank(ev.Source),
		PathRank: pathRank(ev.Source),
		Sources:  sourceBit(ev.Source),
		Ignored:  cfg.IgnoreScreensaverLaunches && sameAsShown,
		// session_start waits until the start is final (the reorder
		// window): the ES hook, configgen and the watcher report a launch
		// within about a second, in any order, and the session id comes
		// from the earliest report, so only a final start carries the id
		// the session keeps (Home Assistant pairs start and end by it).
		Deferred: true,
	}
	if ev.SystemName != "" {
		o.SysRank = nameRank(ev.Source)
	}
	o.ID = sessionID(ev.At, sys, key, o.Game)
	c.Open = o
	if o.Ignored {
		c.SS.Sel = Selection{} // the screensaver's pick is used up
	}
	*fx = append(*fx, effect{typ: haentities.EventSessionStart, at: e, sess: o.Session, ignored: o.Ignored, deferred: o.Deferred})
}

// sameLaunch reports whether a game-start reports the running session again (ES hook, configgen
// script and watcher all report each launch).
func (c *Core) sameLaunch(ev Event, key string, cfg Config) bool {
	o := &c.Open
	if key != "" && (key == o.Key || key == o.Key2) {
		return true
	}
	d := since(o.Start, ev.Stamp())
	if d < 0 {
		d = -d
	}
	if d <= cfg.DuplicateWindow && o.Sources&sourceBit(ev.Source) == 0 {
		// Another source within seconds: the same launch even if ES's argv mangled the path.
		return true
	}
	return (key == "" || o.Key == "") && eventName(ev) == o.Game
}

// merge folds a second report of the running session into it, keeping the best name, system name
// and path.
func (c *Core) merge(ev Event, key string) {
	o := &c.Open
	o.Sources |= sourceBit(ev.Source)
	if o.Profile == "" {
		o.Profile = ev.Profile
	}
	if n := eventName(ev); n != "" && (nameRank(ev.Source) > o.NameRank || o.Game == "") {
		o.Game, o.NameRank = n, nameRank(ev.Source)
	}
	if ev.SystemName != "" && (nameRank(ev.Source) > o.SysRank || o.SystemName == "") {
		o.SystemName, o.SysRank = ev.SystemName, nameRank(ev.Source)
	}
	if o.System == "" {
		o.System = ev.System
	}
	if o.Emulator == "" {
		o.Emulator = ev.Emulator
	}
	if o.Core == "" {
		o.Core = ev.Core
	}
	if key != "" && key != o.Key && key != o.Key2 {
		if pathRank(ev.Source) > o.PathRank || o.Key == "" {
			o.Key2, o.Key, o.Rom, o.PathRank = o.Key, key, ev.Path, pathRank(ev.Source)
		} else {
			o.Key2 = key
		}
	}
}

// end closes the running session at e and logs it unless it was short or a screensaver launch.
func (c *Core) end(e Stamp, cfg Config, fx *[]effect) {
	o := c.Open
	c.Open = Open{}
	d := since(o.Start, e)
	if d < 0 {
		d = 0
	}
	s := o.Session
	s.Ended, s.Duration = e.At, d
	s.EndBoot, s.BootID = e.Boot, e.BootID
	if o.Ignored || d < cfg.MinSession {
		return
	}
	c.Last = s
	c.PlayTime += d
	*fx = append(*fx, effect{typ: haentities.EventSessionEnd, at: e, sess: s})
}

// achievement records an unlock: in the running session when it started before the unlock (with its
// game, system and id), and as the latest one.
func (c *Core) achievement(ev Event, fx *[]effect) {
	e := ev.Stamp()
	a := haentities.Achievement{ID: ev.Unlock.ID, Title: ev.Unlock.Title, Description: ev.Unlock.Description,
		Hardcore: ev.Unlock.Hardcore, At: ev.At}
	if c.Open.ID != "" && since(c.Open.Start, e) >= 0 {
		a.Game, a.System, a.SessionID = c.Open.Game, c.Open.System, c.Open.ID
		c.Open.AddAchievement(a)
	}
	if c.LastAch.At.IsZero() || !a.At.Before(c.LastAch.At) {
		c.LastAch = a
	}
	*fx = append(*fx, effect{typ: haentities.EventAchievementUnlocked, at: e, ach: a})
}
