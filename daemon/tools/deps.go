package tools

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
)

// ES is what the tools use of EmulationStation (*es.Client implements it).
// It deliberately has no way to reach /quit, /restart, /shutdown,
// /addgames, /removegames or uploads: no tool can call what is not here
// (batocera_power goes through Power).
type ES interface {
	Caps(ctx context.Context) (es.Caps, error)
	Systems(ctx context.Context) ([]es.System, error)
	Games(ctx context.Context, system string) ([]es.Game, error)
	// ListGames fetches a list without keeping it in the cache: the search index reads each
	// list once, and keeps what search needs in a fraction of the space.
	ListGames(ctx context.Context, system string) ([]es.Game, error)
	Game(ctx context.Context, system, id string) (es.Game, error)
	LookupGame(ctx context.Context, system, id string) (es.Game, error)
	RunningGame(ctx context.Context) (*es.Game, error)
	IsIdle(ctx context.Context) (bool, error)
	LaunchGame(ctx context.Context, system, id string) (es.Game, error)
	EmuKill(ctx context.Context) error
	Notify(ctx context.Context, text string) error
	MessageBox(ctx context.Context, text string) error
	ReloadGames(ctx context.Context) error
	// InvalidateSystem drops a cached game list (a launch may have moved its play counts).
	InvalidateSystem(system string)
}

// Power is what batocera_power uses of the power runner (*power.Runner
// implements it): only it reaches ES's /quit, /restart and /shutdown, and
// only when cabinet.mcp.power is on.
type Power interface {
	Intend(ctx context.Context, a power.Action) (power.Intent, error)
	Do(ctx context.Context, a power.Action) (power.Result, error)
}

// Household is the household's play-time rules, kept by the daemon (nil:
// the household tools are not registered and launches are not checked).
// by names who asked ("mcp" for the tools).
type Household interface {
	Report(ctx context.Context) (household.Report, error)
	// SetRules writes cabinet.household.* keys (full key names -> values,
	// each already valid by household.Check) to batocera.conf and applies
	// them.
	SetRules(ctx context.Context, values map[string]string, by string) (household.Report, error)
	// SetTodayLimit sets today's own limit in minutes (-1 clears it: the
	// rules' limit applies).
	SetTodayLimit(ctx context.Context, minutes int, by string) (household.Report, error)
	// Grant adds extra minutes for today; they lapse at midnight.
	Grant(ctx context.Context, minutes int, by string) (household.Report, error)
	// Pause turns "pause play now" on or off.
	Pause(ctx context.Context, on bool, by string) (household.Report, error)
	// SetPlayer chooses the profile playing from the next game ("" none).
	SetPlayer(ctx context.Context, name, by string) (household.Report, error)
	// PlanUIMode says what SetUIMode would do now, or why it would refuse
	// (a game runs, batocera.conf forces a mode).
	PlanUIMode(ctx context.Context, mode string) (string, error)
	// SetUIMode changes EmulationStation's UI mode (it restarts ES); the
	// text says what was done.
	SetUIMode(ctx context.Context, mode, by string) (household.Report, string, error)
}

// SaveSync is the daemon's save sync with RomM (nil: the save tools are not registered).
type SaveSync interface {
	Saves(ctx context.Context, g savesync.Game) (savesync.Saves, error)
	Sync(ctx context.Context, g savesync.Game, progress func(done, total int)) (savesync.Result, error)
	Resolve(ctx context.Context, romID int, slot, keep string) (savesync.Item, error)
	Status() savesync.Status
}

// RetroArch is what the tools use of RetroArch's network commands
// (*retroarch.Client implements it): the fixed hotkeys, the status queries
// and a validated one-line message, nothing a caller can turn into another
// command.
type RetroArch interface {
	Addr() string
	Version(ctx context.Context) (string, error)
	Status(ctx context.Context) (retroarch.Status, error)
	ShowMessage(ctx context.Context, text string) error
	Send(ctx context.Context, cmd retroarch.Command) error
}

// Clock is the time source of the rate limits and of "today" in play
// history (clock.Real; tests inject a *clock.Fake).
type Clock interface {
	Now() time.Time
}

// DaemonHealth is what the daemon reports about its links.
type DaemonHealth struct {
	MQTTConnected bool
	OutboxDepth   int // messages waiting for the broker
	OutboxDropped int // messages dropped because the outbox was full
	// RomM counts the sessions reported to RomM's play history; nil when
	// the cabinet does not report (not paired, or report_play off).
	RomM *RomMPlayReport
}

// RomMPlayReport is where the sessions logged since pairing stand in
// RomM's play history.
type RomMPlayReport struct {
	Delivered int
	Waiting   int // not sent yet, or RomM failed and it is retried
	Unmatched int // RomM does not have the game: not sent
}

// DaemonStatus reports the daemon's links for batocera_get_status and
// batocera_get_health; optional.
type DaemonStatus interface {
	DaemonHealth(ctx context.Context) (DaemonHealth, error)
}

// Session is one play session the tracker logged.
type Session struct {
	ID       string
	Game     string // display name
	System   string
	ROM      string // ROM path
	Started  time.Time
	Ended    time.Time // zero while the game still runs
	Duration time.Duration
	Source   string // how it was detected, e.g. "hook", "es-api"
	// Achievements is how many RetroAchievements the session unlocked.
	Achievements int
	// Profile is the household's player who launched it ("" none).
	Profile string
}

// Achievement is one RetroAchievements unlock from the log: every one,
// whether a session was known (Game, System and SessionID "" when not).
type Achievement struct {
	ID          uint32
	Title       string
	Description string
	Hardcore    bool // configured for the game in batocera.conf
	At          time.Time
	Game        string
	System      string
	SessionID   string
}

// HistoryQuery selects sessions that started in [Since, Until).
type HistoryQuery struct {
	Since, Until time.Time
	System       string // "" for all
	Limit        int    // most sessions wanted, newest first
}

// History is the tracker's session log; when given, batocera_play_history
// is registered.
type History interface {
	Sessions(ctx context.Context, q HistoryQuery) ([]Session, error)
	// Achievements are the unlocks of [Since, Until), newest first, at most
	// Limit (System is ignored: an unlock outside a session has none).
	Achievements(ctx context.Context, q HistoryQuery) ([]Achievement, error)
}

// Paths are the files batocera_get_health and batocera_take_screenshot
// read. The lead resolves them under cabinet.paths.root, so tests run on a
// fake tree.
type Paths struct {
	ThermalZones    string // glob of zone temperature files, millidegrees C
	LoadAvg         string
	MemInfo         string
	Uptime          string
	BatoceraVersion string
	StateDir        string // its filesystem's free space is reported
	ScreenshotDir   string // cabinet.retroarch.screenshot_dir
}

// Playing is what the daemon's engine says runs (cabinet://now-playing): the game as the second
// screens get it (names cleaned), and its picture.
type Playing interface {
	NowPlaying() events.NowPlaying
	// Artwork is the running game's picture as the marquee page shows it (a JPEG), nil when it
	// has none or nothing runs.
	Artwork(ctx context.Context) (data []byte, contentType string, err error)
}

// DefaultPaths are the paths on a Batocera cabinet (state and screenshot
// directories at their configuration defaults).
func DefaultPaths() Paths {
	return Paths{
		ThermalZones:    "/sys/class/thermal/thermal_zone*/temp",
		LoadAvg:         "/proc/loadavg",
		MemInfo:         "/proc/meminfo",
		Uptime:          "/proc/uptime",
		BatoceraVersion: "/usr/share/batocera/batocera.version",
		StateDir:        "/userdata/system/cabinet",
		ScreenshotDir:   "/userdata/screenshots",
	}
}

// Resolve returns p with every path passed through resolve (such as
// config.Config.Path, which places them under cabinet.paths.root).
func (p Paths) Resolve(resolve func(string) string) Paths {
	return Paths{ThermalZones: resolve(p.ThermalZones), LoadAvg: resolve(p.LoadAvg), MemInfo: resolve(p.MemInfo),
		Uptime: resolve(p.Uptime), BatoceraVersion: resolve(p.BatoceraVersion), StateDir: resolve(p.StateDir),
		ScreenshotDir: resolve(p.ScreenshotDir)}
}
