package tracker

import (
	"math/rand/v2"
	"strings"
)

type game struct{ system, path, name string }

var testGames = []game{
	{"nes", smbPath, smbName},
	{"gb", tetrisPath, "Tetris"},
	{"nes", marioPath, "Mario (USA)"},
	{"snes", "/userdata/roms/snes/Zelda - A Link to the Past (USA).sfc", "The Legend of Zelda: A Link to the Past"},
	{"mame", "/userdata/roms/mame/sf2ce.zip", "Street Fighter II' - Champion Edition"},
}

// storyGen writes realistic event sequences: launches reported by any subset of ES, configgen and the
// watcher (ES's path sometimes escaped or mangled), short and long sessions, missed game-ends,
// screensavers of every type with their picks, launches from the screensaver, sleep and wake, quit,
// reboot into a second boot, and bursts of 20 events within a second.
type storyGen struct {
	r    *rand.Rand
	evs  []Event
	boot string
}

func (g *storyGen) ev(kind Kind, sec float64, src Source) Event {
	e := at(kind, sec, src)
	if g.boot == bootB {
		e = inBoot(e)
	}
	return e
}

func (g *storyGen) add(e Event) { g.evs = append(g.evs, e) }

func (g *storyGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *storyGen) launch(t float64, gm game, fromScreensaver bool) float64 {
	reported := false
	if g.chance(0.8) || fromScreensaver {
		e := g.ev(KindGameStart, t, SourceES)
		e.Path, e.Name = gm.path, gm.name
		switch {
		case g.chance(0.15):
			e.Path = strings.ReplaceAll(gm.path, " ", `\ `) // escapes the hook could not undo
		case g.chance(0.1):
			e.Path = gm.path[:len(gm.path)-6] + ".x" // mangled beyond repair
		}
		g.add(e)
		reported = true
	}
	if g.chance(0.8) || !reported {
		e := g.ev(KindGameStart, t+0.05+g.r.Float64()*0.75, SourceConfiggen)
		e.System, e.Path, e.Emulator, e.Core = gm.system, gm.path, "libretro", "core"
		g.add(e)
	}
	dur := 5 + g.r.Float64()*400
	if g.chance(0.5) {
		e := g.ev(KindGameStart, t+0.5+g.r.Float64()*3.5, SourceWatcher)
		e.Path, e.Name, e.SystemName = gm.path, gm.name, strings.ToUpper(gm.system)
		g.add(e)
	}
	end := t + dur
	if g.chance(0.1) {
		return end // game-end missed by everyone: the next launch ends it
	}
	ended := false
	if g.chance(0.8) {
		e := g.ev(KindGameEnd, end, SourceConfiggen)
		e.System, e.Path = gm.system, gm.path
		g.add(e)
		ended = true
	}
	if g.chance(0.8) || !ended {
		g.add(g.ev(KindGameEnd, end+0.03, SourceES))
	}
	if g.chance(0.4) {
		g.add(g.ev(KindGameEnd, end+0.5+g.r.Float64()*2.5, SourceWatcher))
	}
	return end + 1
}

func (g *storyGen) screensaver(t float64) float64 {
	types := []string{"dim", "black", "random video", "slideshow", "suspend"}
	typ := types[g.r.IntN(len(types))]
	e := g.ev(KindScreensaverStart, t, SourceES)
	e.Arg = typ
	g.add(e)
	if typ == "dim" || typ == "black" {
		g.add(g.ev(KindSleep, t+0.2, SourceES))
	}
	if typ == "suspend" {
		return t + 100 // no stop follows; the next event clears it
	}
	var last game
	for i := 0; i < 1+g.r.IntN(3); i++ {
		t += 1 + g.r.Float64()*30
		if typ == "random video" || typ == "slideshow" {
			last = testGames[g.r.IntN(len(testGames))]
			p := g.ev(KindGameSelected, t, SourceES)
			p.System, p.Path, p.Name = last.system, last.path, last.name
			g.add(p)
		}
	}
	t += 5
	if last.path != "" && g.chance(0.5) {
		p := g.ev(KindGameSelected, t, SourceES) // the launch re-selects the shown game
		p.System, p.Path, p.Name = last.system, last.path, last.name
		g.add(p)
		g.add(g.ev(KindScreensaverStop, t+0.01, SourceES))
		return g.launch(t+0.02, last, true)
	}
	g.add(g.ev(KindScreensaverStop, t, SourceES))
	if typ == "dim" || typ == "black" {
		g.add(g.ev(KindWake, t+0.01, SourceES))
	}
	return t + 1
}

// burst is 20 events within one second: the screensaver's picks, its stop, a wake and a launch.
func (g *storyGen) burst(t float64) float64 {
	e := g.ev(KindScreensaverStart, t, SourceES)
	e.Arg = "random video"
	g.add(e)
	var gm game
	for i := 0; i < 15; i++ {
		gm = testGames[g.r.IntN(len(testGames))]
		p := g.ev(KindGameSelected, t+0.05+float64(i)*0.05, SourceES)
		p.System, p.Path, p.Name = gm.system, gm.path, gm.name
		g.add(p)
	}
	g.add(g.ev(KindScreensaverStop, t+0.8, SourceES))
	g.add(g.ev(KindWake, t+0.81, SourceES))
	return g.launch(t+0.82, gm, true)
}

func (g *storyGen) story(steps int) []Event {
	g.boot = bootA
	t := 0.0
	g.add(g.ev(KindStart, t, SourceES))
	rebooted := false
	for i := 0; i < steps; i++ {
		t += 3 + g.r.Float64()*60
		switch n := g.r.IntN(12); {
		case n < 4:
			t = g.launch(t, testGames[g.r.IntN(len(testGames))], false)
		case n < 7:
			t = g.screensaver(t)
		case n == 7:
			t = g.burst(t)
		case n == 8:
			g.add(g.ev(KindSleep, t, SourceES)) // sleep repeats without a wake
			g.add(g.ev(KindSleep, t+20+g.r.Float64()*100, SourceES))
			t += 130
		case n == 9:
			g.add(g.ev(KindQuit, t, SourceES))
			t += 5
			g.add(g.ev(KindStart, t, SourceES))
		case n == 10 && !rebooted:
			q := g.ev(KindQuit, t, SourceES)
			q.Arg = "reboot"
			g.add(q)
			g.add(g.ev(KindReboot, t+0.01, SourceES))
			g.boot, rebooted = bootB, true
			t += 60
			g.add(g.ev(KindStart, t, SourceES))
		default:
			g.add(g.ev(KindSystemSelected, t, SourceES))
		}
	}
	return g.evs
}

// chaos is a handful of arbitrary events within 2 s: no story, only the promise that order does not
// matter.
func chaos(r *rand.Rand, n int) []Event {
	kinds := []Kind{KindStart, KindGameStart, KindGameStart, KindGameEnd, KindGameSelected, KindSystemSelected,
		KindScreensaverStart, KindScreensaverStop, KindSleep, KindWake, KindQuit, KindReboot, KindStopped}
	sources := []Source{SourceES, SourceConfiggen, SourceWatcher}
	var evs []Event
	for i := 0; i < n; i++ {
		e := at(kinds[r.IntN(len(kinds))], 100+r.Float64()*2, sources[r.IntN(len(sources))])
		gm := testGames[r.IntN(2)]
		e.Path, e.Name, e.System = gm.path, gm.name, gm.system
		if e.Kind == KindScreensaverStart {
			e.Arg = []string{"dim", "random video", "suspend"}[r.IntN(3)]
		}
		if e.Kind == KindQuit && r.IntN(2) == 0 {
			e.Arg = "reboot"
		}
		evs = append(evs, e)
	}
	return evs
}
