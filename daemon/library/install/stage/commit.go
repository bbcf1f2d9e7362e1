package stage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// ErrLeftover is wrapped by Commit when the game is in place but the emptied
// stage folder could not be removed; Leftovers will report it.
var ErrLeftover = errors.New("the game is installed but its stage folder was left behind")

// Commit describes the verified set Stage.Commit moves into the system folder.
type Commit struct {
	// Files are the CleanRelPath paths of the set, each given to PartPath and
	// fully downloaded and verified. Without Folder there is exactly one, a
	// top-level name; with Folder they are paths inside it.
	Files []string
	// Folder is "" for a single top-level file, else the CleanName of the
	// folder that holds all the files. Avoid an extension the system accepts
	// (".m3u" for psx): ES lists such a folder as one game.
	Folder string
	// Playlist is an optional .m3u written into the system folder after the
	// files, so ES shows one game for a multi-disc set.
	Playlist *Playlist
}

// Playlist is an .m3u file Commit writes last.
type Playlist struct {
	// Name is the CleanName of the playlist and ends with ".m3u".
	Name string
	// Lines are paths relative to the system folder, written one per line
	// ending in '\n'; each must name a file of the same commit, such as
	// "Game/Game (Disc 1).chd", because ES resolves them against the folder
	// holding the .m3u and only hides the discs it finds.
	Lines []string
}

// move is one rename; undoing it renames to back to from.
type move struct{ from, to string }

// Commit moves the staged set into the system folder so that ES sees all of
// it or nothing:
//
//	(a) every part must exist as a regular file (and, for a folder, nothing
//	    else may be in the stage);
//	(b) a target already in the system folder is refused with ErrExists and
//	    a symlink in the way with ErrUnsafe; nothing is overwritten;
//	(c) each part is fsynced and renamed to its final name inside the stage;
//	(d) the single file, or the whole folder, is renamed into the system
//	    folder in one rename;
//	(e) the playlist, written and fsynced inside the stage beforehand, is
//	    renamed in last;
//	(f) the system folder is fsynced;
//	(g) the stage folder is removed.
//
// When a step up to (f) fails, what was moved is renamed back and the stage
// is as before the call, so the caller may retry or Abort. Commit returns the
// absolute final paths, the files in Files order and then the playlist. If
// only (g) fails, the game is installed: Commit returns the paths with an
// error wrapping ErrLeftover.
func (s *Stage) Commit(c Commit) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("commit install %s: it is already committed or aborted", s.key)
	}
	p, err := s.planCommit(c)
	if err != nil {
		return nil, fmt.Errorf("commit install %s: %w", s.key, err)
	}
	if err := s.check(c, p); err != nil {
		return nil, fmt.Errorf("commit install %s: %w", s.key, err)
	}
	if err := s.install(p); err != nil {
		return nil, fmt.Errorf("commit install %s: %w", s.key, err)
	}
	s.closed = true
	if err := os.RemoveAll(s.dir); err != nil { // (g)
		return p.finals, fmt.Errorf("commit install %s: remove %s: %v: %w", s.key, s.dir, err, ErrLeftover)
	}
	return p.finals, nil
}

// check runs steps (a) and (b): it reads the filesystem and changes nothing.
func (s *Stage) check(c Commit, p *plan) error {
	if sys, err := resolveSystemDir(s.systemDir); err != nil {
		return err
	} else if sys != s.systemDir {
		return fmt.Errorf("system folder %s now resolves to %s; begin the install again: %w", s.systemDir, sys, ErrUnsafe)
	}
	for i, m := range p.parts {
		if err := noSymlinks(s.systemDir, m.from); err != nil {
			return err
		}
		fi, err := os.Lstat(m.from)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%q was not downloaded: %s is missing", c.Files[i], m.from)
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%q: %s is not a regular file", c.Files[i], m.from)
		}
	}
	if c.Folder != "" {
		if err := s.onlyListed(c.Files); err != nil {
			return err
		}
	}
	if err := s.checkTarget(p.game.to); err != nil {
		return err
	}
	if p.playlist != nil {
		return s.checkTarget(p.playlist.to)
	}
	return nil
}

// onlyListed refuses a stage holding anything but the listed parts and their
// folders: the whole files folder is renamed into place, and a stray part
// would become an unverified file in the game.
func (s *Stage) onlyListed(files []string) error {
	want := make(map[string]bool, len(files))
	dirs := make(map[string]bool)
	for _, f := range files {
		want[partOf(f)] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	return filepath.WalkDir(s.files, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == s.files {
			return err
		}
		rel, err := filepath.Rel(s.files, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() && dirs[rel] || d.Type().IsRegular() && want[rel] {
			return nil
		}
		return fmt.Errorf("the stage holds %q, which is not in Commit.Files; list it or abort the install", rel)
	})
}

// checkTarget runs step (b) for one top-level target in the system folder.
func (s *Stage) checkTarget(p string) error {
	if filepath.Dir(p) != s.systemDir {
		return fmt.Errorf("%s is not directly in %s: %w", p, s.systemDir, ErrUnsafe)
	}
	if err := noSymlinks(s.systemDir, p); err != nil {
		return err
	}
	if err := parentInside(s.systemDir, p); err != nil {
		return err
	}
	_, err := os.Lstat(p)
	switch {
	case err == nil:
		return fmt.Errorf("%q is already in %s; delete it or install under another name: %w", filepath.Base(p), s.systemDir, ErrExists)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return err
	}
}

// install runs steps (c) to (f), undoing what it did when a step fails.
func (s *Stage) install(p *plan) error {
	if err := s.finishParts(p.parts); err != nil {
		return err
	}
	err := s.place(p)
	if err == nil {
		return nil
	}
	if p.playlist != nil {
		_ = os.Remove(p.playlist.from) // rewritten by the next attempt anyway
	}
	var undo []error
	for i := len(p.parts) - 1; i >= 0; i-- {
		if uerr := s.rename(p.parts[i].to, p.parts[i].from); uerr != nil {
			undo = append(undo, uerr)
		}
	}
	if len(undo) > 0 {
		return fmt.Errorf("%w; undoing it failed too, abort the install: %w", err, errors.Join(undo...))
	}
	return err
}

// finishParts runs step (c): fsync each part, then rename it to its final
// name inside the stage and fsync the folders holding them.
func (s *Stage) finishParts(parts []move) error {
	dirs := make(map[string]bool)
	for i, m := range parts {
		err := syncFile(m.from)
		if err == nil {
			err = s.rename(m.from, m.to)
		}
		if err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = s.rename(parts[j].to, parts[j].from)
			}
			return fmt.Errorf("finish %s: %w", m.to, err)
		}
		dirs[filepath.Dir(m.to)] = true
	}
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	return nil
}

// place runs steps (d) to (f) and renames back what it moved when one fails.
func (s *Stage) place(p *plan) error {
	if p.playlist != nil {
		// A part from an earlier failed attempt is ours; replace it.
		if err := os.Remove(p.playlist.from); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := writeSynced(p.playlist.from, p.data); err != nil {
			return fmt.Errorf("write playlist: %w", err)
		}
	}
	if err := s.rename(p.game.from, p.game.to); err != nil { // (d)
		return fmt.Errorf("move into place: %w", err)
	}
	moved := []move{p.game}
	var err error
	if p.playlist != nil { // (e)
		if err = s.rename(p.playlist.from, p.playlist.to); err == nil {
			moved = append(moved, *p.playlist)
		} else {
			err = fmt.Errorf("move playlist into place: %w", err)
		}
	}
	if err == nil { // (f)
		if err = syncDir(s.systemDir); err == nil {
			return nil
		}
		err = fmt.Errorf("sync %s: %w", s.systemDir, err)
	}
	var undo []error
	for i := len(moved) - 1; i >= 0; i-- {
		if uerr := s.rename(moved[i].to, moved[i].from); uerr != nil {
			undo = append(undo, uerr)
		}
	}
	_ = syncDir(s.systemDir)
	if len(undo) > 0 {
		return fmt.Errorf("%w; moving it back failed too, check %s by hand: %w", err, s.systemDir, errors.Join(undo...))
	}
	return err
}
