package journal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/argv"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// maxBatch bounds one listing: far more than ES fires between two reads.
// maxName bounds a file name: a wrapper's is UPTIME-PID, under 32 bytes.
const (
	maxBatch = 2000
	maxName  = 64
)

// InboxStaleAfter is how long an unreadable file (torn, foreign) stays before it
// is removed: long enough for a human looking at a problem to see it.
const InboxStaleAfter = time.Minute

// InboxDir is an inbox folder. Its Path must be absolute: a relative one would
// name a folder under whatever the working directory is, and the sweep of
// unreadable files would then remove files that are no records.
type InboxDir struct{ Path string }

func (d InboxDir) check() error {
	if !filepath.IsAbs(d.Path) {
		return fmt.Errorf("inbox: path %q is not absolute", clip(d.Path))
	}
	return nil
}

// InboxEntry is one file read back.
type InboxEntry struct {
	Name   string
	Record InboxRecord
	// Mod is the file's time (the kernel's coarse clock: for clean-up only).
	Mod time.Time
}

// Read reads the named file. A file that is gone returns os.ErrNotExist.
func (d InboxDir) Read(name string) (InboxEntry, error) {
	if err := d.check(); err != nil {
		return InboxEntry{}, err
	}
	if err := checkName(name); err != nil {
		return InboxEntry{}, err
	}
	f, err := os.Open(filepath.Join(d.Path, name))
	if err != nil {
		return InboxEntry{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return InboxEntry{}, err
	}
	if !fi.Mode().IsRegular() {
		return InboxEntry{Name: name, Mod: fi.ModTime()}, errors.New("inbox: not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxInboxRecord+1))
	if err != nil {
		return InboxEntry{}, err
	}
	e := InboxEntry{Name: name, Mod: fi.ModTime()}
	e.Record, err = ParseInbox(b)
	return e, err
}

// Pending reads every record waiting in the folder, in the order their
// events happened (boot clock, then name), for whoever takes over what a
// crashed daemon left. Files that cannot be read are returned in bad.
func (d InboxDir) Pending() (ok []InboxEntry, bad []error, err error) {
	if err := d.check(); err != nil {
		return nil, nil, err
	}
	ents, err := os.ReadDir(d.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read inbox: %w", err)
	}
	for _, de := range ents {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		e, err := d.Read(de.Name())
		if errors.Is(err, os.ErrNotExist) {
			continue // taken meanwhile
		}
		if err != nil {
			bad = append(bad, fmt.Errorf("inbox file %s: %w", clip(de.Name()), err))
			d.RemoveIfStale(de.Name(), e.Mod)
			continue
		}
		ok = append(ok, e)
		if len(ok) >= maxBatch {
			break
		}
	}
	sort.SliceStable(ok, func(i, j int) bool {
		if ok[i].Record.Uptime != ok[j].Record.Uptime {
			return ok[i].Record.Uptime < ok[j].Record.Uptime
		}
		return ok[i].Name < ok[j].Name
	})
	return ok, bad, nil
}

// checkName refuses a name that is no file of this folder (a path, a
// hidden temp file) or too long to be a wrapper's.
func checkName(name string) error {
	if name == "" || len(name) > maxName || strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("inbox: bad file name %q", clip(name))
	}
	return nil
}

// Remove deletes a file once its event is persisted elsewhere.
func (d InboxDir) Remove(name string) error {
	if err := d.check(); err != nil {
		return err
	}
	if err := checkName(name); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(d.Path, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// RemoveIfStale removes a file that could not be read once it is older
// than StaleAfter (mod is its time; zero: unknown, keep).
func (d InboxDir) RemoveIfStale(name string, mod time.Time) {
	if !mod.IsZero() && time.Since(mod) > InboxStaleAfter {
		d.Remove(name)
	}
}

// Count is how many files wait in the folder (for doctor).
func (d InboxDir) Count() int {
	if d.check() != nil {
		return 0
	}
	ents, _ := os.ReadDir(d.Path)
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// Key is the entry's identity in the store: the same whoever takes it, so
// a file applied and then taken again (a crash before its removal) counts
// once. Files never outlive a boot (the folder is on tmpfs), so the boot id
// keeps names of different boots apart.
func (e InboxEntry) Key(bootID string) string {
	if len(bootID) > 8 {
		bootID = bootID[:8]
	}
	return "inbox-" + bootID + "-" + e.Name
}

// InboxResolution is /proc/uptime's: a record's stamp is the hundredth it was
// written in.
const InboxResolution = 10 * time.Millisecond

// event turns the record into the tracker's event, as `cabinet hook` would
// have, read at now, after a record stamped after (0: none). The event
// happened within its hundredth and before it was read, so its boot stamp
// is the read, or the hundredth's end when the read came later (a record a
// crashed daemon left); and it comes after the previous record's, a
// microsecond on when they meet, so records keep the order their files
// were closed in — the order a screensaver launch's game-selected,
// screensaver-stop and game-start happened, all within a few ms. Its wall
// time is now's, moved back by the boot clock's time since (a file's own
// time is too coarse). Files never outlive a boot (tmpfs), so both stamps
// are of this boot.
func (e InboxEntry) event(now tracker.Stamp, after time.Duration) (tracker.Event, error) {
	up := e.Record.Uptime
	boot := min(max(now.Boot, up), up+InboxResolution-time.Microsecond)
	if boot <= after {
		boot = after + time.Microsecond
	}
	at := now.At
	if now.Boot > 0 && boot <= now.Boot {
		at = now.At.Add(boot - now.Boot)
	}
	return argv.Parse(e.Record.Argv, tracker.Stamp{At: at, Boot: boot, BootID: now.BootID})
}

// InboxSequence stamps records in the order they are taken (see InboxEntry.event):
// whoever takes them — the daemon as files are closed, a hook running alone
// after a crash — keeps one, so their events keep that order.
type InboxSequence struct{ last time.Duration }

// Event is e's event read at now, after every record the sequence stamped
// before it. A record the binary would have ignored or refused is an error
// and leaves the sequence as it was.
func (s *InboxSequence) Event(e InboxEntry, now tracker.Stamp) (tracker.Event, error) {
	ev, err := e.event(now, s.last)
	if err == nil {
		err = ev.Validate()
	}
	if err != nil {
		return tracker.Event{}, err
	}
	s.last = ev.Boot
	return ev, nil
}
