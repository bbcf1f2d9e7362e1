package tracker

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

var (
	testZone = time.FixedZone("CET", 3600)
	testBase = time.Date(2026, 1, 2, 20, 0, 0, 0, testZone)
)

const (
	bootA = "1b6a6c3e-0000-4000-8000-00000000000a"
	bootB = "1b6a6c3e-0000-4000-8000-00000000000b"
)

// stampAt is sec seconds after testBase in boot A; the boot clock reads 100 s + sec.
func stampAt(sec float64) Stamp {
	d := time.Duration(sec * float64(time.Second))
	return Stamp{At: testBase.Add(d), Boot: 100*time.Second + d, BootID: bootA}
}

func at(kind Kind, sec float64, src Source) Event {
	s := stampAt(sec)
	return Event{Kind: kind, At: s.At, Boot: s.Boot, BootID: s.BootID, Source: src}
}

// inBoot moves an event to boot B, whose clock reads 5 s + sec (only differences within a boot matter).
func inBoot(ev Event) Event {
	ev.BootID = bootB
	ev.Boot = ev.At.Sub(testBase) + 5*time.Second
	return ev
}

func esEvent(kind Kind, sec float64, arg ...string) Event {
	ev := at(kind, sec, SourceES)
	if len(arg) > 0 {
		ev.Arg = arg[0]
	}
	return ev
}

// esGameStart is ES's game-start: arg1 path (de-escaped by the hook), arg2 stem, arg3 name.
func esGameStart(sec float64, path, name string) Event {
	ev := at(KindGameStart, sec, SourceES)
	ev.Path, ev.Name = path, name
	base := path[strings.LastIndexByte(path, '/')+1:]
	ev.Stem = strings.TrimSuffix(base, base[strings.LastIndexByte(base, '.'):])
	return ev
}

// cgEvent is the configgen script: gameStart|gameStop system emulator core rom.
func cgEvent(kind Kind, sec float64, system, path string) Event {
	ev := at(kind, sec, SourceConfiggen)
	ev.System, ev.Emulator, ev.Core, ev.Path = system, "libretro", "nestopia", path
	return ev
}

// watcherEvent is the daemon's /runningGame watch: true path, ES's name and full system name.
func watcherEvent(kind Kind, sec float64, path, name, systemName string) Event {
	ev := at(kind, sec, SourceWatcher)
	ev.Path, ev.Name, ev.SystemName = path, name, systemName
	return ev
}

// screensaverPick is the game-selected the screensaver fires (system, raw path, name).
func screensaverPick(sec float64, system, path, name string) Event {
	ev := at(KindGameSelected, sec, SourceES)
	ev.System, ev.Path, ev.Name = system, path, name
	return ev
}

const (
	smbPath    = "/userdata/roms/nes/Super Mario Bros. (World).nes"
	smbName    = "Super Mario Bros. (World)"
	tetrisPath = "/userdata/roms/gb/Tetris.gb"
	marioPath  = "/userdata/roms/nes/Mario_(USA).nes"
)

// run is the result of feeding events one Apply at a time, each at its own time plus delay, then a
// flush an hour later.
type run struct {
	st     State
	snap   haentities.Snapshot
	logged []haentities.Session
	events []TimedEvent
	snaps  []haentities.Snapshot // snapshot after each Apply
}

// feed applies the events in the given (arrival) order. now for each Apply is the latest event time
// seen so far plus delay; the final flush comes an hour after the last event.
func feed(t testing.TB, cfg Config, evs []Event, delay time.Duration) run {
	t.Helper()
	var r run
	st := New()
	var now Stamp
	for _, ev := range evs {
		s := ev.Stamp()
		if now.At.IsZero() || s.BootID != now.BootID || s.Boot+delay > now.Boot {
			now = Stamp{At: s.At.Add(delay), Boot: s.Boot + delay, BootID: s.BootID}
		}
		var out Output
		st, out = applyAs(st, cfg, now, ev)
		for _, err := range out.Skipped {
			t.Fatalf("event %v skipped: %v", ev, err)
		}
		r.collect(out)
	}
	flush := Stamp{At: now.At.Add(time.Hour), Boot: now.Boot + time.Hour, BootID: now.BootID}
	st, out := Apply(st, cfg, flush)
	r.collect(out)
	r.st, r.snap = st, out.Snapshot
	return r
}

func (r *run) collect(out Output) {
	r.logged = append(r.logged, out.Logged...)
	r.events = append(r.events, out.Events...)
	r.snaps = append(r.snaps, out.Snapshot)
}

// describeLogged renders sessions as "game|system|seconds|source|id" lines.
func describeLogged(ss []haentities.Session, withID bool) []string {
	var out []string
	for _, s := range ss {
		line := fmt.Sprintf("%s|%s|%d|%s", s.Game, s.System, int64(s.Duration/time.Second), s.Source)
		if withID {
			line += "|" + s.ID
		}
		out = append(out, line)
	}
	return out
}

// describeEvents renders time-sensitive events as "type" or "session_start:game".
func describeEvents(evs []TimedEvent) []string {
	var out []string
	for _, e := range evs {
		if e.Type == haentities.EventSessionStart {
			out = append(out, e.Type+":"+e.Session.Game)
			continue
		}
		out = append(out, e.Type)
	}
	return out
}

// applyAs applies ev the way its source's process does: the configgen hook never publishes (Record),
// everyone else does (Apply).
func applyAs(st State, cfg Config, now Stamp, ev Event) (State, Output) {
	if ev.Source == SourceConfiggen {
		return Record(st, cfg, now, ev)
	}
	return Apply(st, cfg, now, ev)
}
