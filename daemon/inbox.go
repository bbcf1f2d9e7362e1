package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging"
)

// inboxSweep is how often the inbox is listed in case a notification was
// lost (an inotify queue overflow) or a record could not be persisted.
const inboxSweep = 30 * time.Second

// flagLinger is how long the screensaver flag outlives screensaver-stop,
// the installed wrappers' linger: the screensaver's own game-selected
// races its stop.
const flagLinger = packaging.DefaultFlagLingerS * time.Second

// inboxReader takes the wrappers' records: each file is read when it is
// closed, its event persisted like a hook's (the intake log, fsynced), and
// then removed.
type inboxReader struct {
	d   *Daemon
	dir journal.InboxDir

	mu        sync.Mutex
	seq       journal.InboxSequence // stamps records in the order they are taken
	badLogged bool                  // an unreadable file is logged once per daemon
	flagOn    bool                  // the screensaver flag, as the wrappers keep it
	flagGen   int
	lingering bool // a screensaver-stop was seen: the flag goes soon
	flagTimer clock.Timer
	selected  tracker.Event // the latest game-selected or system-selected
}

// watch arms the inotify watch on the inbox: from then on no file closed
// in it is missed, so it is armed before the crash-left files are listed
// and before wrappers are told the daemon is up.
func (r *inboxReader) watch() (*os.File, error) {
	if err := os.MkdirAll(r.dir.Path, 0o755); err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inbox watch: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, r.dir.Path, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inbox watch %s: %w", r.dir.Path, err)
	}
	// Non-blocking and through os.File: reads wait in Go's poller, and
	// Close wakes them.
	return os.NewFile(uintptr(fd), "inotify:"+r.dir.Path), nil
}

// run takes files as their writers close them, and sweeps the folder now
// and then, until ctx ends.
func (r *inboxReader) run(ctx context.Context, f *os.File) error {
	names := make(chan string, 256)
	overflow := make(chan struct{}, 1)
	readErr := make(chan error, 1)
	done := make(chan struct{})
	go func() { readErr <- readInotify(f, names, overflow, done) }()
	defer func() { close(done); f.Close() }()
	tick, tc := r.d.clock.NewTicker(inboxSweep)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case name := <-names:
			r.take(name)
		case <-overflow:
			r.sweep()
		case <-tc:
			r.sweep()
		case err := <-readErr:
			return err
		}
	}
}

// readInotify decodes events until f is closed or done.
func readInotify(f *os.File, names chan<- string, overflow chan<- struct{}, done <-chan struct{}) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) {
				return nil
			}
			return fmt.Errorf("inbox watch: %w", err)
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + unix.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				select {
				case overflow <- struct{}{}:
				default:
				}
			} else if ev.Len > 0 {
				name := buf[off+unix.SizeofInotifyEvent : end]
				if i := bytes.IndexByte(name, 0); i >= 0 {
					name = name[:i] // the kernel pads names with NULs
				}
				select {
				case names <- string(name):
				case <-done:
					return nil
				}
			}
			off = end
		}
	}
}

// sweep takes what the folder holds, in stamp order.
func (r *inboxReader) sweep() {
	ok, bad, err := r.dir.Pending()
	if err != nil {
		r.d.log.Warn().Err(err).Msg("inbox unreadable")
		return
	}
	r.logBad(bad...)
	for _, e := range ok {
		r.persist(e)
	}
}

// take reads one file just closed.
func (r *inboxReader) take(name string) {
	e, err := r.dir.Read(name)
	if errors.Is(err, os.ErrNotExist) {
		return // taken by a sweep already
	}
	if err != nil {
		r.logBad(fmt.Errorf("inbox file %s: %w", name, err))
		r.dir.RemoveIfStale(name, e.Mod)
		return
	}
	r.persist(e)
}

func (r *inboxReader) logBad(errs ...error) {
	if len(errs) == 0 {
		return
	}
	r.mu.Lock()
	first := !r.badLogged
	r.badLogged = true
	r.mu.Unlock()
	lvl := r.d.log.Debug()
	if first {
		lvl = r.d.log.Warn().Str("hint", "a wrapper that cannot write its record falls back to the binary; unreadable files are removed after a minute")
	}
	lvl.Errs("files", errs).Msg("inbox files ignored")
}

// persist turns a record into its event, stamped now, and persists it
// (selections only in memory, but for a game-selected while the
// screensaver shows games, which the tracker needs); the file goes once the
// event is safe.
func (r *inboxReader) persist(e journal.InboxEntry) {
	st := r.d.opts.Now()
	r.mu.Lock()
	ev, err := r.seq.Event(e, st)
	r.mu.Unlock()
	if err != nil {
		// A record the binary would have ignored too (an event the tracker
		// has no use for) or refused (garbage argv): the same outcome.
		r.d.log.Debug().Err(err).Str("file", e.Name).Msg("inbox event ignored")
		r.dir.Remove(e.Name)
		return
	}
	r.d.selected.take(ev) // as taken: the screensaver's start must be known before its picks settle
	if r.keepInMemory(ev) {
		r.dir.Remove(e.Name)
		r.d.log.Debug().Str("file", e.Name).Str("event", string(ev.Kind)).Msg("inbox selection kept")
		return
	}
	if err := r.d.record(journal.Keyed{Key: e.Key(st.BootID), Event: ev}); err != nil {
		r.d.log.Error().Err(err).Str("file", e.Name).Msg("inbox event not persisted; it stays in the inbox and is tried again")
		return
	}
	r.screensaver(ev)
	if err := r.dir.Remove(e.Name); err != nil {
		r.d.log.Warn().Err(err).Str("file", e.Name).Msg("inbox file not removed; it is applied once whoever takes it")
		return
	}
	r.d.log.Debug().Str("file", e.Name).Str("event", string(ev.Kind)).Str("source", string(ev.Source)).Dur("boot", ev.Boot).Msg("inbox event taken")
}

// keepInMemory keeps the latest selection and says whether ev is one that
// needs no more: a cursor move, unless the screensaver is picking games.
func (r *inboxReader) keepInMemory(ev tracker.Event) bool {
	if ev.Kind != tracker.KindGameSelected && ev.Kind != tracker.KindSystemSelected {
		return false
	}
	r.d.saves.selected(ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.selected = ev
	return ev.Kind == tracker.KindSystemSelected || !r.flagOn
}

// screensaver keeps the flag the wrappers gate game-selected on when no
// daemon runs, so a daemon that dies during a screensaver leaves it right.
func (r *inboxReader) screensaver(ev tracker.Event) {
	flag := r.d.config().Layout.ScreensaverFlag()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case ev.Kind == tracker.KindScreensaverStart && ev.Arg != "suspend":
		r.flagGen++
		if r.flagTimer != nil {
			r.flagTimer.Stop()
		}
		r.flagOn, r.lingering = true, false
		os.WriteFile(flag, []byte(fmt.Sprintf("daemon-%d\n", r.flagGen)), 0o644)
	case ev.Kind == tracker.KindScreensaverStop && r.flagOn:
		gen := r.flagGen
		r.lingering = true
		r.flagTimer = r.d.clock.AfterFunc(flagLinger, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.flagGen == gen {
				r.flagOn, r.lingering = false, false
				os.Remove(flag)
			}
		})
	}
}

// stop ends the flag's linger now when the daemon stops: a flag left
// behind would let every cursor move start the binary once no daemon runs.
// A screensaver still on keeps it, for the wrappers' own gate.
func (r *inboxReader) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flagTimer != nil {
		r.flagTimer.Stop()
	}
	if r.lingering {
		r.flagOn, r.lingering = false, false
		os.Remove(r.d.config().Layout.ScreensaverFlag())
	}
}

// latestSelected is the last game or system the cursor stopped on.
func (r *inboxReader) latestSelected() tracker.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.selected
}

// inboxPart runs the reader on the watch armed at start, and on a new one
// after a restart of the part.
func (d *Daemon) inboxPart(first *os.File) func(context.Context) error {
	return func(ctx context.Context) error {
		f := first
		first = nil
		if f == nil {
			var err error
			if f, err = d.inbox.watch(); err != nil {
				return err
			}
			d.inbox.sweep() // what was closed while no watch was armed
		}
		return d.inbox.run(ctx, f)
	}
}
