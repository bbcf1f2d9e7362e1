package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// envFor builds the checks' environment from a config file, as `cabinet
// doctor` does.
func envFor(t *testing.T, confPath string, extra ...string) Env {
	t.Helper()
	if len(extra) > 0 {
		b, _ := os.ReadFile(confPath)
		os.WriteFile(confPath, append(b, []byte(strings.Join(extra, "\n")+"\n")...), 0o644)
	}
	l := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + confPath}})
	cfg := &l.Config
	esc, err := es.New(es.Config{URL: cfg.ESURL, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	hooks := packaging.DefaultLayout()
	hooks.ESScripts, hooks.UserScripts, hooks.RunDir = cfg.Path(hooks.ESScripts), cfg.Path(hooks.UserScripts), cfg.RunDir()
	env := Env{Loaded: l, ES: esc, RetroArch: retroarch.New(cfg.RetroArchAddr, retroarch.WithTimeout(300*time.Millisecond)), Hooks: hooks}
	if cfg.MQTTEnabled() {
		opts := mqttlink.Options{Broker: cfg.MQTT.Broker, Username: cfg.MQTT.Username, Password: cfg.MQTT.Password.Reveal(), ClientID: "doctor-test"}
		env.MQTTConnect = func(ctx context.Context) error {
			c, err := mqttlink.Dial(ctx, opts)
			if err == nil {
				c.Close(ctx)
			}
			return err
		}
	}
	return env
}

func statuses(rep Report) map[string]Result {
	m := map[string]Result{}
	for _, r := range rep.Results {
		m[r.Name] = r
	}
	return m
}

func TestDoctorAgainstSimulator(t *testing.T) {
	cab, err := simulator.Start(simulator.Options{LaunchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cab.Close()
	conf, err := cab.WriteConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	broker, err := mqttbroker.Start(mqttbroker.Options{Users: map[string]string{"ha": "s3cret-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()

	rep := Run(context.Background(), Checks(envFor(t, conf, "cabinet.mqtt.broker="+broker.URL(), "cabinet.mqtt.username=ha", "cabinet.mqtt.password=s3cret-pw")), 3*time.Second)
	got := statuses(rep)
	for name, want := range map[string]Status{CheckConfig: OK, CheckES: OK, CheckLibrary: OK, CheckGame: OK, CheckRetroArch: OK, CheckMQTT: OK, CheckHooks: Warn} {
		if got[name].Status != want {
			t.Errorf("%s = %s (%s), want %s", name, got[name].Status, got[name].Detail, want)
		}
	}
	if !rep.OK {
		t.Errorf("report not OK: %+v", rep)
	}

	// While a libretro game runs RetroArch is asked live.
	esc, _ := es.New(es.Config{URL: cab.ESURL(), PollInterval: 10 * time.Millisecond})
	games, _ := esc.Games(context.Background(), "snes")
	if _, err := esc.LaunchGame(context.Background(), "snes", games[0].ID); err != nil {
		t.Fatal(err)
	}
	rep = Run(context.Background(), Checks(envFor(t, conf)), 3*time.Second)
	if r := statuses(rep)[CheckRetroArch]; r.Status != OK || !strings.Contains(r.Detail, "RetroArch playing") {
		t.Errorf("retroarch while playing = %+v", r)
	}
	if r := statuses(rep)[CheckGame]; !strings.HasPrefix(r.Detail, "playing ") {
		t.Errorf("game = %+v", r)
	}
}

func TestDoctorAgainstNothing(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.conf")
	os.WriteFile(conf, []byte("cabinet.paths.root="+dir+"\ncabinet.es.url=http://127.0.0.1:9\ncabinet.retroarch.addr=127.0.0.1:9\ncabinet.mqtt.broker=tcp://127.0.0.1:9\ncabinet.mqtt.password=hunter2-secret\n"), 0o644)
	rep := Run(context.Background(), Checks(envFor(t, conf)), 3*time.Second)
	got := statuses(rep)
	if rep.OK {
		t.Fatal("doctor passed against nothing")
	}
	for name, want := range map[string]Status{CheckES: Fail, CheckLibrary: Skip, CheckGame: Skip, CheckRetroArch: Fail, CheckMQTT: Fail, CheckHooks: Warn} {
		if got[name].Status != want {
			t.Errorf("%s = %s (%s), want %s", name, got[name].Status, got[name].Detail, want)
		}
		if want == Fail && got[name].Hint == "" {
			t.Errorf("%s fails without saying what to do", name)
		}
	}
	var sb strings.Builder
	rep.Write(&sb, true)
	rep.WriteJSON(&sb)
	if strings.Contains(sb.String(), "hunter2-secret") {
		t.Error("doctor output shows the MQTT password")
	}
}

func TestDoctorWrongCredentialsAndStaleHooks(t *testing.T) {
	cab, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cab.Close()
	conf, _ := cab.WriteConfig(t.TempDir())
	broker, err := mqttbroker.Start(mqttbroker.Options{Users: map[string]string{"ha": "right"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	env := envFor(t, conf, "cabinet.mqtt.broker="+broker.URL(), "cabinet.mqtt.username=ha", "cabinet.mqtt.password=wrong")
	// One script installed but edited: the install is stale.
	s := env.Hooks.ESScriptFiles()[0]
	os.MkdirAll(filepath.Dir(s.Path), 0o755)
	os.WriteFile(s.Path, []byte("#!/bin/sh\nexit 0\n"), 0o755)
	got := statuses(Run(context.Background(), Checks(env), 3*time.Second))
	if r := got[CheckMQTT]; r.Status != Fail || !strings.Contains(r.Detail, `credentials for user "ha"`) || strings.Contains(r.Detail, "wrong") {
		t.Errorf("mqtt = %+v", r)
	}
	if r := got[CheckHooks]; r.Status != Fail || !strings.Contains(r.Detail, "different") {
		t.Errorf("hooks = %+v", r)
	}
}

// Events not yet in the store are shown with the state dir.
func TestDoctorShowsWaitingEvents(t *testing.T) {
	root := t.TempDir()
	l := config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=/nonexistent", "CABINET_PATHS_ROOT=" + root}})
	cfg := &l.Config
	os.MkdirAll(cfg.StatePath(), 0o755)
	if r := checkState(cfg); r.Status != OK || strings.Contains(strings.Join(r.Facts, " "), "waiting") {
		t.Fatalf("empty state dir: %+v, want OK with nothing waiting", r)
	}
	ev := tracker.Event{Kind: tracker.KindWake, At: time.Now(), Source: tracker.SourceES}
	if err := (journal.Spool{Dir: journal.SpoolDir(cfg)}).Write(ev); err != nil {
		t.Fatal(err)
	}
	lg, err := intake.Open(journal.IntakePath(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k1", "k2"} {
		rec, _ := journal.IntakeRecord(key, ev)
		lg.Append(rec)
	}
	lg.Close()
	facts := strings.Join(checkState(cfg).Facts, "\n")
	for _, want := range []string{"1 event(s) waiting in the spool", "2 event(s) waiting in the intake log"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts:\n%s\nwant %q", facts, want)
		}
	}
}
