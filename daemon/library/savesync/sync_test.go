package savesync

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// TestFollowsThePlayer is the whole round: a save made on the cabinet reaches RomM, the
// handheld's newer save comes back in its place (the cabinet's backed up first), and both
// changed is a conflict that keeps both.
func TestFollowsThePlayer(t *testing.T) {
	r := newRig(t)
	g := r.game()
	cabinet := bytes.Repeat([]byte{0xCA}, 8192)
	r.write(g, cabinet, r.tm(0))
	r.at(time.Minute)

	res := r.sync(g)
	up := item(t, res, Uploaded)
	if up.Game.ROMID != g.ROMID || up.Slot != "autosave" {
		t.Fatalf("uploaded %+v", up)
	}
	on := r.newestOnRomM(g.ROMID)
	if !bytes.Equal(on.Content, cabinet) || on.Slot != "autosave" || on.OriginDevice != r.device {
		t.Fatalf("RomM holds %q slot %q from %q", on.FileName, on.Slot, on.OriginDevice)
	}
	if !strings.HasPrefix(on.FileName, "Alpha Quest [") || !strings.HasSuffix(on.FileName, "].srm") {
		t.Errorf("RomM's name %q: RomM tags a slotted upload with its time", on.FileName)
	}

	// Nothing changed: nothing moves.
	res = r.sync(g)
	for _, it := range res.Items {
		if it.Action == Uploaded || it.Action == Downloaded || it.Action == Conflicted {
			t.Fatalf("a second sync did %+v", it)
		}
	}

	// The handheld plays on: its save is RomM's newest.
	handheld := bytes.Repeat([]byte{0x44}, 8192)
	r.at(2 * time.Minute)
	r.fromHandheld(g, "Alpha Quest.sav", handheld)
	r.at(3 * time.Minute)
	res = r.sync(g)
	down := item(t, res, Downloaded)
	if got := r.read(g); !bytes.Equal(got, handheld) {
		t.Fatalf("the cabinet's save is %x…, want the handheld's", got[:4])
	}
	if down.Backup == "" {
		t.Fatal("no backup named")
	}
	if b, err := os.ReadFile(down.Backup); err != nil || !bytes.Equal(b, cabinet) {
		t.Fatalf("backup %s: %v", down.Backup, err)
	}
	if !strings.HasPrefix(down.Backup, r.sy.Backups.Dir+string(filepath.Separator)+"nes"+string(filepath.Separator)+"Alpha Quest.srm.") {
		t.Errorf("backup at %s", down.Backup)
	}

	// The cabinet plays again, and so does the handheld: both are kept, the cabinet's in place.
	mine := bytes.Repeat([]byte{0x11}, 8192)
	r.write(g, mine, r.tm(4*time.Minute))
	theirs := bytes.Repeat([]byte{0x22}, 8192)
	r.at(5 * time.Minute)
	r.fromHandheld(g, "Alpha Quest.sav", theirs)
	r.at(6 * time.Minute)
	res = r.sync(g)
	c := item(t, res, Conflicted)
	if got := r.read(g); !bytes.Equal(got, mine) {
		t.Fatal("a conflict replaced the cabinet's save")
	}
	if b, err := os.ReadFile(c.Backup); err != nil || !bytes.Equal(b, theirs) {
		t.Fatalf("RomM's side of the conflict at %s: %v", c.Backup, err)
	}
	waiting, _ := r.sy.Kept.Conflicts()
	if len(waiting) != 1 || waiting[0].Game.ROMID != g.ROMID {
		t.Fatalf("conflicts waiting: %+v", waiting)
	}
	if how := HowToResolve(waiting[0]); !strings.Contains(how, "library_resolve_save") {
		t.Errorf("how to resolve: %s", how)
	}
	// A conflict waits for the household: the next sync keeps it as it is.
	res = r.sync(g)
	if it := item(t, res, Conflicted); !strings.Contains(it.Detail, "waiting") && !strings.Contains(it.Detail, "still") {
		t.Errorf("second sync: %+v", it)
	}
	if got := r.read(g); !bytes.Equal(got, mine) {
		t.Fatal("the waiting conflict's save moved")
	}
}

// TestRomMConflict: the same record changed on both sides since the last sync is RomM's own
// conflict answer; both are kept.
func TestRomMConflict(t *testing.T) {
	r := newRig(t)
	g := r.game()
	r.write(g, []byte("first"), r.tm(0))
	r.at(time.Minute)
	r.sync(g)
	on := r.newestOnRomM(g.ROMID)
	// RomM's record changed after the cabinet last synced it, and so did the cabinet's file.
	if err := r.fake.MarkSynced(r.device, on.ID, on.UpdatedAt.Add(-30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	r.write(g, []byte("second"), r.tm(2*time.Minute))
	r.at(3 * time.Minute)
	res := r.sync(g)
	c := item(t, res, Conflicted)
	if !strings.Contains(c.Detail, "both") {
		t.Errorf("detail %q", c.Detail)
	}
	if string(r.read(g)) != "second" {
		t.Fatal("the cabinet's save moved")
	}
}

// TestResolve settles a conflict each way, the other side kept as a backup.
func TestResolve(t *testing.T) {
	for _, keep := range []string{KeepLocal, KeepRomM} {
		t.Run(keep, func(t *testing.T) {
			r := newRig(t)
			g := r.game()
			r.write(g, []byte("cabinet-1"), r.tm(0))
			r.at(time.Minute)
			r.sync(g)
			r.write(g, []byte("cabinet-2"), r.tm(2*time.Minute))
			r.at(3 * time.Minute)
			r.fromHandheld(g, "Alpha Quest.srm", []byte("handheld-2"))
			r.at(4 * time.Minute)
			item(t, r.sync(g), Conflicted)
			r.at(5 * time.Minute)

			r.running.Store(g.ROM)
			if _, err := r.sy.Resolve(context.Background(), g.ROMID, Battery.Slot, keep); err == nil {
				t.Fatal("resolved while the game runs")
			}
			r.running.Store("")
			it, err := r.sy.Resolve(context.Background(), g.ROMID, Battery.Slot, keep)
			if err != nil {
				t.Fatal(err)
			}
			other, want := "handheld-2", "cabinet-2"
			if keep == KeepRomM {
				other, want = "cabinet-2", "handheld-2"
			}
			if got := string(r.read(g)); got != want {
				t.Fatalf("the save is %q, want %q", got, want)
			}
			if b, err := os.ReadFile(it.Backup); err != nil || string(b) != other {
				t.Fatalf("the other side %q at %s: %v", b, it.Backup, err)
			}
			if cs, _ := r.sy.Kept.Conflicts(); len(cs) != 0 {
				t.Fatalf("still waiting: %+v", cs)
			}
			if keep == KeepLocal {
				if on := r.newestOnRomM(g.ROMID); string(on.Content) != "cabinet-2" {
					t.Fatalf("RomM's newest is %q", on.Content)
				}
			}
			// Settled: the next sync has nothing to do.
			for _, it := range r.sync(g).Items {
				if it.Action != InStep {
					t.Errorf("after resolving: %+v", it)
				}
			}
			if _, err := r.sy.Resolve(context.Background(), g.ROMID, Battery.Slot, keep); !errors.Is(err, ErrNoConflict) {
				t.Errorf("resolving again: %v", err)
			}
		})
	}
}

// TestRunningGameUntouched: the running game's save is the emulator's.
func TestRunningGameUntouched(t *testing.T) {
	r := newRig(t)
	g := r.game()
	r.fromHandheld(g, "Alpha Quest.srm", []byte("handheld"))
	r.at(time.Minute)
	r.running.Store(g.ROM)
	if res := r.sync(g); len(res.Items) != 0 {
		t.Fatalf("synced the running game: %+v", res.Items)
	}
	if _, err := os.Stat(r.srm(g)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a save appeared for the running game")
	}
	r.running.Store("")
	item(t, r.sync(g), Downloaded)
	if string(r.read(g)) != "handheld" {
		t.Fatal("not downloaded once the game ended")
	}
}

// TestHostileServer: RomM's answers that do not fit are refused with the reason, and nothing
// outside the save folder, nor the save itself, changes.
func TestHostileServer(t *testing.T) {
	long := strings.Repeat("a", 300) + ".srm"
	cases := []struct {
		name string
		spec fakeromm.SaveSpec
		want string
	}{
		{"dotdot", fakeromm.SaveSpec{RawFileName: "../../etc/x.srm", Content: []byte("evil")}, "not a file name"},
		{"slash", fakeromm.SaveSpec{RawFileName: "a/b.srm", Content: []byte("evil")}, "not a file name"},
		{"nul", fakeromm.SaveSpec{RawFileName: "x\x00.srm", Content: []byte("evil")}, "not a file name"},
		{"300 bytes", fakeromm.SaveSpec{RawFileName: long, Content: []byte("evil")}, "not a file name"},
		{"not a save", fakeromm.SaveSpec{FileName: "evil.sh", Content: []byte("evil")}, "not a save"},
		{"hash lies", fakeromm.SaveSpec{FileName: "x.srm", Content: []byte("evil"), ContentHash: md5hex([]byte("good"))}, "content_hash"},
		{"2 GiB", fakeromm.SaveSpec{FileName: "x.srm", Generated: 2 << 30}, "more than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			g := r.game()
			r.write(g, []byte("cabinet"), r.tm(0))
			r.at(time.Minute)
			r.sync(g)
			before := tree(t, r.root)
			r.at(2 * time.Minute)
			spec := tc.spec
			spec.ROMID, spec.Slot, spec.DeviceID = g.ROMID, Battery.Slot, r.handheld
			if _, err := r.fake.AddSave(spec); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			r.at(3 * time.Minute)
			res := r.sync(g)
			it := item(t, res, Failed)
			if !strings.Contains(it.Detail, tc.want) {
				t.Errorf("detail %q, want it to say %q", it.Detail, tc.want)
			}
			if strings.ContainsAny(it.Detail, "\x00") {
				t.Errorf("detail carries a NUL: %q", it.Detail)
			}
			after := tree(t, r.root)
			delete(after, filepath.Join(r.root, "state", "cabinet.db"))
			delete(before, filepath.Join(r.root, "state", "cabinet.db"))
			if !sameTree(before, after) {
				t.Fatalf("files changed:\nbefore %v\nafter  %v", before, after)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestDownloadCut: a download that breaks off leaves the old save byte-identical and no temp
// file behind; the next sync completes it.
func TestDownloadCut(t *testing.T) {
	r := newRig(t)
	g := r.game()
	old := bytes.Repeat([]byte{1}, 8192)
	r.write(g, old, r.tm(0))
	r.at(time.Minute)
	r.sync(g)
	newer := bytes.Repeat([]byte{2}, 64<<10)
	r.at(2 * time.Minute)
	r.fromHandheld(g, "Alpha Quest.srm", newer)
	r.at(3 * time.Minute)
	r.fake.SetFaults(fakeromm.Faults{Path: "/api/saves/", CutAfter: 1000, Times: 1})
	res := r.sync(g)
	item(t, res, Failed)
	if !bytes.Equal(r.read(g), old) {
		t.Fatal("a cut download changed the save")
	}
	ents, _ := os.ReadDir(filepath.Dir(r.srm(g)))
	if len(ents) != 1 {
		t.Fatalf("left in the save folder: %v", ents)
	}
	r.fake.SetFaults(fakeromm.Faults{})
	item(t, r.sync(g), Downloaded)
	if !bytes.Equal(r.read(g), newer) {
		t.Fatal("the next sync did not bring RomM's save")
	}
}

// TestRomMDown: RomM unreachable is an error of the whole pass; nothing changes.
func TestRomMDown(t *testing.T) {
	r := newRig(t)
	g := r.game()
	r.write(g, []byte("cabinet"), r.tm(0))
	r.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.sy.Sync(ctx, "test", []Game{g}); err == nil {
		t.Fatal("no error with RomM down")
	}
	if string(r.read(g)) != "cabinet" {
		t.Fatal("the save changed")
	}
	if j, _ := r.sy.Kept.Journal(); j.LastError == "" {
		t.Error("the failure is not in the journal")
	}
}

// TestLeftoverTemp: what a killed download left is removed by the next sync.
func TestLeftoverTemp(t *testing.T) {
	r := newRig(t)
	g := r.game()
	r.write(g, []byte("cabinet"), r.tm(0))
	left := filepath.Join(filepath.Dir(r.srm(g)), tempPrefix+"123")
	os.WriteFile(left, []byte("half"), 0o644)
	r.sync(g)
	if _, err := os.Stat(left); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the leftover stays")
	}
}

// TestOtherGamesIgnored: RomM offers the whole library's saves; only the games asked for move.
func TestOtherGamesIgnored(t *testing.T) {
	r := newRig(t)
	g := r.game()
	other := Game{System: "psx", ROM: "/userdata/roms/psx/Echo Chamber.m3u", ROMID: fakeromm.ROMEchoChamber}
	r.fromHandheld(other, "Echo Chamber.srm", []byte("psx"))
	r.write(g, []byte("nes"), r.tm(0))
	r.sync(g)
	if _, err := os.Stat(r.srm(other)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a game not asked for got a save")
	}
}

// TestBackupsPruned keeps Keep backups per save and the folder within MaxBytes.
func TestBackupsPruned(t *testing.T) {
	dir := t.TempDir()
	b := Backups{Dir: filepath.Join(dir, "bk"), Keep: 2, MaxBytes: 10 << 10}
	src := filepath.Join(dir, "x.srm")
	at := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		os.WriteFile(src, bytes.Repeat([]byte{byte(i)}, 1024), 0o644)
		if _, err := b.Backup("nes", src, at.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	list := b.List()
	if len(list) != 2 || list[0].MadeAt != at.Add(4*time.Minute) {
		t.Fatalf("kept %+v", list)
	}
	big := filepath.Join(dir, "y.srm")
	for i := 0; i < 2; i++ {
		os.WriteFile(big, bytes.Repeat([]byte{9}, 6<<10), 0o644)
		if _, err := b.Backup("nes", big, at.Add(time.Hour+time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.Bytes(); n > 10<<10 {
		t.Fatalf("%d bytes kept", n)
	}
	newest := b.List()[0]
	if newest.Save != "y.srm" {
		t.Fatalf("the newest backup went: %+v", b.List())
	}
}
