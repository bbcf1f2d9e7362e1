package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// site is what a cabinet's configuration says, as cmd/cabinet maps it
// into Env.
type site struct {
	root, esURL, raAddr    string
	networkCommands        bool // global.retroarch.network_cmd_enable
	broker, user, password string
}

// simSite is the simulator's configuration: its batocera.conf enables
// RetroArch's network commands.
func simSite(cab *simulator.Cabinet) site {
	return site{root: cab.Root, esURL: cab.ESURL(), raAddr: cab.RetroArchAddr(), networkCommands: true}
}

// envFor builds the checks' environment the way `cabinet doctor` does.
func envFor(t *testing.T, s site) Env {
	t.Helper()
	esc, err := es.New(es.Config{URL: s.esURL, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	rooted := func(p string) string { return filepath.Join(s.root, p) }
	hooks := packaging.DefaultLayout()
	hooks.ESScripts, hooks.UserScripts, hooks.RunDir = rooted(hooks.ESScripts), rooted(hooks.UserScripts), rooted("/var/run/cabinet")
	hooks.Entries = rooted(hooks.Entries)
	env := Env{
		Config: Reading{File: rooted("/userdata/system/batocera.conf")},
		Layout: paths.Layout{State: rooted("/userdata/system/cabinet"), Run: rooted("/var/run/cabinet")},
		ESURL:  s.esURL, ES: esc,
		RetroArch: retroarch.New(s.raAddr, retroarch.WithTimeout(300*time.Millisecond)), RetroArchAddr: s.raAddr,
		NetworkCommands: s.networkCommands,
		Hooks:           hooks,
	}
	if s.broker != "" {
		opts := mqttlink.Options{Broker: s.broker, Username: s.user, Password: s.password, ClientID: "doctor-test"}
		env.MQTTBroker, env.MQTTUser = s.broker, s.user
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
	broker, err := mqttbroker.Start(mqttbroker.Options{Users: map[string]string{"ha": "s3cret-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	s := simSite(cab)
	s.broker, s.user, s.password = broker.URL(), "ha", "s3cret-pw"

	rep := Run(context.Background(), Checks(envFor(t, s)), 3*time.Second)
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
	rep = Run(context.Background(), Checks(envFor(t, simSite(cab))), 3*time.Second)
	if r := statuses(rep)[CheckRetroArch]; r.Status != OK || !strings.Contains(r.Detail, "RetroArch playing") {
		t.Errorf("retroarch while playing = %+v", r)
	}
	if r := statuses(rep)[CheckGame]; !strings.HasPrefix(r.Detail, "playing ") {
		t.Errorf("game = %+v", r)
	}
}

func TestDoctorAgainstNothing(t *testing.T) {
	nothing := site{root: t.TempDir(), esURL: "http://127.0.0.1:9", raAddr: "127.0.0.1:9", broker: "tcp://127.0.0.1:9", password: "hunter2-secret"}
	rep := Run(context.Background(), Checks(envFor(t, nothing)), 3*time.Second)
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
	broker, err := mqttbroker.Start(mqttbroker.Options{Users: map[string]string{"ha": "right"}})
	if err != nil {
		t.Fatal(err)
	}
	defer broker.Close()
	wrong := simSite(cab)
	wrong.broker, wrong.user, wrong.password = broker.URL(), "ha", "wrong"
	env := envFor(t, wrong)
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
	cfg := paths.Layout{State: filepath.Join(root, "userdata/system/cabinet"), Run: filepath.Join(root, "var/run/cabinet")}
	os.MkdirAll(cfg.State, 0o755)
	if r := checkState(cfg); r.Status != OK || strings.Contains(strings.Join(r.Facts, " "), "waiting") {
		t.Fatalf("empty state dir: %+v, want OK with nothing waiting", r)
	}
	ev := tracker.Event{Kind: tracker.KindWake, At: time.Now(), Source: tracker.SourceES}
	if err := (journal.Spool{Dir: cfg.Spool()}).Write(journal.NewKeyed(ev)); err != nil {
		t.Fatal(err)
	}
	lg, err := journal.OpenIntake(cfg.Intake())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"k1", "k2"} {
		rec, _ := journal.IntakeRecord(journal.Keyed{Key: key, Event: ev})
		lg.Append(rec)
	}
	lg.Close()
	os.MkdirAll(cfg.Inbox(), 0o755)
	for _, name := range []string{"1.00-1", "1.00-2", "1.00-3"} {
		os.WriteFile(filepath.Join(cfg.Inbox(), name), journal.EncodeInbox(journal.InboxRecord{Uptime: time.Second, Argv: []string{"wake"}}), 0o644)
	}
	facts := strings.Join(checkState(cfg).Facts, "\n")
	for _, want := range []string{"1 event(s) waiting in the spool", "2 event(s) waiting in the intake log", "3 record(s) waiting in the inbox"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts:\n%s\nwant %q", facts, want)
		}
	}
}
