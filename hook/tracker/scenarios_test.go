package tracker

import (
	"slices"
	"testing"
	"time"
)

type scenario struct {
	name   string
	cfg    func(*Config)
	events []Event
	// expected final state
	activity    string
	online      bool
	playing     string // current game, "" when idle
	screensaver bool
	last        string // last logged game, "" when none
	playTime    time.Duration
	logged      []string // describeLogged without ids
	emitted     []string // describeEvents
}

func scenarios() []scenario {
	return []scenario{
		{
			name: "normal session reported by ES and configgen",
			events: []Event{
				esEvent(KindStart, 0),
				esGameStart(10, smbPath, smbName),
				cgEvent(KindGameStart, 10.4, "nes", smbPath),
				cgEvent(KindGameEnd, 310, "nes", smbPath),
				esEvent(KindGameEnd, 310.03),
			},
			activity: "menu", online: true, last: smbName, playTime: 300 * time.Second,
			logged:  []string{smbName + "|nes|300|es"},
			emitted: []string{"start", "session_start:" + smbName},
		},
		{
			// ES fires game-start and game-end around Cabinet's own entries (and the watcher may see
			// one in /runningGame): no session, no play time, and a game played after is counted.
			name: "Cabinet's entries are no games",
			cfg:  func(c *Config) { c.MinSession = 0 },
			events: []Event{
				esEvent(KindStart, 0),
				esGameStart(10, "/userdata/system/cabinet/entries/ask-for-more-time.cabinet", "Ask for 15 more minutes"),
				watcherEvent(KindGameStart, 10.5, "/userdata/system/cabinet/entries/ask-for-more-time.cabinet", "Ask for 15 more minutes", "Cabinet"),
				esEvent(KindGameEnd, 11),
				esGameStart(20, smbPath, smbName),
				esEvent(KindGameEnd, 80),
			},
			activity: "menu", online: true, last: smbName, playTime: 60 * time.Second,
			logged:  []string{smbName + "|nes|60|es"},
			emitted: []string{"start", "session_start:" + smbName},
		},
		{
			name: "short session is shown live but not logged",
			events: []Event{
				esEvent(KindStart, 0),
				esGameStart(10, smbPath, smbName),
				esEvent(KindGameEnd, 40),
			},
			activity: "menu", online: true,
			emitted: []string{"start", "session_start:" + smbName},
		},
		{
			name: "min session 0 logs everything",
			cfg:  func(c *Config) { c.MinSession = 0 },
			events: []Event{
				esGameStart(10, smbPath, smbName),
				esEvent(KindGameEnd, 12),
			},
			activity: "menu", online: true, last: smbName, playTime: 2 * time.Second,
			logged:  []string{smbName + "|nes|2|es"},
			emitted: []string{"session_start:" + smbName},
		},
		{
			name: "screensaver launch is not logged",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindScreensaverStart, 300, "random video"),
				screensaverPick(301, "nes", smbPath, smbName),
				screensaverPick(331, "gb", tetrisPath, "Tetris"),
				screensaverPick(345, "gb", tetrisPath, "Tetris"),
				esEvent(KindScreensaverStop, 345.01),
				esGameStart(345.02, tetrisPath, "Tetris"),
				cgEvent(KindGameStart, 345.5, "gb", tetrisPath),
				esEvent(KindGameEnd, 900),
			},
			activity: "menu", online: true,
			emitted: []string{"start"},
		},
		{
			name: "screensaver launch without a fresh game-selected is not logged",
			events: []Event{
				esEvent(KindScreensaverStart, 300, "random video"),
				screensaverPick(320, "gb", tetrisPath, "Tetris"), // shown for 25 s, then START
				esEvent(KindScreensaverStop, 345),
				esGameStart(345.02, tetrisPath, "Tetris"),
				esEvent(KindGameEnd, 900),
			},
			activity: "menu", online: true,
		},
		{
			name: "browsing after the screensaver stopped is not a screensaver launch",
			events: []Event{
				esEvent(KindScreensaverStart, 300, "random video"),
				screensaverPick(320, "gb", tetrisPath, "Tetris"),
				esEvent(KindScreensaverStop, 340),
				screensaverPick(342, "nes", smbPath, smbName), // the flag file still lets it through
				esGameStart(344, smbPath, smbName),
				esEvent(KindGameEnd, 644),
			},
			activity: "menu", online: true, last: smbName, playTime: 300 * time.Second,
			logged:  []string{smbName + "|nes|300|es"},
			emitted: []string{"session_start:" + smbName},
		},
		{
			name: "screensaver launch is logged when the option is off",
			cfg:  func(c *Config) { c.IgnoreScreensaverLaunches = false },
			events: []Event{
				esEvent(KindScreensaverStart, 300, "slideshow"),
				screensaverPick(345, "gb", tetrisPath, "Tetris"),
				esEvent(KindScreensaverStop, 345.01),
				esGameStart(345.02, tetrisPath, "Tetris"),
				esEvent(KindGameEnd, 900),
			},
			activity: "menu", online: true, last: "Tetris", playTime: 554980 * time.Millisecond,
			logged:  []string{"Tetris|gb|554|es"},
			emitted: []string{"session_start:Tetris"},
		},
		{
			name: "launch of another game while the screensaver showed one is logged",
			events: []Event{
				esEvent(KindScreensaverStart, 300, "random video"),
				screensaverPick(340, "gb", tetrisPath, "Tetris"),
				esEvent(KindScreensaverStop, 345),
				esGameStart(345.5, smbPath, smbName), // POST /launch from the web or MCP
				esEvent(KindGameEnd, 645.5),
			},
			activity: "menu", online: true, last: smbName, playTime: 300 * time.Second,
			logged:  []string{smbName + "|nes|300|es"},
			emitted: []string{"session_start:" + smbName},
		},
		{
			name: "sleep and wake repeat; a launch clears sleep silently",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindScreensaverStart, 300, "dim"),
				esEvent(KindSleep, 300.2),
				esEvent(KindSleep, 900), // an HTTP call cleared ES's sleep without a wake
				esEvent(KindScreensaverStop, 1000),
				esEvent(KindWake, 1000.01),
				esEvent(KindScreensaverStart, 1300, "dim"),
				esEvent(KindSleep, 1300.1),
				esEvent(KindScreensaverStop, 1400),
				esGameStart(1400.5, smbPath, smbName),
			},
			activity: "playing", online: true, playing: smbName,
			emitted: []string{"start", "sleep", "sleep", "wake", "sleep", "session_start:" + smbName},
		},
		{
			name: "plain quit, then ES restarts",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindQuit, 500),
				esEvent(KindStart, 520),
			},
			activity: "menu", online: true,
			emitted: []string{"start", "quit", "start"},
		},
		{
			name: "reboot is one event, not a quit too",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindQuit, 500, "reboot"),
				esEvent(KindReboot, 500.01),
			},
			activity: "off", online: false,
			emitted: []string{"start", "reboot"},
		},
		{
			name: "shutdown ends the running game",
			events: []Event{
				esEvent(KindStart, 0),
				esGameStart(10, smbPath, smbName),
				esEvent(KindShutdown, 400.02),
				esEvent(KindQuit, 400, "shutdown"),
			},
			activity: "off", online: false, last: smbName, playTime: 390 * time.Second,
			logged:  []string{smbName + "|nes|390|es"},
			emitted: []string{"start", "session_start:" + smbName, "shutdown"},
		},
		{
			name: "ES hook never fires: configgen alone",
			events: []Event{
				cgEvent(KindGameStart, 10, "nes", marioPath),
				cgEvent(KindGameEnd, 200, "nes", marioPath),
			},
			activity: "menu", online: true, last: "Mario_(USA)", playTime: 190 * time.Second,
			logged:  []string{"Mario_(USA)|nes|190|configgen"},
			emitted: []string{"session_start:Mario_(USA)"},
		},
		{
			name: "ES hook never fires: configgen and the watcher, watcher names win",
			events: []Event{
				cgEvent(KindGameStart, 10, "nes", marioPath),
				watcherEvent(KindGameStart, 13, marioPath, "Mario (USA)", "Nintendo Entertainment System"),
				cgEvent(KindGameEnd, 200, "nes", marioPath),
				watcherEvent(KindGameEnd, 202, "", "", ""),
			},
			activity: "menu", online: true, last: "Mario (USA)", playTime: 190 * time.Second,
			logged:  []string{"Mario (USA)|nes|190|configgen"},
			emitted: []string{"session_start:Mario_(USA)"},
		},
		{
			name: "ES path with escapes left in, configgen and watcher count once",
			events: []Event{
				func() Event {
					ev := esGameStart(10, `/userdata/roms/nes/Tom\'s\ $Game.nes`, "Tom's ") // sh expanded $Game in the name
					ev.Stem = "Tom's "
					return ev
				}(),
				cgEvent(KindGameStart, 10.6, "nes", "/userdata/roms/nes/Tom's $Game.nes"),
				watcherEvent(KindGameStart, 12, "/userdata/roms/nes/Tom's $Game.nes", "Tom's $Game", "Nintendo Entertainment System"),
				esEvent(KindGameEnd, 100),
			},
			activity: "menu", online: true, last: "Tom's $Game", playTime: 90 * time.Second,
			logged:  []string{"Tom's $Game|nes|90|es"},
			emitted: []string{"session_start:Tom's"},
		},
		{
			name: "ES path mangled beyond repair still counts once with configgen",
			events: []Event{
				func() Event {
					ev := esGameStart(10, "/userdata/roms/nes/Tom's .nes", "Tom's ")
					ev.Stem = "Tom's "
					return ev
				}(),
				cgEvent(KindGameStart, 10.6, "nes", "/userdata/roms/nes/Tom's $Game.nes"),
				watcherEvent(KindGameStart, 12, "/userdata/roms/nes/Tom's $Game.nes", "Tom's $Game", "Nintendo Entertainment System"),
				esEvent(KindGameEnd, 100),
			},
			activity: "menu", online: true, last: "Tom's $Game", playTime: 90 * time.Second,
			logged:  []string{"Tom's $Game|nes|90|es"},
			emitted: []string{"session_start:Tom's"},
		},
		{
			name: "missed game-end: a different game ends the old session",
			events: []Event{
				esGameStart(10, smbPath, smbName),
				esGameStart(400, tetrisPath, "Tetris"),
			},
			activity: "playing", online: true, playing: "Tetris", last: smbName, playTime: 390 * time.Second,
			logged:  []string{smbName + "|nes|390|es"},
			emitted: []string{"session_start:" + smbName, "session_start:Tetris"},
		},
		{
			name: "suspend screensaver fires no stop; wake clears it",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindScreensaverStart, 300, "suspend"),
				esEvent(KindWake, 5000),
			},
			activity: "menu", online: true,
			emitted: []string{"start", "wake"},
		},
		{
			name: "suspend screensaver; system-selected clears it",
			events: []Event{
				esEvent(KindScreensaverStart, 300, "suspend"),
				at(KindSystemSelected, 5000, SourceES),
			},
			activity: "menu", online: true,
		},
		{
			name: "suspend screensaver; game-selected clears it",
			events: []Event{
				esEvent(KindScreensaverStart, 300, "suspend"),
				screensaverPick(5000, "nes", smbPath, smbName),
			},
			activity: "menu", online: true,
		},
		{
			name: "screensaver still running",
			events: []Event{
				esEvent(KindStart, 0),
				esEvent(KindScreensaverStart, 300, "random video"),
				screensaverPick(301, "nes", smbPath, smbName),
			},
			activity: "screensaver", online: true, screensaver: true,
			emitted: []string{"start"},
		},
		{
			name: "power cut during a game: the next boot ends it at the last event seen",
			events: []Event{
				esEvent(KindStart, 0),
				esGameStart(10, smbPath, smbName),
				watcherEvent(KindGameStart, 200, smbPath, smbName, "Nintendo Entertainment System"),
				inBoot(esEvent(KindStart, 2000)),
			},
			activity: "menu", online: true, last: smbName, playTime: 190 * time.Second,
			logged:  []string{smbName + "|nes|190|es"},
			emitted: []string{"start", "session_start:" + smbName, "start"},
		},
		{
			name:     "20 events at once, in reverse order",
			events:   twentyAtOnce(),
			activity: "menu", online: true, last: smbName, playTime: 399270 * time.Millisecond,
			logged: []string{smbName + "|nes|399|es"},
			// session_start goes out when the start is final, after the wake
			// that happened just after the launch.
			emitted: []string{"start", "sleep", "wake", "session_start:" + smbName},
		},
		{
			name: "clean daemon stop takes the cabinet offline",
			events: []Event{
				esEvent(KindStart, 0),
				at(KindStopped, 50, SourceWatcher),
			},
			activity: "off", online: false,
			emitted: []string{"start"},
		},
	}
}

// twentyAtOnce is 20 hooks ES started within one second (waking a dim screensaver, scrolling, and a
// launch), arriving in reverse order, between events that arrive in order.
func twentyAtOnce() []Event {
	var burst []Event
	burst = append(burst, esEvent(KindScreensaverStop, 1000), esEvent(KindWake, 1000.01))
	for i := 0; i < 6; i++ {
		burst = append(burst, at(KindSystemSelected, 1000.05+float64(i)*0.01, SourceES))
	}
	for i := 0; i < 10; i++ {
		burst = append(burst, screensaverPick(1000.2+float64(i)*0.04, "nes", smbPath, smbName))
	}
	burst = append(burst, esGameStart(1000.7, smbPath, smbName), cgEvent(KindGameStart, 1000.9, "nes", smbPath))
	slices.Reverse(burst)
	evs := []Event{esEvent(KindStart, 0), esEvent(KindScreensaverStart, 300, "dim"), esEvent(KindSleep, 300.2)}
	evs = append(evs, burst...)
	return append(evs, cgEvent(KindGameEnd, 1399.97, "nes", smbPath), esEvent(KindGameEnd, 1400))
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			if sc.cfg != nil {
				sc.cfg(&cfg)
			}
			r := feed(t, cfg, sc.events, 50*time.Millisecond)
			checkScenario(t, sc, r)
		})
	}
}

func checkScenario(t *testing.T, sc scenario, r run) {
	t.Helper()
	s := r.snap
	if s.Activity != sc.activity || s.Online != sc.online || s.Screensaver != sc.screensaver {
		t.Errorf("activity=%q online=%v screensaver=%v, want %q %v %v", s.Activity, s.Online, s.Screensaver, sc.activity, sc.online, sc.screensaver)
	}
	playing := ""
	if s.Playing {
		playing = s.Current.Game
	}
	if playing != sc.playing {
		t.Errorf("playing %q, want %q", playing, sc.playing)
	}
	if s.Last.Game != sc.last {
		t.Errorf("last session %q, want %q", s.Last.Game, sc.last)
	}
	if s.PlayTime != sc.playTime {
		t.Errorf("play time %v, want %v", s.PlayTime, sc.playTime)
	}
	if got := describeLogged(r.logged, false); !slices.Equal(got, sc.logged) {
		t.Errorf("logged sessions\n got %q\nwant %q", got, sc.logged)
	}
	if got := describeEvents(r.events); !slices.Equal(got, sc.emitted) {
		t.Errorf("time-sensitive events\n got %q\nwant %q", got, sc.emitted)
	}
}
