package install

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
)

// The unit tests use stand-in binaries (their bytes say how they behave)
// and a service that "runs" whatever binary is installed; the real script,
// the real Batocera tools and a real daemon are in cmd/cabinet's e2e test.
const (
	goodV1   = "cabinet v1"
	goodV2   = "cabinet v2"
	broken   = "exits at once"
	migrates = "migrates the store to schema 2, then exits"
)

type fakeService struct {
	t       Target
	running bool
	starts  int
	stops   int
}

func (f *fakeService) Start(context.Context) error {
	f.starts++
	b, _ := os.ReadFile(f.t.Layout.Binary)
	switch string(b) {
	case broken:
		f.running = false
	case migrates:
		os.WriteFile(f.t.storePath(), []byte("2"), 0o600)
		f.running = false
	default:
		f.running = true
	}
	return nil
}
func (f *fakeService) Stop(context.Context) error { f.stops++; f.running = false; return nil }
func (f *fakeService) Answering(ctx context.Context) error {
	if f.running {
		return nil
	}
	return errors.New("connection refused")
}
func (f *fakeService) Running(context.Context) bool { return f.running }
func (f *fakeService) Log() string                  { return "panic: a stand-in binary" }

// readSchema reads the stand-in store: a file holding its schema number.
func readSchema(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

type rig struct {
	t     *testing.T
	root  string
	bins  string
	token bool
	tgt   Target
	svc   *fakeService
	conf  []byte
}

const confBefore = "# Batocera settings\nsystem.hostname=BATOCERA\nsystem.services=syncthing\n#cabinet.name=Batocera\n"

func newRig(t *testing.T) *rig {
	root := t.TempDir()
	l := packaging.DefaultLayout()
	for _, p := range []*string{&l.Binary, &l.ESScripts, &l.UserScripts, &l.ServicesDir, &l.RunDir, &l.Entries} {
		*p = filepath.Join(root, *p)
	}
	tgt := Target{Layout: l, Conf: filepath.Join(root, "userdata/system/batocera.conf"),
		StateDir: filepath.Join(root, "userdata/system/cabinet"), SecretsDir: "/userdata/system/cabinet/secrets",
		SecretsPath: func(p string) string { return filepath.Join(root, p) }}
	os.MkdirAll(filepath.Dir(tgt.Conf), 0o755)
	os.MkdirAll(filepath.Join(root, "userdata/system/configs/emulationstation/scripts"), 0o755)
	if err := os.WriteFile(tgt.Conf, []byte(confBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, root: root, bins: t.TempDir(), tgt: tgt, svc: &fakeService{t: tgt}}
}

func (r *rig) binary(content string) string {
	p := filepath.Join(r.bins, "cabinet")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		r.t.Fatal(err)
	}
	return p
}

func (r *rig) install(content string, mod func(*Options)) (Result, error, string) {
	var out bytes.Buffer
	o := Options{Source: r.binary(content), Version: content, StoreSchema: 1, ReadSchema: readSchema,
		HasToken: func() bool { return r.token }, NewToken: func() error { r.token = true; return nil },
		StartTimeout: 100 * time.Millisecond, Out: &out}
	if mod != nil {
		mod(&o)
	}
	res, err := Install(context.Background(), r.tgt, r.svc, o)
	return res, err, out.String()
}

func (r *rig) read(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b)
}

func TestInstallFreshThenIdempotent(t *testing.T) {
	r := newRig(t)
	res, err, _ := r.install(goodV1, func(o *Options) {
		o.Saves = []batoconf.KV{{Key: "cabinet.mqtt.broker", Value: "tcp://ha.lan:1883"}, {Key: "cabinet.name", Value: "Arcade"}}
		o.Secrets = []Secret{{Key: "cabinet.mqtt.password", FileKey: "cabinet.mqtt.password_file", Value: "s3cret"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Upgraded || !r.svc.running || r.svc.starts != 1 {
		t.Errorf("fresh install: upgraded %v, running %v, %d starts", res.Upgraded, r.svc.running, r.svc.starts)
	}
	if got := r.read(r.tgt.Layout.Binary); got != goodV1 {
		t.Errorf("binary = %q", got)
	}
	for _, s := range append(r.tgt.Layout.ESScriptFiles(), r.tgt.Layout.ServiceScript()) {
		if got := r.read(s.Path); got != s.Content {
			t.Errorf("%s differs from what packaging renders", s.Path)
		}
	}
	wantConf := "# Batocera settings\nsystem.hostname=BATOCERA\nsystem.services=syncthing cabinet\ncabinet.name=Arcade\n" +
		"cabinet.mqtt.broker=tcp://ha.lan:1883\ncabinet.mqtt.password_file=/userdata/system/cabinet/secrets/mqtt.password\n"
	if got := r.read(r.tgt.Conf); got != wantConf {
		t.Errorf("batocera.conf:\n%s\nwant:\n%s", got, wantConf)
	}
	if got := r.read(filepath.Join(r.root, "userdata/system/cabinet/secrets/mqtt.password")); got != "s3cret\n" {
		t.Errorf("secret file = %q", got)
	}
	for _, line := range res.Changed {
		if strings.Contains(line, "s3cret") {
			t.Errorf("a change line shows the secret: %q", line)
		}
	}

	// The same binary again: nothing changes, nothing restarts.
	before := snapshot(t, r.root)
	res, err, _ = r.install(goodV1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 || r.svc.starts != 1 || r.svc.stops != 0 {
		t.Errorf("second run: changes %q, %d starts, %d stops; want none", res.Changed, r.svc.starts, r.svc.stops)
	}
	if after := snapshot(t, r.root); after != before {
		t.Errorf("second run changed files:\n%s", Diff("tree", []byte(before), []byte(after)))
	}
}

func TestInstallDryRunChangesNothing(t *testing.T) {
	r := newRig(t)
	before := snapshot(t, r.root)
	_, err, out := r.install(goodV1, func(o *Options) {
		o.DryRun = true
		o.Saves = []batoconf.KV{{Key: "cabinet.mqtt.broker", Value: "tcp://ha.lan:1883"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, r.root); after != before {
		t.Errorf("dry run changed files:\n%s", Diff("tree", []byte(before), []byte(after)))
	}
	for _, want := range []string{"would install", "+++ " + r.tgt.Conf, "+system.services=syncthing cabinet", "+cabinet.mqtt.broker=tcp://ha.lan:1883", "+++ " + r.tgt.serviceFile(), "would create the MCP token", "nothing written"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if r.svc.starts != 0 {
		t.Error("dry run started the service")
	}
}

func TestUpgradeKeepsPreviousAndRestarts(t *testing.T) {
	r := newRig(t)
	if _, err, _ := r.install(goodV1, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(r.tgt.storePath(), []byte("1"), 0o600)
	res, err, _ := r.install(goodV2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Upgraded || res.From != goodV1 || res.To != goodV2 {
		t.Errorf("result %+v, want an upgrade from v1 to v2", res)
	}
	if r.svc.stops != 1 || r.svc.starts != 2 || !r.svc.running {
		t.Errorf("%d stops, %d starts, running %v; want the service restarted once", r.svc.stops, r.svc.starts, r.svc.running)
	}
	if got := r.read(r.tgt.prevBinary()); got != goodV1 {
		t.Errorf("cabinet.prev = %q, want v1", got)
	}
	if _, err := os.Stat(r.tgt.storeCopy()); !errors.Is(err, os.ErrNotExist) {
		t.Error("the pre-upgrade copy of the store outlived a clean upgrade")
	}
}

func TestBrokenUpgradeRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name, binary string
		restored     bool
	}{
		{"exits at once", broken, false},
		{"migrates then exits", migrates, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			if _, err, _ := r.install(goodV1, nil); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(r.tgt.storePath(), []byte("1"), 0o600)
			_, err, _ := r.install(tc.binary, func(o *Options) { o.StoreSchema = 2 })
			if !errors.Is(err, ErrRolledBack) {
				t.Fatalf("err = %v, want a rollback", err)
			}
			if !strings.Contains(err.Error(), "panic: a stand-in binary") {
				t.Errorf("the error does not quote the daemon's last words: %v", err)
			}
			if got := r.read(r.tgt.Layout.Binary); got != goodV1 || !r.svc.running {
				t.Errorf("after the rollback the binary is %q (running %v), want v1 running", got, r.svc.running)
			}
			if got := r.read(r.tgt.storePath()); got != "1" {
				t.Errorf("store schema %s after the rollback, want 1", got)
			}
			if tc.restored != strings.Contains(err.Error(), "store was restored") {
				t.Errorf("restored = %v, error %v", tc.restored, err)
			}
		})
	}
}

func TestOlderBinaryRefusesNewerStore(t *testing.T) {
	r := newRig(t)
	if _, err, _ := r.install(goodV2, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(r.tgt.storePath(), []byte("2"), 0o600)
	before := snapshot(t, r.root)
	_, err, _ := r.install(goodV1, func(o *Options) { o.StoreSchema = 1 })
	if err == nil || !strings.Contains(err.Error(), "newer Cabinet (schema 2)") {
		t.Fatalf("err = %v, want a refusal naming the schema", err)
	}
	if after := snapshot(t, r.root); after != before {
		t.Errorf("a refused install changed files:\n%s", Diff("tree", []byte(before), []byte(after)))
	}
	if !r.svc.running {
		t.Error("the refused install left the service stopped")
	}
}

func TestUninstall(t *testing.T) {
	r := newRig(t)
	if _, err, _ := r.install(goodV1, func(o *Options) {
		o.Saves = []batoconf.KV{{Key: "cabinet.mqtt.broker", Value: "tcp://ha.lan:1883"}}
	}); err != nil {
		t.Fatal(err)
	}
	// A wrapper someone edited stays, and is listed.
	edited := r.tgt.Layout.ESScriptFiles()[0].Path
	os.WriteFile(edited, []byte("#!/bin/sh\n# mine now\n"), 0o755)
	var out bytes.Buffer
	res, err := Uninstall(context.Background(), r.tgt, r.svc, UninstallOptions{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if r.svc.running {
		t.Error("the service still runs")
	}
	if len(res.Left) != 1 || !strings.Contains(res.Left[0], edited) {
		t.Errorf("left %q, want only the edited wrapper", res.Left)
	}
	if _, err := os.Stat(r.tgt.Layout.Binary); !errors.Is(err, os.ErrNotExist) {
		t.Error("the binary is still there")
	}
	conf := r.read(r.tgt.Conf)
	if !strings.Contains(conf, "system.services=syncthing\n") || !strings.Contains(conf, "cabinet.mqtt.broker=") {
		t.Errorf("without --purge the service goes from system.services and the settings stay:\n%s", conf)
	}
	if _, err := os.Stat(r.tgt.StateDir); err != nil {
		t.Errorf("the state dir went without --purge: %v", err)
	}
}

func TestUninstallPurgeRestoresConf(t *testing.T) {
	r := newRig(t)
	if _, err, _ := r.install(goodV1, func(o *Options) {
		o.Saves = []batoconf.KV{{Key: "cabinet.mqtt.broker", Value: "tcp://ha.lan:1883"}}
		o.Secrets = []Secret{{Key: "cabinet.mqtt.password", FileKey: "cabinet.mqtt.password_file", Value: "pw"}}
	}); err != nil {
		t.Fatal(err)
	}
	cleared := false
	_, err := Uninstall(context.Background(), r.tgt, r.svc, UninstallOptions{Purge: true, Out: &bytes.Buffer{},
		ClearBroker: func(context.Context) (string, error) { cleared = true; return "3 retained messages", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if !cleared {
		t.Error("the broker was not cleared")
	}
	// What batocera-services disable leaves: the list without cabinet.
	want := strings.Replace(confBefore, "#cabinet.name=Batocera\n", "#cabinet.name=Batocera\n", 1)
	if got := r.read(r.tgt.Conf); got != want {
		t.Errorf("batocera.conf after purge:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(r.tgt.StateDir); !errors.Is(err, os.ErrNotExist) {
		t.Error("the state dir survived --purge")
	}
	if left := snapshot(t, r.root); strings.Contains(left, "cabinet") && !strings.Contains(left, "batocera.conf") {
		t.Errorf("files left after purge:\n%s", left)
	}
}

// snapshot lists every file under root with its size and bytes' hash.
func snapshot(t *testing.T, root string) string {
	var b strings.Builder
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if fi.IsDir() {
			b.WriteString(rel + "/\n")
			return nil
		}
		c, _ := os.ReadFile(p)
		b.WriteString(rel + " " + sum(c)[:12] + "\n")
		return nil
	})
	return b.String()
}
