package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// Spool is the folder where events wait when the store is busy (20 hooks at
// once, a daemon starting or stopping). Each event is one file written
// safely (temp file, fsync, rename); the next owner of the store ingests
// them first, in event order.
type Spool struct{ Dir string }

const (
	spoolExt      = ".event"
	maxSpoolFile  = 64 << 10
	maxSpoolBatch = 2000
)

// Write persists one keyed event: the file is key.event, so the store can
// tell it from the same event delivered over the daemon's socket.
func (s Spool) Write(k Keyed) error {
	key, ev := k.Key, k.Event
	if err := CheckKey(key); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	tmp, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.Dir, key+spoolExt)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("spool: %w", err)
	}
	if d, err := os.Open(s.Dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Read returns the spooled events in event order (at most a bounded batch).
// Files that cannot be decoded are moved to bad/ so they are kept for a
// human and never block the spool.
func (s Spool) Read() ([]Keyed, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read spool: %w", err)
	}
	var out []Keyed
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		if strings.HasPrefix(name, ".tmp-") {
			s.dropStaleTemp(name)
			continue
		}
		if !strings.HasSuffix(name, spoolExt) {
			continue
		}
		ev, err := s.decode(name)
		if err != nil {
			s.quarantine(name)
			continue
		}
		out = append(out, Keyed{Key: strings.TrimSuffix(name, spoolExt), Event: ev})
		if len(out) >= maxSpoolBatch {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return before(out[i].Event, out[j].Event) })
	return out, nil
}

func (s Spool) decode(name string) (tracker.Event, error) {
	f, err := os.Open(filepath.Join(s.Dir, name))
	if err != nil {
		return tracker.Event{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSpoolFile+1))
	if err != nil {
		return tracker.Event{}, err
	}
	if len(b) > maxSpoolFile {
		return tracker.Event{}, errors.New("spooled event too large")
	}
	var ev tracker.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return tracker.Event{}, err
	}
	ev = ev.Normalize()
	return ev, ev.Validate()
}

// before orders events by boot clock within one boot, else by wall clock.
func before(a, b tracker.Event) bool {
	if a.BootID != "" && a.BootID == b.BootID {
		return a.Boot < b.Boot
	}
	return a.At.Before(b.At)
}

// Remove deletes the files of events read from the spool.
func (s Spool) Remove(items []Keyed) {
	for _, it := range items {
		os.Remove(filepath.Join(s.Dir, it.Key+spoolExt))
	}
}

func (s Spool) quarantine(name string) {
	bad := filepath.Join(s.Dir, "bad")
	os.MkdirAll(bad, 0o755)
	os.Rename(filepath.Join(s.Dir, name), filepath.Join(bad, name))
}

// dropStaleTemp removes a temp file a killed writer left behind (only old
// ones: a young one may still be being written).
func (s Spool) dropStaleTemp(name string) {
	p := filepath.Join(s.Dir, name)
	if fi, err := os.Stat(p); err == nil && time.Since(fi.ModTime()) > time.Minute {
		os.Remove(p)
	}
}
