package inbox

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

// StaleAfter is how long an unreadable file (torn, foreign) stays before it
// is removed: long enough for a human looking at a problem to see it.
const StaleAfter = time.Minute

// Dir is an inbox folder.
type Dir struct{ Path string }

// Entry is one file read back.
type Entry struct {
	Name   string
	Record Record
	// Mod is the file's time (the kernel's coarse clock: for clean-up only).
	Mod time.Time
}

// Read reads the named file. A file that is gone returns os.ErrNotExist.
func (d Dir) Read(name string) (Entry, error) {
	if name == "" || len(name) > maxName || strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, ".") {
		return Entry{}, fmt.Errorf("inbox: bad file name %q", clip(name))
	}
	f, err := os.Open(filepath.Join(d.Path, name))
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Entry{}, err
	}
	if !fi.Mode().IsRegular() {
		return Entry{Name: name, Mod: fi.ModTime()}, errors.New("inbox: not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxRecord+1))
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Name: name, Mod: fi.ModTime()}
	e.Record, err = Parse(b)
	return e, err
}

// Pending reads every record waiting in the folder, in the order their
// events happened (boot clock, then name), for whoever takes over what a
// crashed daemon left. Files that cannot be read are returned in bad.
func (d Dir) Pending() (ok []Entry, bad []error, err error) {
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

// Remove deletes a file once its event is persisted elsewhere.
func (d Dir) Remove(name string) error {
	err := os.Remove(filepath.Join(d.Path, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// RemoveIfStale removes a file that could not be read once it is older
// than StaleAfter (mod is its time; zero: unknown, keep).
func (d Dir) RemoveIfStale(name string, mod time.Time) {
	if !mod.IsZero() && time.Since(mod) > StaleAfter {
		d.Remove(name)
	}
}

// Count is how many files wait in the folder (for doctor).
func (d Dir) Count() int {
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
func (e Entry) Key(bootID string) string {
	if len(bootID) > 8 {
		bootID = bootID[:8]
	}
	return "inbox-" + bootID + "-" + e.Name
}

// Event turns the record into the tracker's event, as `cabinet hook` would
// have: wall is when it was read (the file's time is too coarse), the boot
// clock the wrapper's, plus order microseconds so that records stamped in
// the same hundredth keep the order they were written in.
func (e Entry) Event(wall time.Time, bootID string, order int) (tracker.Event, error) {
	st := tracker.Stamp{At: wall, Boot: e.Record.Uptime + time.Duration(order)*time.Microsecond, BootID: bootID}
	return argv.Parse(e.Record.Argv, st)
}
