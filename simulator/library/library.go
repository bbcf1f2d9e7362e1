// Package library owns the simulator's game library: the systems and games an
// EmulationStation would load from es_systems and gamelist.xml, with their
// metadata and play statistics.
//
// Fixture returns the deterministic library that tests and `cabinet simulate`
// share; Captured returns the exact one-system library behind the real ES
// responses in es-captures; Generate scales a library up for benchmarks. A
// Library is safe for concurrent use and changes the way ES changes it: play
// statistics at the end of a game, metadata and media on an API POST, the
// list of games when a reload finds files added or gone (Sync).
package library

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// DefaultRomsRoot is where Batocera keeps ROMs: /userdata/roms/<system>/<file>.
const DefaultRomsRoot = "/userdata/roms"

// lastPlayedLayout is ES's ISO basic date-time format (local time).
const lastPlayedLayout = "20060102T150405"

// minTimedSession is ES's threshold below which a session adds no gametime
// (FileData.cpp: "otherwise you might have experienced a loading problem").
const minTimedSession = 10

// Library is a mutable, concurrency-safe set of systems and games.
type Library struct {
	mu      sync.RWMutex
	root    string
	systems []System
	sysIdx  map[string]int
	games   [][]Game         // per system, in the order ES lists them
	byID    []map[string]int // per system: game id -> index in games
	byPath  map[string]gameRef
}

type gameRef struct{ sys, idx int }

// New returns an empty library whose ROMs live under romsRoot
// ("" means DefaultRomsRoot).
func New(romsRoot string) *Library {
	if romsRoot == "" {
		romsRoot = DefaultRomsRoot
	}
	for len(romsRoot) > 1 && romsRoot[len(romsRoot)-1] == '/' {
		romsRoot = romsRoot[:len(romsRoot)-1]
	}
	return &Library{root: romsRoot, sysIdx: map[string]int{}, byPath: map[string]gameRef{}}
}

// RomsRoot is the directory holding one folder per system.
func (l *Library) RomsRoot() string { return l.root }

// AddSystem appends a system. Names are unique.
func (l *Library) AddSystem(s System) error {
	if s.Name == "" {
		return errors.New("add system: empty name")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sysIdx[s.Name]; ok {
		return fmt.Errorf("add system %s: already exists", s.Name)
	}
	s.Extensions = append([]string(nil), s.Extensions...)
	l.sysIdx[s.Name] = len(l.systems)
	l.systems = append(l.systems, s)
	l.games = append(l.games, nil)
	l.byID = append(l.byID, map[string]int{})
	return nil
}

// AddGame adds the ROM <root>/<system>/<file> with its gamelist name (the
// file stem when name is empty) and metadata (keys from MetaDecls).
func (l *Library) AddGame(system, file, name string, meta map[string]string) (Game, error) {
	path := l.root + "/" + system + "/" + file
	if name == "" {
		name = Stem(path)
	}
	g := Game{ID: GameID(path), System: system, Path: path, Name: name}
	if len(meta) > 0 {
		g.meta = make(map[string]string, len(meta))
		for k, v := range meta {
			i, ok := declIndex(k)
			if !ok {
				return Game{}, fmt.Errorf("add game %s: unknown metadata key %q", path, k)
			}
			if v == "" {
				continue
			}
			// Gamelists hold media paths relative to the system folder;
			// ES stores them resolved.
			if metaDecls[i].Path && len(v) > 2 && v[:2] == "./" {
				v = l.root + "/" + system + "/" + v[2:]
			}
			g.meta[k] = v
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return g, l.addLocked(g)
}

func (l *Library) addLocked(g Game) error {
	si, ok := l.sysIdx[g.System]
	if !ok {
		return fmt.Errorf("add game %s: unknown system %q", g.Path, g.System)
	}
	if _, dup := l.byPath[g.Path]; dup {
		return fmt.Errorf("add game %s: path already in the library", g.Path)
	}
	l.byID[si][g.ID] = len(l.games[si])
	l.byPath[g.Path] = gameRef{si, len(l.games[si])}
	l.games[si] = append(l.games[si], g)
	return nil
}

// Systems returns the systems in es_systems order.
func (l *Library) Systems() []System {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]System, len(l.systems))
	for i, s := range l.systems {
		s.Extensions = append([]string(nil), s.Extensions...)
		out[i] = s
	}
	return out
}

// System returns the named system.
func (l *Library) System(name string) (System, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.sysIdx[name]
	if !ok {
		return System{}, false
	}
	s := l.systems[i]
	s.Extensions = append([]string(nil), s.Extensions...)
	return s, true
}

// Games returns the games of one system in ES's list order (nil for an
// unknown system).
func (l *Library) Games(system string) []Game {
	l.mu.RLock()
	defer l.mu.RUnlock()
	i, ok := l.sysIdx[system]
	if !ok {
		return nil
	}
	return append([]Game(nil), l.games[i]...)
}

// AllGames returns every game, system by system.
func (l *Library) AllGames() []Game {
	l.mu.RLock()
	defer l.mu.RUnlock()
	n := 0
	for _, gs := range l.games {
		n += len(gs)
	}
	out := make([]Game, 0, n)
	for _, gs := range l.games {
		out = append(out, gs...)
	}
	return out
}

// Len is the number of games.
func (l *Library) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.byPath)
}

// Game looks a game up by system and ES id.
func (l *Library) Game(system, id string) (Game, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	si, ok := l.sysIdx[system]
	if !ok {
		return Game{}, false
	}
	gi, ok := l.byID[si][id]
	if !ok {
		return Game{}, false
	}
	return l.games[si][gi], true
}

// GameByPath looks a game up by its exact stored path, the way POST /launch
// matches its body.
func (l *Library) GameByPath(path string) (Game, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	r, ok := l.byPath[path]
	if !ok {
		return Game{}, false
	}
	return l.games[r.sys][r.idx], true
}

// SetMeta applies metadata the way ES's HttpApi::ImportFromJson does: every
// given non-path key whose value differs from the current one (defaults
// included) is stored. It reports whether anything changed and whether the
// game exists; ES answers 404 when nothing changed.
func (l *Library) SetMeta(system, id string, values map[string]string) (changed, found bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ref, ok := l.lookupLocked(system, id)
	if !ok {
		return false, false
	}
	next := cloneMeta(g.meta)
	for key, v := range values {
		if key == "name" {
			if v != g.Name {
				g.Name, changed = v, true
			}
			continue
		}
		i, ok := declIndex(key)
		if !ok || metaDecls[i].Path {
			continue
		}
		if v != g.Value(key) {
			next[key], changed = v, true
		}
	}
	if changed {
		g.meta = next
		l.games[ref.sys][ref.idx] = g
	}
	return changed, true
}

// RecordPlay updates play statistics the way FileData::launchGame does after
// the emulator exits: only for exit code 0, playcount+1, gametime += the
// session's whole seconds when the session lasted at least 10 s, lastplayed
// = end (ES local-time basic format, in end's location). It returns the
// updated game.
func (l *Library) RecordPlay(system, id string, exitCode int, start, end time.Time) (Game, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ref, ok := l.lookupLocked(system, id)
	if !ok || exitCode != 0 {
		return g, ok
	}
	next := cloneMeta(g.meta)
	next["playcount"] = strconv.Itoa(g.PlayCount() + 1)
	// ES subtracts two time(NULL) values: whole Unix seconds.
	if elapsed := end.Unix() - start.Unix(); elapsed >= minTimedSession {
		next["gametime"] = strconv.FormatInt(int64(g.GameTime())+elapsed, 10)
	}
	next["lastplayed"] = end.Format(lastPlayedLayout)
	g.meta = next
	l.games[ref.sys][ref.idx] = g
	return g, true
}

func (l *Library) lookupLocked(system, id string) (Game, gameRef, bool) {
	si, ok := l.sysIdx[system]
	if !ok {
		return Game{}, gameRef{}, false
	}
	gi, ok := l.byID[si][id]
	if !ok {
		return Game{}, gameRef{}, false
	}
	return l.games[si][gi], gameRef{si, gi}, true
}

func cloneMeta(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	return out
}
