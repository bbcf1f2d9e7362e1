package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/household"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

type statusResult struct {
	Cabinet     string       `json:"cabinet"`
	ES          esState      `json:"es"`
	RunningGame *runningGame `json:"running_game"`
	Busy        *bool        `json:"busy"`
	RetroArch   raState      `json:"retroarch"`
	Daemon      *daemonState `json:"daemon,omitempty"`
	Limits      *limitsState `json:"limits"`
	SaveSync    *savesBrief  `json:"save_sync"`
	Mode        modeState    `json:"mode"`
	Limitations []string     `json:"limitations"`
}

type esState struct {
	Reachable bool    `json:"reachable"`
	Version   *string `json:"version"`
}

type runningGame struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
	Name   string `json:"name"`
	Path   string `json:"path"`
}

type raState struct {
	State  string  `json:"state"`
	System *string `json:"system"`
	Game   *string `json:"game"`
	CRC32  *string `json:"crc32"`
}

type daemonState struct {
	MQTTConnected bool `json:"mqtt_connected"`
	OutboxDepth   int  `json:"outbox_depth"`
	OutboxDropped int  `json:"outbox_dropped"`
}

// limitsState is the household's play-time rules in brief (batocera_get_limits has them whole).
type limitsState struct {
	Enabled       bool    `json:"enabled"`
	State         string  `json:"state"`
	LeftMinutes   *int    `json:"left_minutes"`
	LaunchRefused *string `json:"launch_refused"`
}

type modeState struct {
	ReadOnly bool `json:"read_only"`
	DryRun   bool `json:"dry_run"`
}

// statusDeps are what batocera_get_status reads.
type statusDeps struct {
	cabinet string
	mode    modeState
	es      ES
	ra      raLink
	daemon  DaemonStatus // nil: no daemon line
	limits  Household    // nil: limits is null
	saves   SaveSync     // nil: save_sync is null
	loc     *time.Location
}

func getStatusTool(d statusDeps) (mcp.Tool, server.ToolHandlerFunc) {
	nstr := func(d string) js { return nullable(str(d)) }
	t := define("batocera_get_status", "Cabinet status",
		"Start here. What the cabinet is doing now: whether EmulationStation answers and its version, the running "+
			"game (system, game_id, name, path) or null, whether ES is busy (a game, scraper or update running), "+
			"RetroArch's state (playing, paused, contentless, or off when it does not answer), the daemon's MQTT "+
			"link, the household's play-time rules in brief (when the cabinet keeps them), the save sync with RomM "+
			"in brief (when the cabinet syncs saves), whether this server is "+
			"read-only or in dry-run mode, and limitations with what would lift them.",
		reads, true,
		withOutput(
			req("cabinet", str("The cabinet's name.")),
			req("es", object("EmulationStation.", req("reachable", boolean("Whether ES answered.")),
				req("version", nstr("ES's /caps version (Batocera's version line), null when unreachable.")))),
			req("running_game", nullable(object("The running game, null when none.",
				req("system", str("System name.")), req("game_id", str("ES game id.")),
				req("name", str("Display name.")), req("path", str("ROM path."))))),
			req("busy", nullable(boolean("ES is busy: a game, scraper, installer or updater runs; null when unreachable."))),
			req("retroarch", object("RetroArch's network command interface.",
				req("state", str("What GET_STATUS says; off when RetroArch does not answer.",
					enum("playing", "paused", "contentless", "off"))),
				req("system", nstr("Core system id, e.g. nes.")), req("game", nstr("Content file name without extension.")),
				req("crc32", nstr("Content CRC32 in hex.")))),
			opt("daemon", object("The Cabinet daemon's links (present when the daemon answers).",
				req("mqtt_connected", boolean("Connected to the MQTT broker.")),
				req("outbox_depth", integer("Messages waiting for the broker.")),
				req("outbox_dropped", integer("Messages dropped because the outbox was full.")))),
			req("limits", nullable(object("The household's play-time rules in brief (batocera_get_limits has them "+
				"whole); null when the cabinet keeps none or they could not be read.",
				req("enabled", boolean("Whether the rules are on.")),
				req("state", str("off, ok, warning, time_up, bedtime or paused.", enum(string(household.StateOff),
					string(household.StateOK), string(household.StateWarning), string(household.StateTimeUp),
					string(household.StateBedtime), string(household.StatePaused)))),
				req("left_minutes", nullable(integer("Minutes of play left today; null: no daily limit."))),
				req("launch_refused", nullable(str("Why a game started now would be ended at once; null: a game may start.")))))),
			req("save_sync", savesBriefProps()),
			req("mode", object("This server's switches.", req("read_only", boolean("Write tools are off.")),
				req("dry_run", boolean("Actions send nothing.")))),
			req("limitations", array("What does not work right now, with what would fix it.", str("One limitation."))),
		))
	return t, typed(d.status)
}

func (d statusDeps) status(ctx context.Context, _ none) (statusResult, error) {
	res := statusResult{Cabinet: d.cabinet, Mode: d.mode, Limitations: []string{}}
	var wg sync.WaitGroup
	var st retroarch.Status
	var raErr error
	wg.Add(1)
	go func() { // RetroArch may stay silent for its whole timeout; ask ES meanwhile
		defer wg.Done()
		st, raErr = d.ra.status(ctx)
	}()
	esStatus(ctx, d.es, &res)
	if d.daemon != nil {
		if dh, err := d.daemon.DaemonHealth(ctx); err == nil {
			res.Daemon = &daemonState{MQTTConnected: dh.MQTTConnected, OutboxDepth: dh.OutboxDepth,
				OutboxDropped: dh.OutboxDropped}
			if !dh.MQTTConnected {
				res.Limitations = append(res.Limitations, "The daemon is not connected to the MQTT broker: Home Assistant "+
					"does not see the cabinet. Run `cabinet doctor` on the cabinet.")
			}
		} else {
			res.Limitations = append(res.Limitations, "The Cabinet daemon did not answer: play tracking and Home "+
				"Assistant updates may be off. Check that the cabinet service runs.")
		}
	}
	d.limitsStatus(ctx, &res)
	if d.saves != nil {
		res.SaveSync = briefOf(d.saves.Status(), d.loc)
	}
	wg.Wait()
	res.RetroArch = raState{State: "off"}
	switch {
	case raErr == nil:
		res.RetroArch.State = string(st.State)
		if st.State != retroarch.StateContentless {
			res.RetroArch.System = ptr(untrusted.Clean(st.System, maxIdent))
			res.RetroArch.Game = ptr(untrusted.Clean(st.Game, maxName))
			res.RetroArch.CRC32 = ptr(fmt.Sprintf("%08x", st.CRC32))
		}
	case res.RunningGame != nil:
		res.Limitations = append(res.Limitations, "RetroArch does not answer while a game runs, so pause, save states, "+
			"screenshots and on-screen messages over the game do not work: either the game runs in a standalone "+
			"emulator, or add global.retroarch.network_cmd_enable=true to /userdata/system/batocera.conf and relaunch it.")
	}
	if d.mode.ReadOnly {
		res.Limitations = append(res.Limitations, "This server is read-only (cabinet.mcp.read_only): it cannot change anything.")
	} else if d.mode.DryRun {
		res.Limitations = append(res.Limitations, "Dry run (cabinet.mcp.dry_run): actions report what they would send and send nothing.")
	}
	return res, nil
}

// limitsStatus adds the play-time rules; a failure is a limitation, never
// the status's.
func (d statusDeps) limitsStatus(ctx context.Context, res *statusResult) {
	if d.limits == nil {
		return
	}
	rep, err := d.limits.Report(ctx)
	if err != nil {
		res.Limitations = append(res.Limitations, "The household's play-time rules could not be read ("+
			untrusted.Clean(err.Error(), maxShort)+"); the cabinet still applies them. Check that the cabinet service runs.")
		return
	}
	res.Limits = &limitsState{Enabled: rep.Enabled, State: string(rep.State), LeftMinutes: rep.LeftMinutes}
	if rep.Enabled {
		res.Limits.LaunchRefused = rep.LaunchRefused
	}
}

// esStatus fills in what ES reports; a failure becomes a limitation.
func esStatus(ctx context.Context, e ES, res *statusResult) {
	caps, err := e.Caps(ctx)
	if err != nil {
		res.Limitations = append(res.Limitations, esFailure("reach EmulationStation", err).Error())
		return
	}
	res.ES = esState{Reachable: true, Version: ptr(untrusted.Clean(caps.Version, maxShort))}
	if g, err := e.RunningGame(ctx); err == nil && g != nil {
		res.RunningGame = runningOf(*g)
	}
	if idle, err := e.IsIdle(ctx); err == nil {
		res.Busy = ptr(!idle)
	}
}

func runningOf(g es.Game) *runningGame {
	return &runningGame{System: systemName(g.System), GameID: untrusted.Clean(g.ID, maxIdent),
		Name: gameName(g), Path: untrusted.Clean(g.Path, maxPath)}
}

func ptr[T any](v T) *T { return &v }

func (r statusResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", r.Cabinet)
	if r.ES.Reachable {
		fmt.Fprintf(&b, "EmulationStation %s answers", deref(r.ES.Version))
	} else {
		b.WriteString("EmulationStation does not answer")
	}
	if r.RunningGame != nil {
		g := r.RunningGame
		fmt.Fprintf(&b, "; running %s (%s, game_id %s)", g.Name, g.System, g.GameID)
	} else if r.ES.Reachable {
		b.WriteString("; no game running")
	}
	if r.Busy != nil && *r.Busy {
		b.WriteString("; busy")
	}
	fmt.Fprintf(&b, ". RetroArch: %s", r.RetroArch.State)
	if r.RetroArch.Game != nil {
		fmt.Fprintf(&b, " %s (%s)", *r.RetroArch.Game, deref(r.RetroArch.System))
	}
	b.WriteString(".")
	if r.Daemon != nil {
		fmt.Fprintf(&b, " MQTT connected: %t, outbox %d.", r.Daemon.MQTTConnected, r.Daemon.OutboxDepth)
	}
	if l := r.Limits; l != nil {
		switch {
		case !l.Enabled:
			b.WriteString(" Play-time rules: off.")
		case l.LaunchRefused != nil:
			b.WriteString(" Play-time rules: no game may start now: " + *l.LaunchRefused)
		case l.LeftMinutes != nil:
			fmt.Fprintf(&b, " Play-time rules: %d min left today.", *l.LeftMinutes)
		default:
			b.WriteString(" Play-time rules: no daily limit today.")
		}
	}
	if s := r.SaveSync; s != nil {
		fmt.Fprintf(&b, " Save sync: %s", s.State)
		if s.Conflicts > 0 {
			fmt.Fprintf(&b, ", %d conflict(s) waiting (library_saves)", s.Conflicts)
		}
		b.WriteString(".")
	}
	if r.Mode.ReadOnly {
		b.WriteString(" Read-only.")
	}
	if r.Mode.DryRun {
		b.WriteString(" Dry run.")
	}
	for _, l := range r.Limitations {
		b.WriteString("\nLimitation: " + l)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "?"
	}
	return *s
}
