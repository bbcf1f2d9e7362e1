package library

import (
	"fmt"
	"strings"
)

// Accepts reports whether ES lists a file or folder of this name as a game
// of the system: its extension (from the last dot, lowercased) is one of
// the system's, compared case-insensitively as ES's isValidExtension does
// with both sides lowercased. A name without a dot has the extension "".
func (s System) Accepts(name string) bool {
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		ext = strings.ToLower(name[i:])
	}
	for _, e := range s.Extensions {
		if strings.ToLower(e) == ext {
			return true
		}
	}
	return false
}

// Pinned reports a game that a rescan keeps whether or not its file was
// found. Generated games are pinned: the simulator writes no ROM files for
// a benchmark library of tens of thousands of games, and ES would list
// them from their gamelist alone (as with its ParseGamelistOnly setting).
func (g Game) Pinned() bool { return g.pinned }

// Sync makes a system list what ES found in its ROM folder on a reload
// (SystemData::populateFolder, then the gamelist for what exists): files
// are the games' paths relative to the system folder, "sub/Game.nes" for a
// game in a subfolder, in the order they were found. A game whose file is
// not in files is removed, unless it is pinned; a file the system does not
// list yet becomes a game named after its stem with no metadata, as ES
// shows a ROM without a gamelist entry, appended after the games kept. The
// games kept keep their order, metadata and play statistics. The caller
// decides which names are games (System.Accepts, hidden files); Sync takes
// files as given. It returns the games added and removed.
func (l *Library) Sync(system string, files []string) (added, removed []Game, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	si, ok := l.sysIdx[system]
	if !ok {
		return nil, nil, fmt.Errorf("sync %s: unknown system", system)
	}
	prefix := l.root + "/" + system + "/"
	found := make(map[string]bool, len(files))
	for _, f := range files {
		if f == "" || strings.HasPrefix(f, "/") {
			return nil, nil, fmt.Errorf("sync %s: file %q is not relative to the system folder", system, f)
		}
		found[prefix+f] = true
	}
	kept := make([]Game, 0, len(l.games[si])+len(files))
	for _, g := range l.games[si] {
		if found[g.Path] || g.pinned {
			kept = append(kept, g)
			continue
		}
		removed = append(removed, g)
		delete(l.byPath, g.Path)
	}
	for _, f := range files {
		path := prefix + f
		if _, dup := l.byPath[path]; dup {
			continue // listed already (or twice in files)
		}
		g := Game{ID: GameID(path), System: system, Path: path, Name: Stem(path)}
		l.byPath[path] = gameRef{si, len(kept)}
		kept = append(kept, g)
		added = append(added, g)
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil, nil, nil
	}
	l.reindexLocked(si, kept)
	return added, removed, nil
}

// RemoveGame removes a game from the library, as ES forgets a game whose
// file is gone. It reports whether the game was there.
func (l *Library) RemoveGame(system, id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ref, ok := l.lookupLocked(system, id)
	if !ok {
		return false
	}
	delete(l.byPath, g.Path)
	games := l.games[ref.sys]
	kept := make([]Game, 0, len(games)-1)
	kept = append(kept, games[:ref.idx]...)
	kept = append(kept, games[ref.idx+1:]...)
	l.reindexLocked(ref.sys, kept)
	return true
}

// reindexLocked installs games as system si's list and rebuilds its
// indexes; byPath must already hold no path of a game dropped from it.
func (l *Library) reindexLocked(si int, games []Game) {
	byID := make(map[string]int, len(games))
	for i, g := range games {
		byID[g.ID] = i
		l.byPath[g.Path] = gameRef{si, i}
	}
	l.games[si], l.byID[si] = games, byID
}

// SetMedia records a media file stored for a game, as HttpApi::ImportMedia
// does after writing it: the path-typed metadata key (image, video, ...)
// is set to the file's absolute path, whether or not it changed. It
// returns the updated game and false for an unknown game or a key that is
// not path-typed.
func (l *Library) SetMedia(system, id, key, path string) (Game, bool) {
	if !IsPathKey(key) {
		return Game{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ref, ok := l.lookupLocked(system, id)
	if !ok {
		return Game{}, false
	}
	next := cloneMeta(g.meta)
	next[key] = path
	g.meta = next
	l.games[ref.sys][ref.idx] = g
	return g, true
}
