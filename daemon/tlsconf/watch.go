package tlsconf

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watch keeps the pair current until ctx ends: in the files mode it reloads
// after fsnotify events (settled) and when the poll sees a file change; in
// both modes the poll repeats expiry warnings and, for the self-signed pair,
// renews it when due.
//
// w is the files' watcher, made by Open before the files were read, so that
// a change made as soon as Open returns is seen (nil: none, the poll only).
func (s *Source) watch(ctx context.Context, w *fsnotify.Watcher) {
	defer close(s.done)
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	settle := time.NewTimer(settleDelay)
	settle.Stop()
	defer settle.Stop()
	tick := time.NewTicker(s.checkEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if s.concerns(ev.Name) {
				settle.Reset(settleDelay)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				s.onError(fmt.Errorf("mcp tls: watch certificate files: %w (changes are still seen within %s)", err, s.checkEvery))
			}
			settle.Reset(settleDelay) // an event may have been lost
		case <-settle.C:
			s.reload()
		case <-tick.C:
			s.check(w)
		}
	}
}

// dirs are the directories the files mode watches: a renewal that writes a
// new file and renames it over the old one is an event in the directory,
// and a watch on the old file itself would be gone with it.
func (s *Source) dirs() []string {
	d := []string{filepath.Dir(s.files.cert), filepath.Dir(s.files.key)}
	return slices.Compact(d)
}

func (s *Source) newWatcher() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	for _, d := range s.dirs() {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// concerns tells whether an event is about the cert or the key file. Other
// files in the directories (a whole /userdata/system) are ignored, so their
// writes do not keep postponing the settled reload.
func (s *Source) concerns(name string) bool {
	name = filepath.Clean(name)
	return name == s.files.cert || name == s.files.key
}

// reload reads the files after a settled change, taking the pair if it is
// new and loads; otherwise the served pair stays.
func (s *Source) reload() {
	s.stamps = s.files.stat() // before the read: a later change is seen again
	p, err := s.files.load()
	if err != nil {
		cur := s.cur.Load().info
		s.report(fmt.Errorf("mcp tls: reload: %w; still serving the previous certificate (valid until %s)",
			err, cur.NotAfter.UTC().Format(time.DateOnly)), false)
		return
	}
	if p.same(s.cur.Load()) {
		return
	}
	s.take(p)
}

// take serves p from the next handshake on.
func (s *Source) take(p *pair) {
	s.cur.Store(p)
	s.onReload(p.info.clone())
	s.warnExpiry(p, true)
}

// check is the periodic pass: re-adding a directory watch that was lost
// (the directory removed and made again), reloading files whose size or
// mtime changed, renewing a self-signed pair that is due, and repeating an
// expiry warning.
func (s *Source) check(w *fsnotify.Watcher) {
	if s.selfSigned {
		s.renewSelfSigned()
	} else {
		if w != nil {
			watched := w.WatchList()
			for _, d := range s.dirs() {
				if !slices.Contains(watched, d) {
					_ = w.Add(d) // still missing: the poll goes on
				}
			}
		}
		if s.files.stat() != s.stamps {
			s.reload()
		}
	}
	s.warnExpiry(s.cur.Load(), false)
}
