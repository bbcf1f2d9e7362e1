package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/packaging"
)

// ES is what the checks read from EmulationStation.
type ES interface {
	Caps(ctx context.Context) (es.Caps, error)
	Systems(ctx context.Context) ([]es.System, error)
	RunningGame(ctx context.Context) (*es.Game, error)
}

// RetroArch is what the checks ask RetroArch.
type RetroArch interface {
	Status(ctx context.Context) (retroarch.Status, error)
}

// Env is everything the standard checks look at; cmd/cabinet fills it
// from the configuration.
type Env struct {
	Config    Reading
	Layout    paths.Layout
	ESURL     string // cabinet.es.url, named in hints
	ES        ES
	RetroArch RetroArch
	// RetroArchAddr is cabinet.retroarch.addr; NetworkCommands and
	// NetworkCommandPort are global.retroarch.network_cmd_enable and
	// global.retroarch.network_cmd_port as batocera.conf has them (the
	// port is 55355 when it does not say).
	RetroArchAddr      string
	NetworkCommands    bool
	NetworkCommandPort int
	// RetroArchPortClosed reports whether the firewall keeps that port to
	// this machine (packaging.RetroArchPortRules' Present); an error
	// wrapping packaging.ErrNoFirewallTool means there is no firewall to
	// ask. nil: not checked (a fake root, the simulator).
	RetroArchPortClosed func(ctx context.Context) (bool, error)
	// MQTTBroker is cabinet.mqtt.broker ("": MQTT off) and MQTTUser its
	// user; MQTTConnect connects to the broker and disconnects.
	MQTTBroker, MQTTUser string
	MQTTConnect          func(ctx context.Context) error
	// Hooks is the script layout as installed on this cabinet (rooted).
	Hooks packaging.Layout
	// RomM and ROMarr are the household's library servers (optional).
	RomM   RomMEnv
	ROMarr ROMarrEnv
	// RomsRoot is /userdata/roms on this machine (rooted), where the
	// library installs write; "" skips the installs check.
	RomsRoot string
	// MCP is MCP over HTTP from outside the house: TLS and Cloudflare
	// Access (mcpremote.go).
	MCP MCPEnv
	// Extra checks appended after the standard ones (the daemon's).
	Extra []Check
	// PlayTime is the play-time rules, checked last (after the daemon,
	// whose status has today's budget).
	PlayTime PlayTimeEnv
	// SaveSync is the save sync with RomM, checked after the play time.
	SaveSync SaveSyncEnv
}

// Reading is what the configuration check reports: the file read, the
// invalid values (their defaults are in use) and the warnings.
type Reading struct {
	File     string
	Err      error
	Warnings []string
}

// Standard check names.
const (
	CheckConfig    = "config"
	CheckState     = "state"
	CheckES        = "es"
	CheckLibrary   = "library"
	CheckGame      = "game"
	CheckRetroArch = "retroarch"
	CheckMQTT      = "mqtt"
	CheckHooks     = "hooks"
	CheckInstalls  = "installs"
)

// Checks returns the standard checks in layer order, then Extra, then the
// play time.
func Checks(env Env) []Check {
	checks := []Check{
		{CheckConfig, func(ctx context.Context, _ []Result) Result { return checkConfig(env.Config) }},
		{CheckState, func(ctx context.Context, _ []Result) Result { return checkState(env.Layout) }},
		{CheckES, func(ctx context.Context, _ []Result) Result {
			caps, err := env.ES.Caps(ctx)
			if err != nil {
				return esFailure(env.ESURL, err)
			}
			return Result{Status: OK, Detail: fmt.Sprintf("EmulationStation answers at %s (Batocera %s)", env.ESURL, untrusted.Clean(caps.Version, 40))}
		}},
		{CheckLibrary, func(ctx context.Context, earlier []Result) Result {
			if Failed(earlier, CheckES) {
				return Result{Status: Skip, Detail: "EmulationStation is not reachable"}
			}
			systems, err := env.ES.Systems(ctx)
			if err != nil {
				return esFailure(env.ESURL, err)
			}
			real := es.GameSystems(systems)
			games := 0
			for _, s := range real {
				games += s.TotalGames
			}
			if games == 0 {
				return Result{Status: Warn, Detail: "EmulationStation lists no games", Hint: "put ROMs in /userdata/roms/<system>/ and update the game lists (Menu → Game settings → Update gamelists)"}
			}
			return Result{Status: OK, Detail: fmt.Sprintf("%d games in %d systems", games, len(real))}
		}},
		{CheckGame, func(ctx context.Context, earlier []Result) Result {
			if Failed(earlier, CheckES) {
				return Result{Status: Skip, Detail: "EmulationStation is not reachable"}
			}
			g, err := env.ES.RunningGame(ctx)
			if err != nil {
				return esFailure(env.ESURL, err)
			}
			if g == nil {
				return Result{Status: OK, Detail: "no game running"}
			}
			return Result{Status: OK, Detail: fmt.Sprintf("playing %s (%s)", untrusted.Clean(g.Name, 80), untrusted.Clean(g.System, 40))}
		}},
		{CheckRetroArch, func(ctx context.Context, earlier []Result) Result {
			return checkRetroArch(ctx, env, earlier)
		}},
		{CheckMQTT, func(ctx context.Context, _ []Result) Result { return checkMQTT(ctx, env) }},
	}
	checks = append(checks, mcpChecks(env.MCP)...)
	checks = append(checks, Check{CheckHooks, func(ctx context.Context, _ []Result) Result { return checkHooks(env.Hooks) }})
	checks = append(checks, rommChecks(env)...)
	checks = append(checks, Check{CheckROMarr, func(ctx context.Context, _ []Result) Result { return checkROMarr(ctx, env.ROMarr) }})
	checks = append(checks, Check{CheckInstalls, func(context.Context, []Result) Result { return checkInstalls(env.RomsRoot) }})
	checks = append(checks, env.Extra...)
	return append(checks, Check{CheckPlayTime, func(ctx context.Context, _ []Result) Result { return checkPlayTime(ctx, env.PlayTime) }},
		Check{CheckSaveSync, func(ctx context.Context, _ []Result) Result { return checkSaveSync(ctx, env.SaveSync) }})
}

func checkConfig(l Reading) Result {
	if l.Err != nil {
		var lines []string
		for _, e := range strings.Split(l.Err.Error(), "\n") {
			lines = append(lines, e)
		}
		return Result{Status: Fail, Detail: fmt.Sprintf("%d invalid value(s) in %s: %s", len(lines), l.File, strings.Join(lines, "; ")),
			Hint: "fix the keys named above (defaults are used meanwhile); `cabinet config` shows every value and its source", Facts: l.Warnings}
	}
	if len(l.Warnings) > 0 {
		return Result{Status: Warn, Detail: strings.Join(l.Warnings, "; "), Hint: "`cabinet config` shows every value and its source"}
	}
	return Result{Status: OK, Detail: "read " + l.File}
}

func checkState(l paths.Layout) Result {
	dir := l.State
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return Result{Status: Warn, Detail: dir + " does not exist yet", Hint: "it is created by the first hook or by `cabinet serve`; check that its parent is writable"}
	case err != nil:
		return Result{Status: Fail, Detail: err.Error(), Hint: "check cabinet.state_dir"}
	case !fi.IsDir():
		return Result{Status: Fail, Detail: dir + " is not a directory", Hint: "point cabinet.state_dir at a directory"}
	}
	if unix.Access(dir, unix.W_OK) != nil {
		return Result{Status: Fail, Detail: dir + " is not writable", Hint: "Cabinet runs as root on Batocera; check the mount of /userdata (read-only?)"}
	}
	var st unix.Statfs_t
	facts := []string{}
	if unix.Statfs(dir, &st) == nil {
		if fs := modelessFS(int64(st.Type)); fs != "" { // Type is int32 on 32-bit ARM
			// Batocera's common case on a shared disk; not a fault, but the
			// household should know what 0600 is worth there.
			facts = append(facts, fmt.Sprintf("on %s: file modes mean nothing there, so the MCP token and saved secrets can be read by any program on the cabinet", fs))
		}
		free := st.Bavail * uint64(st.Bsize)
		facts = append(facts, fmt.Sprintf("%.1f GiB free", float64(free)/(1<<30)))
		if free < 50<<20 {
			return Result{Status: Warn, Detail: fmt.Sprintf("%s has only %d MiB free", dir, free>>20), Hint: "free some space on /userdata: the store and log need a few MiB", Facts: facts}
		}
	}
	facts = append(facts, waiting(l)...)
	detail := dir
	if len(facts) > 0 && strings.HasPrefix(facts[0], "on ") {
		detail += " (" + facts[0] + ")"
		facts = facts[1:]
	}
	return Result{Status: OK, Detail: detail, Facts: facts}
}

// modelessFS names a filesystem without Unix permissions (statfs f_type),
// or "" for one with them.
func modelessFS(magic int64) string {
	switch uint32(magic) {
	case 0x4d44:
		return "vfat"
	case 0x2011bab0:
		return "exFAT"
	case 0x65735546:
		return "a FUSE filesystem (exFAT or NTFS)"
	case 0x5346544e, 0x7366746e:
		return "NTFS"
	}
	return ""
}

// waiting names the events not yet in the store: spooled by hooks that
// found it busy, handed to the daemon in its inbox, or left in its intake
// log. A few for a moment is
// normal; many that stay mean no process has owned the store since.
func waiting(l paths.Layout) []string {
	var out []string
	if ents, err := os.ReadDir(l.Spool()); err == nil {
		n := 0
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".event") {
				n++
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("%d event(s) waiting in the spool (the next hook or `cabinet serve` applies them)", n))
		}
	}
	if l.Run != "" {
		if n := (journal.InboxDir{Path: l.Inbox()}).Count(); n > 0 {
			out = append(out, fmt.Sprintf("%d record(s) waiting in the inbox (`cabinet serve` takes them as they come; else the next hook)", n))
		}
	}
	if b, err := os.ReadFile(l.Intake()); err == nil {
		if _, recs, _ := journal.ParseIntake(b); len(recs) > 0 {
			out = append(out, fmt.Sprintf("%d event(s) waiting in the intake log (the next hook or `cabinet serve` applies them)", len(recs)))
		}
	}
	return out
}

func esFailure(esURL string, err error) Result {
	r := Result{Status: Fail, Detail: err.Error()}
	switch {
	case errors.Is(err, es.ErrUnavailable):
		r.Hint = fmt.Sprintf("wait for EmulationStation to finish loading, or restart it; if it runs, check cabinet.es.url (%s)", esURL)
	case errors.Is(err, es.ErrForbidden):
		r.Hint = "ES only answers 127.0.0.1: keep cabinet.es.url=http://127.0.0.1:1234 (or turn on ES's public web access)"
	default:
		r.Hint = "check that cabinet.es.url points at EmulationStation's web API (port 1234)"
	}
	return r
}

func checkRetroArch(ctx context.Context, env Env, earlier []Result) Result {
	r := checkNetworkCommands(ctx, env, earlier)
	if env.NetworkCommands && r.Status == OK {
		r = portExposure(ctx, env, r)
	}
	return r
}

func checkNetworkCommands(ctx context.Context, env Env, earlier []Result) Result {
	enabled, ra := env.NetworkCommands, env.RetroArch
	playing := false
	if g, ok := Find(earlier, CheckGame); ok && g.Status == OK && strings.HasPrefix(g.Detail, "playing ") {
		playing = true
	}
	if playing {
		st, err := ra.Status(ctx)
		if err == nil {
			return Result{Status: OK, Detail: fmt.Sprintf("RetroArch %s %s (network commands on %s)", st.State, untrusted.Clean(st.Game, 80), env.RetroArchAddr)}
		}
		if !enabled {
			return Result{Status: Fail, Detail: "RetroArch does not answer network commands", Hint: "add global.retroarch.network_cmd_enable=true to /userdata/system/batocera.conf and relaunch the game"}
		}
		return Result{Status: Warn, Detail: "the running game does not answer on " + env.RetroArchAddr,
			Hint: "it may use a standalone emulator (no RetroArch), or it started before network commands were enabled: relaunch it"}
	}
	if !enabled {
		return Result{Status: Fail, Detail: "RetroArch network commands are off", Hint: "add global.retroarch.network_cmd_enable=true to /userdata/system/batocera.conf; the game tools (pause, save state, screenshot…) need it"}
	}
	return Result{Status: OK, Detail: "network commands enabled in batocera.conf (checked live while a game runs)"}
}

// closePortHint is what to do about an open RetroArch command port.
const closePortHint = "anyone on the LAN can send it commands: `cabinet install --close-retroarch-port` keeps it to this machine"

// portExposure adds to a working RetroArch what the firewall does with its
// command port: RetroArch 1.14 binds it, unauthenticated, on every
// interface, so it warns unless Cabinet's rule keeps the port to this
// machine.
func portExposure(ctx context.Context, env Env, r Result) Result {
	if env.RetroArchPortClosed == nil {
		return r
	}
	port := "its command port"
	if env.NetworkCommandPort != 0 {
		port = fmt.Sprintf("UDP %d", env.NetworkCommandPort)
	}
	closed, err := env.RetroArchPortClosed(ctx)
	switch {
	case err == nil && closed:
		r.Facts = append(r.Facts, fmt.Sprintf("%s is kept to this machine (firewall rule %s)", port, packaging.RetroArchPortTag))
		return r
	case errors.Is(err, packaging.ErrNoFirewallTool):
		r.Detail += fmt.Sprintf("; %s is open on every interface and this cabinet has no firewall tool", port)
		r.Hint = "anyone on the LAN can send RetroArch commands: keep the cabinet on a network you trust"
	case err != nil:
		r.Detail += fmt.Sprintf("; %s may be open on every interface (the firewall check failed)", port)
		r.Hint = closePortHint
		r.Facts = append(r.Facts, err.Error())
	default:
		r.Detail += fmt.Sprintf("; %s is open on every interface", port)
		r.Hint = closePortHint
	}
	r.Status = Warn
	return r
}

func checkMQTT(ctx context.Context, env Env) Result {
	connect := env.MQTTConnect
	if env.MQTTBroker == "" || connect == nil {
		return Result{Status: Warn, Detail: "MQTT is off: Home Assistant sees nothing", Hint: "set cabinet.mqtt.broker (tcp://host:1883) and, if needed, cabinet.mqtt.username and cabinet.mqtt.password_file"}
	}
	if err := connect(ctx); err != nil {
		return Result{Status: Fail, Detail: err.Error(), Hint: "check that the broker runs and is reachable from the cabinet, and cabinet.mqtt.* (broker, username, password)"}
	}
	who := "anonymously"
	if env.MQTTUser != "" {
		who = "as " + env.MQTTUser
	}
	return Result{Status: OK, Detail: fmt.Sprintf("connected to %s %s", env.MQTTBroker, who)}
}

func checkHooks(l packaging.Layout) Result {
	var missing, changed []string
	files := l.Files()
	for _, s := range files {
		b, err := os.ReadFile(s.Path)
		switch {
		case err != nil:
			missing = append(missing, s.Path)
		case string(b) != s.Content:
			changed = append(changed, s.Path)
		}
	}
	switch {
	case len(missing) == len(files):
		return Result{Status: Warn, Detail: "the ES hook scripts are not installed: play tracking is off", Hint: "run cabinet install (README: \"From the demo to your own cabinet\")", Facts: missing}
	case len(missing)+len(changed) > 0:
		return Result{Status: Fail, Detail: fmt.Sprintf("%d hook script(s) missing and %d different from this version", len(missing), len(changed)),
			Hint: "run cabinet install again: it rewrites them", Facts: append(missing, changed...)}
	}
	return Result{Status: OK, Detail: fmt.Sprintf("%d scripts installed and current", len(files))}
}
