package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/hook/paths"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/esevents"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/binarytest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realdropbear"
)

// cab is one fake cabinet: a Batocera tree, the broker Home Assistant
// would use, and what the test needs to watch it.
type cab struct {
	t      *testing.T
	tree   *batocera.Tree
	root   string
	broker *cabinettest.Broker
	obs    *cabinettest.Observer
	lay    paths.Layout
	saves  []string // --save flags of the first install
	before string   // the tree before anything was installed
}

func newCab(t *testing.T, tree *batocera.Tree) *cab {
	root := tree.Root()
	// Every command this test runs in the tree (S99userservices, the
	// wrappers, the installed binary) sees the tree as cabinet.paths.root.
	t.Setenv("CABINET_PATHS_ROOT", root)
	broker := cabinettest.StartBroker(t, cabinettest.Mosquitto, cabinettest.BrokerOptions{Users: map[string]string{}})
	c := &cab{t: t, tree: tree, root: root, broker: broker, obs: cabinettest.Observe(t, broker, true),
		lay: paths.Layout{State: filepath.Join(root, "userdata/system/cabinet"), Run: filepath.Join(root, "var/run/cabinet")}}
	c.saves = []string{
		"cabinet.mqtt.broker=" + broker.URL(),
		"cabinet.mqtt.username=" + cabinettest.TestUser,
		"cabinet.mcp.listen=" + freeAddr(t),
		// Nothing of this machine's: not a real ES on :1234 that another
		// package's test may be running, not a RetroArch.
		"cabinet.es.url=http://" + cabinettest.ClosedAddr(t, "tcp"),
		"cabinet.retroarch.addr=" + cabinettest.ClosedAddr(t, "udp"),
		"cabinet.tracker.min_session_seconds=0",
		"cabinet.name=Arcade",
	}
	c.before = snapshot(t, root)
	return c
}

// TestDeployUpgradeRollbackPurge is the whole life of Cabinet on a cabinet:
// `cabinet deploy` over Dropbear → the real S99userservices starts the
// daemon → the real batocera-settings-get reads back what was saved → an
// ES event through the installed wrappers reaches the broker →
// S99userservices stop waits for offline → an upgrade keeps the history →
// a broken upgrade (migrates the store, then exits) is rolled back, store
// included → `uninstall --purge` leaves batocera.conf as it was (but for
// what batocera-services disable leaves), the tree as before and the
// broker without the cabinet.
func TestDeployUpgradeRollbackPurge(t *testing.T) {
	cabinettest.Long(t, "deploys, restarts and rolls back a daemon over SSH (about a minute)")
	tree := batocera.New(t)
	// What the real batocera-services leaves in batocera.conf after an
	// enable and a disable: the purged file must equal it.
	confBefore := tree.Conf(t)
	tree.Services(t, "enable", "cabinet")
	tree.Services(t, "disable", "cabinet")
	confAfterPurge := tree.Conf(t)
	tree.SetConf(t, confBefore)
	c := newCab(t, tree)
	ssh := realdropbear.Start(t, realdropbear.Options{})
	bin1, bin2 := v1.Path(t), v2.Path(t)

	// Deploy: install over SSH, the password over ssh's stdin.
	args := []string{"--binary", bin1}
	for _, s := range c.saves {
		args = append(args, "--save", s)
	}
	out := c.deploy(ssh, append(args, "--save-secret", "cabinet.mqtt.password"), cabinettest.TestPass+"\n", 0)
	for _, want := range []string{"Installed Cabinet 1.0.0-e2e", "OK   daemon", "OK   hooks", "claude mcp add"} {
		if !strings.Contains(out, want) {
			t.Errorf("deploy output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, cabinettest.TestPass) {
		t.Errorf("deploy output shows the MQTT password:\n%s", out)
	}
	id := c.id()
	status := "batocera/" + id + "/status"
	c.obs.AwaitMsg(0, status, "online")

	// The real batocera-settings-get reads what install saved, and
	// Cabinet's parser agrees on every key.
	if v, _ := tree.SettingsGet(t, "system.services"); !strings.Contains(" "+v+" ", " cabinet ") {
		t.Errorf("system.services = %q, want cabinet in it", v)
	}
	var eff struct {
		Keys []struct {
			Key, Value, Source string
		}
		Warnings, Errors []string
	}
	if res := c.run(bin1, "config", "--json"); res.code != 0 || json.Unmarshal([]byte(res.out), &eff) != nil {
		t.Fatalf("cabinet config --json: exit %d:\n%s", res.code, res.out)
	}
	if len(eff.Warnings)+len(eff.Errors) > 0 {
		t.Errorf("Cabinet's parser objects to the file install wrote: %q %q", eff.Warnings, eff.Errors)
	}
	fromFile := 0
	for _, k := range eff.Keys {
		if !strings.HasPrefix(k.Source, "file") || k.Key == "cabinet.mqtt.password" {
			continue // a default, or the secret read from its file (masked)
		}
		fromFile++
		if got, ok := tree.SettingsGet(t, k.Key); !ok || got != k.Value {
			t.Errorf("%s: batocera-settings-get says %q (%v), Cabinet %q", k.Key, got, ok, k.Value)
		}
	}
	if fromFile < len(c.saves)+1 {
		t.Errorf("Cabinet reads %d keys from the file, want the %d saved", fromFile, len(c.saves)+1)
	}
	if v, _ := tree.SettingsGet(t, "cabinet.mqtt.password_file"); v == "" {
		t.Error("the password's file key was not saved")
	} else if b, err := os.ReadFile(filepath.Join(c.root, v)); err != nil || strings.TrimSpace(string(b)) != cabinettest.TestPass {
		t.Errorf("the password file %s: %q, %v", v, b, err)
	}
	if bytes.Contains(tree.Conf(t), []byte(cabinettest.TestPass)) {
		t.Error("batocera.conf holds the password itself")
	}

	// Boot and shutdown as Batocera does them.
	from := c.obs.Mark()
	t.Log(tree.S99(t, "stop"))
	c.obs.AwaitMsg(from, status, "offline") // stop returned after the daemon said so
	from = c.obs.Mark()
	t.Log(tree.S99(t, "start"))
	c.obs.AwaitMsg(from, status, "online")
	c.waitDaemon("after S99userservices start", func(daemon.Status) bool { return true })

	// An evening's game through the installed wrappers, as ES runs them.
	from = c.obs.Mark()
	c.fire("game-start", esevents.GameStartArgs(c.root+"/userdata/roms/nes/Super Mario Bros.nes", "Super Mario Bros.")...)
	c.obs.AwaitMsg(from, "batocera/"+id+"/now_playing", "Super Mario Bros.")
	c.fire("game-end", esevents.GameStartArgs(c.root+"/userdata/roms/nes/Super Mario Bros.nes", "Super Mario Bros.")...)
	st := c.waitDaemon("the session logged", func(s daemon.Status) bool { return s.Sessions >= 1 })
	sessions := st.Sessions

	// Upgrade over SSH: the history stays, the previous binary is kept.
	out = c.deploy(ssh, []string{"--binary", bin2}, "", 0)
	if !strings.Contains(out, "Upgraded Cabinet from 1.0.0-e2e to 2.0.0-e2e") {
		t.Errorf("upgrade output:\n%s", out)
	}
	st = c.waitDaemon("the new daemon", func(s daemon.Status) bool { return s.Version == "2.0.0-e2e" })
	if st.Sessions != sessions {
		t.Errorf("%d sessions after the upgrade, %d before", st.Sessions, sessions)
	}
	if !sameFile(t, filepath.Join(c.root, "userdata/system/cabinet/bin/cabinet.prev"), bin1) {
		t.Error("cabinet.prev is not the previous binary")
	}
	// A second deploy of the same binary changes nothing.
	if out = c.deploy(ssh, []string{"--binary", bin2}, "", 0); !strings.Contains(out, "Nothing to change") {
		t.Errorf("deploying the same binary again:\n%s", out)
	}

	// A broken release: it migrates the store, then cannot start.
	broken := brokenRelease(t, bin2, c.lay.Store())
	res := c.run(broken, "install")
	if res.code != 1 || !strings.Contains(res.out, "upgrade rolled back") || !strings.Contains(res.out, "store was restored") {
		t.Errorf("broken upgrade: exit %d, want 1 and a rollback with the store restored:\n%s", res.code, res.out)
	}
	if !strings.Contains(res.out, "not readable by this build") {
		t.Errorf("the rollback does not quote the broken daemon's last words:\n%s", res.out)
	}
	st = c.waitDaemon("the old daemon back", func(s daemon.Status) bool { return s.Version == "2.0.0-e2e" })
	if st.Sessions != sessions {
		t.Errorf("%d sessions after the rollback, %d before", st.Sessions, sessions)
	}
	if v, err := store.ReadSchema(c.lay.Store() + ".pre-upgrade"); err == nil && v != 0 {
		t.Errorf("the pre-upgrade copy outlived the rollback (schema %d)", v)
	}
	if !sameFile(t, filepath.Join(c.root, "userdata/system/cabinet/bin/cabinet"), bin2) {
		t.Error("the binary after the rollback is not the previous one")
	}

	// Gone, as if never installed.
	res = c.run(filepath.Join(c.root, "userdata/system/cabinet/bin/cabinet"), "uninstall", "--purge")
	if res.code != 0 {
		t.Fatalf("uninstall --purge: exit %d:\n%s", res.code, res.out)
	}
	if got := tree.Conf(t); !bytes.Equal(got, confAfterPurge) {
		t.Errorf("batocera.conf after uninstall --purge:\n%s\nwant what batocera-services disable leaves:\n%s", got, confAfterPurge)
	}
	if after := snapshot(t, c.root); after != c.before {
		t.Errorf("the tree after uninstall --purge differs from before the install:\nbefore:\n%s\nafter:\n%s", c.before, after)
	}
	cabinettest.Await(t, "the broker forgets the cabinet", nil, func() (bool, string) {
		left := c.retained(id)
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestInstallOnExFAT installs, runs and removes Cabinet on an exFAT
// /userdata mounted through FUSE, Batocera's common case on a shared disk:
// no symlinks, no modes that stick, every file executable.
func TestInstallOnExFAT(t *testing.T) {
	cabinettest.Long(t, "mounts an exFAT image and runs the daemon on it")
	tree := batocera.NewOn(t, batocera.ExFAT(t))
	c := newCab(t, tree)
	bin := v1.Path(t)
	args := []string{"install"}
	for _, s := range c.saves {
		args = append(args, "--save", s)
	}
	args = append(args, "--save-secret", "cabinet.mqtt.password")
	res := c.runInput(bin, cabinettest.TestPass+"\n", args...)
	if res.code != 0 {
		t.Fatalf("install on exFAT: exit %d:\n%s", res.code, res.out)
	}
	if !strings.Contains(res.out, "file modes mean nothing there") {
		t.Errorf("doctor's report after an install on exFAT does not say what 0600 is worth there:\n%s", res.out)
	}
	id := c.id()
	c.obs.AwaitMsg(0, "batocera/"+id+"/status", "online")
	from := c.obs.Mark()
	c.fire("game-start", esevents.GameStartArgs(c.root+"/userdata/roms/snes/Zelda.sfc", "Zelda")...)
	c.obs.AwaitMsg(from, "batocera/"+id+"/now_playing", "Zelda")
	c.fire("game-end", esevents.GameStartArgs(c.root+"/userdata/roms/snes/Zelda.sfc", "Zelda")...)
	c.waitDaemon("the session logged on exFAT", func(s daemon.Status) bool { return s.Sessions >= 1 })
	// Boot through S99userservices: on exFAT the service file looks
	// executable, so it is run directly.
	from = c.obs.Mark()
	tree.S99(t, "stop")
	c.obs.AwaitMsg(from, "batocera/"+id+"/status", "offline")
	tree.S99(t, "start")
	c.waitDaemon("after S99userservices start on exFAT", func(s daemon.Status) bool { return s.Sessions >= 1 })

	res = c.run(filepath.Join(c.root, "userdata/system/cabinet/bin/cabinet"), "uninstall", "--purge")
	if res.code != 0 {
		t.Fatalf("uninstall --purge on exFAT: exit %d:\n%s", res.code, res.out)
	}
	if after := snapshot(t, c.root); after != c.before {
		t.Errorf("the tree after uninstall --purge differs:\nbefore:\n%s\nafter:\n%s", c.before, after)
	}
}

// deploy runs `cabinet deploy` from this machine to the Dropbear cabinet.
func (c *cab) deploy(ssh *realdropbear.Server, args []string, stdin string, wantCode int) string {
	c.t.Helper()
	full := append([]string{"deploy", "--ssh-command", strings.Join(ssh.SSHCommand(), " "),
		"--set", "cabinet.paths.root=" + c.root}, args...)
	full = append(full, ssh.Host())
	res := c.runInput(v1.Path(c.t), stdin, full...)
	if res.code != wantCode {
		c.t.Fatalf("cabinet %s: exit %d, want %d:\n%s\ndropbear:\n%s", strings.Join(full, " "), res.code, wantCode, res.out, ssh.Log())
	}
	return res.out
}

type result struct {
	code int
	out  string
}

func (c *cab) run(bin string, args ...string) result { return c.runInput(bin, "", args...) }

func (c *cab) runInput(bin, stdin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.tree.Env()
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	c.t.Logf("%s %s: exit %d\n%s", filepath.Base(bin), strings.Join(args, " "), code, out.String())
	return result{code, out.String()}
}

// fire runs an ES event through the wrappers installed in the tree, the
// way ES does.
func (c *cab) fire(event string, args ...string) {
	c.t.Helper()
	f := &esevents.Firer{Root: c.root, Env: c.tree.Env()}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.FireContext(ctx, event, args...); err != nil {
		c.t.Fatalf("fire %s: %v", event, err)
	}
}

func (c *cab) id() string {
	b, err := os.ReadFile(c.lay.ID())
	if err != nil {
		c.t.Fatalf("the cabinet id: %v", err)
	}
	return strings.TrimSpace(string(b))
}

func (c *cab) waitDaemon(what string, ok func(daemon.Status) bool) daemon.Status {
	c.t.Helper()
	var st daemon.Status
	cabinettest.Await(c.t, "daemon: "+what, nil, func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st = daemon.Status{}
		if err := socket.Status(ctx, c.lay.Socket(), &st); err != nil {
			return false, err.Error()
		}
		return ok(st), fmt.Sprintf("%+v", st)
	})
	return st
}

// retained is the broker's retained view of cabinet id.
func (c *cab) retained(id string) map[string]string {
	out := map[string]string{}
	for topic, payload := range c.obs.Retained() {
		if strings.HasPrefix(topic, "batocera/"+id+"/") || strings.Contains(topic, "/batocera_"+id+"/") {
			out[topic] = payload
		}
	}
	return out
}

// brokenRelease is a release whose install works (it is the good binary's)
// but whose daemon migrates the store and exits at once.
func brokenRelease(t *testing.T, good, st string) string {
	dir := cabinettest.TempDir(t, "broken")
	root, err := binarytest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	migrate := filepath.Join(dir, "migrate")
	cmd := exec.Command("go", "build", "-o", migrate, "./packaging/e2e/testdata/migrate")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the migration: %v\n%s", err, out)
	}
	script := fmt.Sprintf(`#!/bin/sh
# A broken Cabinet release, for the rollback test.
case "$1" in
  version) echo '{"version":"3.0.0-broken","commit":"e2e3","go":"go","os":"linux","arch":"amd64","store_schema":%d}' ;;
  install) shift; exec %s install --binary "$0" "$@" ;;
  serve) exec %s %s %d ;;
  *) exit 0 ;;
esac
`, store.SchemaVersion+1, good, migrate, st, store.SchemaVersion+1)
	p := filepath.Join(dir, "cabinet")
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot lists the tree's files with their sizes, but for what is not
// Cabinet's to leave as it found it: batocera.conf (compared apart), the
// logs ES writes for its scripts.
func snapshot(t *testing.T, root string) string {
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch rel {
		case "userdata/system/batocera.conf", "userdata/system/logs":
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			b.WriteString(rel + "/\n")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(rel + " " + strconv.FormatInt(fi.Size(), 10) + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sameFile(t *testing.T, a, b string) bool {
	x, err := os.ReadFile(a)
	if err != nil {
		t.Error(err)
		return false
	}
	y, err := os.ReadFile(b)
	if err != nil {
		t.Error(err)
		return false
	}
	return bytes.Equal(x, y)
}

// freeAddr is a loopback address nothing listens on, for the daemon's MCP
// over HTTP (never the default 0.0.0.0:8717).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
