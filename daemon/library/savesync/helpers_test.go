package savesync

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// rig is a Syncer over the real RomM client, the fake RomM on loopback (RomM's sync protocol as
// RomM answers it) and a real store, with the cabinet's saves in a temp folder.
type rig struct {
	t        testing.TB
	fake     *fakeromm.Server
	srv      *httptest.Server
	client   *romm.Client
	device   string
	handheld string // another device of the household's
	sy       *Syncer
	root     string
	running  atomic.Value // string
	// base and off are the household's clock, RomM's and the cabinet's: base+off (at moves it).
	base time.Time
	off  atomic.Int64
}

// tm is the moment d after the rig's start.
func (r *rig) tm(d time.Duration) time.Time { return r.base.Add(d) }

// at moves the clock to d after the rig's start.
func (r *rig) at(d time.Duration) { r.off.Store(int64(d)) }

func (r *rig) now() time.Time { return r.base.Add(time.Duration(r.off.Load())) }

// syncScopes are what a cabinet paired with --sync-saves holds.
func syncScopes() []string {
	return append(fakeromm.ReadScopes(), "assets.write", "devices.write", "roms.user.write")
}

func newRig(t testing.TB, opts ...func(*fakeromm.Options)) *rig {
	t.Helper()
	o := fakeromm.Options{}
	for _, f := range opts {
		f(&o)
	}
	fake, err := fakeromm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	r := &rig{t: t, fake: fake, srv: srv, root: t.TempDir(), base: time.Now().Add(-24 * time.Hour).Truncate(time.Second)}
	fake.SetClock(r.now)
	r.device = fake.AddDevice(fakeromm.Device{Name: "cabinet", Platform: "batocera", Client: "cabinet", SyncEnabled: true})
	r.handheld = fake.AddDevice(fakeromm.Device{Name: "handheld", Platform: "muos", Client: "grout", SyncEnabled: true})
	tok := fake.IssueToken(syncScopes(), r.device)
	r.client, err = romm.New(romm.Config{URL: srv.URL, Token: tok, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(r.root, "state", "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r.running.Store("")
	saves := filepath.Join(r.root, "userdata", "saves")
	r.sy = &Syncer{Remote: r.client, DeviceID: r.device, Kept: Kept{DB: st}, Layout: Layout{Saves: saves},
		Backups: Backups{Dir: Layout{Saves: saves}.BackupDir(), Keep: 3, MaxBytes: 1 << 20},
		Running: func() string { return r.running.Load().(string) }, Now: r.now, Log: zerolog.Nop()}
	return r
}

// game is the fixture's NES game, as the cabinet lists it.
func (r *rig) game() Game {
	return Game{System: "nes", ROM: "/userdata/roms/nes/Alpha Quest.nes", ROMID: fakeromm.ROMAlphaQuest, Core: "nestopia", Name: "Alpha Quest"}
}

func (r *rig) srm(g Game) string { return r.sy.Layout.Path(g, Battery) }

// write puts a save on the cabinet, its time t (the emulator wrote it then).
func (r *rig) write(g Game, data []byte, t time.Time) {
	r.t.Helper()
	p := r.srm(g)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chtimes(p, t, t); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) read(g Game) []byte {
	r.t.Helper()
	b, err := os.ReadFile(r.srm(g))
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *rig) sync(gs ...Game) Result {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := r.sy.Sync(ctx, "test", gs)
	if err != nil {
		r.t.Fatalf("Sync: %v", err)
	}
	return res
}

// fromHandheld uploads data as the household's handheld does (grout: slot autosave), now.
func (r *rig) fromHandheld(g Game, name string, data []byte) int {
	r.t.Helper()
	id, err := r.fake.AddSave(fakeromm.SaveSpec{ROMID: g.ROMID, Slot: Battery.Slot, FileName: name, Emulator: "mGBA",
		Content: data, DeviceID: r.handheld})
	if err != nil {
		r.t.Fatal(err)
	}
	return id
}

func (r *rig) newestOnRomM(romID int) fakeromm.SaveInfo {
	r.t.Helper()
	list := r.fake.Saves(romID)
	if len(list) == 0 {
		r.t.Fatal("RomM holds no save")
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].UpdatedAt.Before(list[j].UpdatedAt) || list[i].ID < list[j].ID && list[i].UpdatedAt.Equal(list[j].UpdatedAt)
	})
	return list[len(list)-1]
}

func item(t testing.TB, res Result, action string) Item {
	t.Helper()
	for _, it := range res.Items {
		if it.Action == action {
			return it
		}
	}
	t.Fatalf("no %s item in %+v", action, res.Items)
	return Item{}
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// tree lists every file under dir with its bytes' md5: what a test compares before and after.
func tree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		out[p] = md5hex(b)
		return nil
	})
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var _ = bytes.Equal
