package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// rig is an installer over the simulator: its fake ES (which rescans the tree on a reload) and
// its fake RomM, with a store of its own.
type rig struct {
	cab   *simulator.Cabinet
	esc   *es.Client
	store *store.Store
	in    *Installer
	toast []string
}

type screen struct{ r *rig }

func (s screen) Show(_ context.Context, text string) error {
	s.r.toast = append(s.r.toast, text)
	return nil
}

func newRig(t *testing.T) *rig {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{RomM: true, Dir: t.TempDir(), LaunchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	cab.ES.Start()
	// A psx system for the multi-disc game: ES lists a system once it has a game.
	if err := cab.Library.AddSystem(library.System{Name: "psx", FullName: "PlayStation", Extensions: []string{".cue", ".m3u", ".chd"}}); err != nil {
		t.Fatal(err)
	}
	g, err := cab.Library.AddGame("psx", "Other.cue", "Other", nil)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(cab.Path(g.Path)), 0o755)
	os.WriteFile(cab.Path(g.Path), []byte("FILE \"other.bin\" BINARY\n"), 0o644)
	esc, err := es.New(es.Config{URL: cab.ESURL()})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := romm.New(romm.Config{URL: cab.RomMURL(), Token: cab.RomM.Token()})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &rig{cab: cab, esc: esc, store: st}
	r.in = &Installer{RomM: rc, RomMURL: cab.RomMURL(), ES: esc, Meta: es.NewMetadataWriter(esc), Records: Kept{DB: st},
		Path: cab.Path, Screen: screen{r}, LockFile: filepath.Join(t.TempDir(), "install.lock"), ToastEvery: time.Nanosecond}
	return r
}

func TestInstallSingleFileListedWithMetadata(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	var last Progress
	res, err := r.in.Install(ctx, Request{ROMID: fakeromm.ROMCosmicCrusade}, func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	want := "/userdata/roms/snes/Cosmic Crusade (USA).sfc"
	if res.Outcome != "done" || res.System != "snes" || res.Path != want || !res.Verified || !res.Listed || res.GameID != es.GameID(want) {
		t.Fatalf("result %+v", res)
	}
	rom, _ := r.cab.RomM.ROM(fakeromm.ROMCosmicCrusade)
	got, err := os.ReadFile(r.cab.Path(want))
	if err != nil || string(got) != string(rom.Files[0].Bytes) {
		t.Fatalf("the file on the cabinet is not RomM's (%v)", err)
	}
	if last.Done != last.Total || last.Total != int64(len(got)) {
		t.Errorf("last progress %+v", last)
	}
	g, err := r.esc.GameLocal(ctx, "snes", res.GameID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "Cosmic Crusade" || !strings.Contains(g.Genre, "Shooter") || g.Players != "1" || g.ReleaseDate.Year() != 1993 || g.Image == "" {
		t.Errorf("ES has %+v", g)
	}
	if _, err := os.Stat(r.cab.Path(g.Image)); err != nil {
		t.Errorf("the cover ES points at: %v", err)
	}
	rec, err := Kept{DB: r.store}.InstallAt(want)
	if err != nil || rec.ROMID != fakeromm.ROMCosmicCrusade || len(rec.Files) != 1 || len(rec.Media) != 1 {
		t.Fatalf("record %+v, %v", rec, err)
	}
	if len(r.toast) == 0 || !strings.HasPrefix(r.toast[0], "Installing Cosmic Crusade") {
		t.Errorf("toasts %q", r.toast)
	}
	// Again: unchanged, nothing downloaded.
	before := len(r.cab.RomM.Requests())
	again, err := r.in.Install(ctx, Request{ROMID: fakeromm.ROMCosmicCrusade}, nil)
	if err != nil || again.Outcome != "unchanged" || again.GameID != res.GameID {
		t.Fatalf("second install: %+v, %v", again, err)
	}
	for _, q := range r.cab.RomM.Requests()[before:] {
		if strings.Contains(q.Path, "/content/") {
			t.Errorf("the second install downloaded %s", q.Path)
		}
	}
	// Uninstall: the file and the cover go, ES no longer lists it.
	u, err := r.in.Uninstall(ctx, r.esc, "snes", res.GameID)
	if err != nil || len(u.Kept) != 0 || len(u.Removed) != 2 {
		t.Fatalf("uninstall %+v, %v", u, err)
	}
	if _, err := os.Stat(r.cab.Path(want)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	waitGone(t, r, "snes", res.GameID)
	if _, err := (Kept{DB: r.store}).InstallAt(want); !errors.Is(err, ErrNoInstall) {
		t.Errorf("record after uninstall: %v", err)
	}
}

func waitGone(t *testing.T, r *rig, system, id string) {
	t.Helper()
	cabinettest.Await(t, fmt.Sprintf("ES to forget %s/%s", system, id), nil, func() (bool, string) {
		_, err := r.esc.GameLocal(context.Background(), system, id)
		return errors.Is(err, es.ErrNotFound), fmt.Sprintf("ES still lists it: %v", err)
	})
}

func TestInstallZipVerifiedByContents(t *testing.T) {
	r := newRig(t)
	res, err := r.in.Install(context.Background(), Request{ROMID: fakeromm.ROMDeltaForce}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.System != "megadrive" || !res.Verified || !strings.HasSuffix(res.Path, ".zip") || !res.Listed {
		t.Fatalf("%+v", res)
	}
}

func TestInstallMultiDiscGetsAPlaylist(t *testing.T) {
	r := newRig(t)
	var phases []string
	res, err := r.in.Install(context.Background(), Request{ROMID: fakeromm.ROMEchoChamber}, func(p Progress) {
		if p.Phase != "" {
			phases = append(phases, fmt.Sprintf("%s %d/%d %s %d/%d", p.Phase, p.Index, p.Files, p.File, p.Done, p.Total))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "/userdata/roms/psx/Echo Chamber (USA).m3u"
	if res.Path != want || res.Files != 4 || !res.Verified || !res.Listed {
		t.Fatalf("%+v", res)
	}
	checkPhases(t, phases, res)
	m3u, err := os.ReadFile(r.cab.Path(want))
	if err != nil {
		t.Fatal(err)
	}
	if string(m3u) != "Echo Chamber (USA)/Echo Chamber (USA) (Disc 1).cue\nEcho Chamber (USA)/Echo Chamber (USA) (Disc 2).cue\n" {
		t.Errorf("playlist %q", m3u)
	}
	for _, f := range []string{"Echo Chamber (USA) (Disc 1).bin", "Echo Chamber (USA) (Disc 2).cue"} {
		if _, err := os.Stat(r.cab.Path("/userdata/roms/psx/Echo Chamber (USA)/" + f)); err != nil {
			t.Error(err)
		}
	}
}

func TestInstallRefusals(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		req  Request
		want string
	}{
		{"no system for the platform", Request{ROMID: fakeromm.ROMFoxtrotTales}, "no system EmulationStation lists"},
		{"a system the platform does not play in", Request{ROMID: fakeromm.ROMCosmicCrusade, System: "nes"}, "is not one for RomM's platform snes"},
		{"missing from RomM's disk", Request{ROMID: fakeromm.ROMIotaInvaders}, "RomM"},
		{"no such ROM", Request{ROMID: 999999}, "read ROM 999999"},
		{"not a ROM id", Request{ROMID: 0}, "positive number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.in.Install(ctx, tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
			assertNothingStaged(t, r)
		})
	}
}

// assertNothingStaged: no stage folder and no part file left in any system folder.
func assertNothingStaged(t *testing.T, r *rig) {
	t.Helper()
	filepath.WalkDir(r.cab.Path(RomsRoot), func(p string, d os.DirEntry, err error) error {
		if err == nil && (strings.HasPrefix(d.Name(), ".cabinet-install-") || strings.HasSuffix(d.Name(), ".cabinet-part")) {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

func TestInstallWhileAGameRuns(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	g := r.cab.Library.Games("nes")[0]
	if err := r.cab.ES.Launch(g.System, g.ID); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the game to start", nil, func() bool { _, ok := r.cab.ES.Running(); return ok })
	res, err := r.in.Install(ctx, Request{ROMID: fakeromm.ROMCosmicCrusade}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Listed || len(res.Warnings) == 0 {
		t.Fatalf("installed while a game runs: %+v", res)
	}
	r.cab.ES.EndGame(0)
	cabinettest.Await(t, "the game ended", nil, func() bool { _, ok := r.cab.ES.Running(); return !ok })
	n, err := r.in.FinishPending(ctx)
	if err != nil || n != 1 {
		t.Fatalf("FinishPending: %d, %v", n, err)
	}
	if _, err := r.esc.GameLocal(ctx, "snes", es.GameID(res.Path)); err != nil {
		t.Fatalf("ES does not list it after the game: %v", err)
	}
}

func TestUninstallRefusesOthersAndKeepsChanges(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	g := r.cab.Library.Games("nes")[0]
	if _, err := r.in.Uninstall(ctx, r.esc, "nes", g.ID); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("uninstall of a game Cabinet did not install: %v", err)
	}
	res, err := r.in.Install(ctx, Request{ROMID: fakeromm.ROMEchoChamber}, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := r.cab.Path("/userdata/roms/psx/Echo Chamber (USA)/Echo Chamber (USA) (Disc 2).bin")
	if err := os.WriteFile(changed, []byte("patched by the user"), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := r.in.Uninstall(ctx, r.esc, "psx", res.GameID)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Kept) != 1 || !strings.HasSuffix(u.Kept[0], "(Disc 2).bin") || len(u.Removed) < 4 {
		t.Fatalf("%+v", u)
	}
	if _, err := os.Stat(changed); err != nil {
		t.Errorf("the changed file was removed: %v", err)
	}
}

// checkPhases checks the phases a 4-file install reported: read, download and verify of each
// file in turn with the bytes so far, move and list with all of them.
func checkPhases(t *testing.T, phases []string, res Result) {
	t.Helper()
	if len(phases) != 1+2*res.Files+2 || phases[0] != "read 0/0  0/0" {
		t.Fatalf("phases %q", phases)
	}
	all := fmt.Sprintf("%d/%d", res.Bytes, res.Bytes)
	for i := 1; i <= res.Files; i++ {
		dl, vf := phases[2*i-1], phases[2*i]
		if !strings.HasPrefix(dl, fmt.Sprintf("download %d/%d Echo Chamber", i, res.Files)) ||
			!strings.HasPrefix(vf, fmt.Sprintf("verify %d/%d Echo Chamber", i, res.Files)) {
			t.Errorf("file %d: phases %q, %q", i, dl, vf)
		}
	}
	if last := phases[len(phases)-2:]; last[0] != "move 0/4  "+all || last[1] != "list 0/4  "+all {
		t.Errorf("last phases %q, want move and list with %s bytes", last, all)
	}
}
