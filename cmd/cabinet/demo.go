//go:build !release

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/logfile"
	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/daemon/artwork"
	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

type demoCommand struct{ env *env }

func (c *demoCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "demo", "", `Cabinet's main job on a machine with no cabinet: starts a simulated cabinet (fake
EmulationStation, RetroArch and RomM, the real hook scripts), an embedded MQTT broker and
the daemon on loopback, prints how to reach them, and plays a short scripted evening
(a few games, a screensaver, a session too short to be logged, sleep and wake, a game's
save going to RomM, a newer one from the household's handheld in place before the next
launch, a conflict kept for a person to settle, and an app signing in with the PIN the
TV shows) while the Home Assistant states it
publishes are shown as they change; then an evening of play-time rules on a second
cabinet, the playroom's, whose clock runs fast (the time left over a game, warnings,
extra time from a parent's phone, the game saved and closed at the limit, a launch
ended at bedtime). Then it keeps running for you to try the MCP
tools, until Ctrl-C (--once: exit after the evening).`, &sets)
	once := fs.Bool("once", false, "exit after the scripted evening")
	scale := fs.Float64("speed", 1, "speed of the evening (2 = twice as fast; at most 5)")
	keep := fs.String("dir", "", "keep the simulator's files in DIR (default: a temporary folder)")
	capture := fs.String("capture", "", "at the end, write everything published to FILE as `mosquitto_sub -V 5 --retain-as-published -F '%r %t %p'` lines (for validate_discovery.py)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *scale <= 0 || *scale > maxDemoSpeed {
		return fmt.Errorf("%w: --speed must be above 0 and at most %d", errUsage, maxDemoSpeed)
	}
	out := c.env.Stdout
	dir := *keep
	if dir == "" {
		d, err := os.MkdirTemp("", "cabinet-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	broker, err := mqttbroker.Start(mqttbroker.Options{})
	if err != nil {
		return err
	}
	defer broker.Close()
	// ES's own stderr (sh refusing a game-selected line with a "(" in the
	// path, exactly as on a cabinet) is noise here: it goes to a file.
	esErr, err := os.Create(filepath.Join(dir, "es_stderr.log"))
	if err != nil {
		return err
	}
	defer esErr.Close()
	cab, err := simulator.Start(simulator.Options{Dir: dir, LaunchDelay: 300 * time.Millisecond, ScriptStderr: esErr, RomM: true, System: true, BatterySaves: true})
	if err != nil {
		return err
	}
	defer cab.Close()
	// No configured RomM token: the demo pairs the cabinet with RomM, as a
	// household would, and the tools use the paired token. MCP over HTTP
	// has a self-signed certificate, and apps can sign in (OAuth).
	issuer, oauthLines, err := demoOAuthConfig()
	if err != nil {
		return err
	}
	conf, err := cab.WriteConfig(dir, append([]string{"cabinet.name=Demo Cabinet", "cabinet.mqtt.broker=" + broker.URL(),
		fmt.Sprintf("cabinet.tracker.min_session_seconds=%d", demoMinSession(*scale)), "cabinet.log.level=debug",
		"cabinet.romm.token_file=", "cabinet.library.allow_install=1", "cabinet.ha.power=1", "cabinet.ha.controls=1", "cabinet.romm.sync_saves=1",
		"global.retroachievements=1"}, oauthLines...)...)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if _, err := cab.InstallHooks(exe, conf); err != nil {
		return err
	}
	denv := *c.env
	denv.Environ = append(append([]string{}, c.env.Environ...), "CABINET_CONFIG="+conf)
	cfg := loadConfig(&denv, sets).Config
	logf, err := logfile.Open(cfg.Layout().Log(), 0, -1)
	if err != nil {
		return err
	}
	defer logf.Close()

	dctx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan *daemon.Daemon, 1)
	done := make(chan error, 1)
	go func() {
		pairing := rommStore(&cfg)
		done <- daemon.Run(dctx, daemon.Options{Load: daemonLoader(&denv, sets), ConfigFile: conf, Version: buildVersion(), LogOut: logf,
			WatchFiles: []string{pairing.TokenPath(), pairing.DevicePath()}, Ready: func(d *daemon.Daemon) { ready <- d }})
	}()
	var dmn *daemon.Daemon
	select {
	case dmn = <-ready:
	case err := <-done:
		return fmt.Errorf("the daemon did not start: %w", err)
	case <-ctx.Done():
		return nil
	}
	id, _ := cfg.CabinetID()
	mcpURL, token := demoMCP(dmn, cfg.Layout().Token())
	fmt.Fprintf(out, "Cabinet demo — a simulated cabinet, an embedded MQTT broker and the daemon, on loopback.\n\n")
	fmt.Fprintf(out, "  MQTT broker     %s   (watch: mosquitto_sub -h %s -p %s -t 'batocera/#' -v)\n", broker.URL(), hostOf(broker.Addr()), portOf(broker.Addr()))
	fmt.Fprintf(out, "  cabinet id      %s   (Home Assistant device \"Demo Cabinet\")\n", id)
	fmt.Fprintf(out, "  EmulationStation (simulated) %s\n", cab.ESURL())
	fmt.Fprintf(out, "  RomM (simulated)             %s   (the cabinet pairs with it below)\n", cab.RomMURL())
	fmt.Fprintf(out, "  system tools    %s\n", demoSystemNote(cab))
	fmt.Fprintf(out, "  config          %s\n", conf)
	fmt.Fprintf(out, "  log             %s\n", cfg.Layout().Log())
	fmt.Fprintf(out, "  MCP over HTTP   %s   (bearer token %s)\n", mcpURL, token)
	if strings.HasPrefix(mcpURL, "http") {
		fmt.Fprintf(out, "  marquee page    %s#token=%s   (a second screen: the selected or running game's marquee)\n",
			strings.TrimSuffix(mcpURL, "/mcp")+events.MarqueePath, token)
	}
	fmt.Fprintf(out, "  sign-in (OAuth) %s/mcp   (self-signed; an app signs in with a PIN on the TV below)\n", issuer)
	run := exe
	if strings.Contains(exe, "go-build") {
		run = "go run ./cmd/cabinet" // started with go run: its binary is temporary
	}
	fmt.Fprintf(out, "  try             export CABINET_CONFIG=%s\n", conf)
	fmt.Fprintf(out, "                  %s call batocera_find_games query=\"street fighter\"\n", run)
	fmt.Fprintf(out, "                  %s call library_search query=alpha   (RomM: Alpha Quest is also on the cabinet)\n", run)
	fmt.Fprintf(out, "                  %s call library_install rom_id=%d   (a game only RomM has, onto the cabinet)\n", run, fakeromm.ROMAncientZeta)
	fmt.Fprintf(out, "                  %s doctor\n\n", run)

	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	var hush atomic.Bool // the playroom's evening is on: its lines carry another clock
	go func() { showStates(watchCtx, broker, id, out, &hush); close(watched) }()
	rommWatched := make(chan struct{})
	var savesShown atomic.Int64
	go func() { showRomM(watchCtx, cab.RomM, out, &savesShown); close(rommWatched) }()
	say := func(s string) { fmt.Fprintf(out, "%s ▶ %s\n", time.Now().Format("15:04:05"), s) }
	// Once ES runs, the cabinet pairs with RomM (the code shows on its
	// screen); the RomM game comes after the first game, so that its
	// session reaches RomM's history while the evening goes on.
	steps := simulator.Evening(1 / *scale)
	pair := simulator.Step{Say: "pairing the cabinet with RomM (cabinet romm pair)",
		Do: func(ctx context.Context, cab *simulator.Cabinet) error {
			return demoPairRomM(ctx, &cfg, cab, out, *scale)
		}}
	saves := saveDemo{exe: exe, environ: denv.Environ, broker: broker, out: out, speed: *scale, shown: &savesShown,
		problem: haentities.Settings{ID: id, BaseTopic: cfg.MQTT.BaseTopic}.StateTopic(haentities.SaveProblemKey)}
	rommGame := cab.RomMGame(1 / *scale)
	if n := len(rommGame); n > 0 {
		rommGame[n-1].Wait = 0 // the save steps wait for the game's save itself
	}
	steps = slices.Concat(steps[:1], []simulator.Step{pair}, steps[1:3], simulator.Browse(1 / *scale), rommGame, saves.steps(cab),
		demoInstall(exe, denv.Environ, out, *scale), []simulator.Step{oauthDemo{issuer: issuer, stateDir: cfg.StatePath(), out: out}.step()},
		demoHousehold(broker, haentities.Settings{ID: id, BaseTopic: cfg.MQTT.BaseTopic}, *scale), steps[3:],
		[]simulator.Step{playTimeDemo{env: c.env, dir: dir, exe: exe, broker: broker, out: out, speed: *scale, hush: &hush}.step()})
	err = cab.Play(ctx, steps, say)
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(c.env.Stderr, "demo: %v\n", err)
	}
	if !*once && ctx.Err() == nil {
		fmt.Fprintf(out, "\nThe evening is over; the cabinet keeps running for you to try. Ctrl-C stops it.\n")
		<-ctx.Done()
	}
	stopWatch()
	<-watched
	<-rommWatched
	if ctx.Err() == nil {
		fmt.Fprintf(out, "\nWhat Home Assistant shows at the end of the evening:\n")
		for _, line := range finalStates(broker, id) {
			fmt.Fprintf(out, "  %s\n", line)
		}
		fmt.Fprintf(out, "\nWhat RomM shows of the cabinet:\n")
		for _, line := range rommSummary(cab.RomM, rommSettled(ctx, dmn), dmn.FullStatus().SaveSync) {
			fmt.Fprintf(out, "  %s\n", line)
		}
	}
	stop()
	err = <-done
	if *capture != "" {
		if werr := os.WriteFile(*capture, broker.Capture(), 0o644); werr != nil && err == nil {
			err = fmt.Errorf("write the capture: %w", werr)
		}
	}
	return err
}

// maxDemoSpeed keeps the evening's logged sessions comfortably above a
// second (the 8 s games last 1.6 s at speed 5), the shortest minimum
// cabinet.tracker.min_session_seconds can say: it counts whole seconds.
const maxDemoSpeed = 5

// demoMinSession is the shortest logged session for an evening played at
// speed: 5 s at speed 1, between the 2 s game that must not be logged and
// the 8 s ones that must, scaled with them.
func demoMinSession(speed float64) int {
	return max(1, int(5/speed))
}

// showStates prints each state change Home Assistant would see, as it
// reaches the broker, except while hush is set.
func showStates(ctx context.Context, b *mqttbroker.Broker, id string, out interface{ Write([]byte) (int, error) }, hush *atomic.Bool) {
	seen := 0
	prefix := "batocera/" + id + "/"
	for {
		ch := b.Changed()
		msgs := b.Messages()
		for _, m := range msgs[seen:] {
			entity := strings.TrimPrefix(m.Topic, prefix)
			if entity == m.Topic || strings.Contains(entity, "/") && entity != haentities.NowPlaying+"/attributes" || hush.Load() {
				continue
			}
			fmt.Fprintf(out, "%s   HA %-22s %s\n", time.Now().Format("15:04:05"), entity, shownPayload(entity, m.Payload))
		}
		seen = len(msgs)
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// finalStates lists the retained state of every entity.
func finalStates(b *mqttbroker.Broker, id string) []string {
	latest := map[string]string{}
	prefix := "batocera/" + id + "/"
	for _, m := range b.Messages() {
		entity := strings.TrimPrefix(m.Topic, prefix)
		if entity != m.Topic && !strings.Contains(entity, "/") && m.Retain {
			latest[entity] = shownPayload(entity, m.Payload)
		}
	}
	var out []string
	for k, v := range latest {
		out = append(out, fmt.Sprintf("%-20s %s", k, v))
	}
	sort.Strings(out)
	return out
}

// shownPayload is a state as the demo prints it: a picture (base64 JPEG)
// by its size and a short digest (each game's art has its own; the
// placeholder is named), the rest as it is.
func shownPayload(entity string, payload []byte) string {
	switch entity {
	case haentities.Artwork, haentities.LastScreenshot, haentities.SelectedMarquee:
	case haentities.SaveProblemKey:
		return eventText(payload)
	default:
		return string(payload)
	}
	raw, err := base64.StdEncoding.DecodeString(string(payload))
	if err != nil {
		return fmt.Sprintf("(not base64: %v)", err)
	}
	if bytes.Equal(raw, artwork.Placeholder()) {
		return "(the placeholder picture)"
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return fmt.Sprintf("(not a JPEG: %v)", err)
	}
	sum := sha256.Sum256(raw)
	return fmt.Sprintf("(a JPEG picture, %d×%d, %d KB, #%x)", cfg.Width, cfg.Height, (len(raw)+1023)/1024, sum[:3])
}

func hostOf(addr string) string { h, _, _ := strings.Cut(addr, ":"); return h }
func portOf(addr string) string { _, p, _ := strings.Cut(addr, ":"); return p }

// demoMCP returns MCP's URL and token: the daemon listens (or has said why
// it cannot) before it calls Ready.
func demoMCP(d *daemon.Daemon, tokenFile string) (string, string) {
	addr := d.HTTPAddr()
	if addr == "" {
		return "(not available: " + d.Status().MCPHTTPError + ")", "-"
	}
	tok, err := httpauth.ReadToken(tokenFile)
	if err != nil {
		tok = "(" + err.Error() + ")"
	}
	return "http://" + addr + "/mcp", tok
}
