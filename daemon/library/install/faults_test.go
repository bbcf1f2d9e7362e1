package install

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/daemon/library/install/stage"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// The installer against a RomM that misbehaves, or a cabinet that runs out of room: whatever
// fails, nothing partial or unverified is left where ES would list it, and the error says what
// to do.

func noSleep(context.Context, time.Duration) error { return nil }

func sha1Hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

func makeZip(t *testing.T, members ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		w, err := zw.Create(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(romBytes(m, 3000))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// cueSheet is a one-track cue sheet for bin.
func cueSheet(bin string) []byte {
	return []byte("FILE \"" + bin + "\" BINARY\n  TRACK 01 MODE2/2352\n    INDEX 01 00:00:00\n")
}

// contentRequests are the downloads of ROM id the fake RomM received.
func contentRequests(r *rig, id int) []fakeromm.Request {
	var out []fakeromm.Request
	for _, q := range r.cab.RomM.Requests() {
		if strings.HasPrefix(q.Path, fmt.Sprintf("/api/roms/%d/content/", id)) {
			out = append(out, q)
		}
	}
	return out
}

func TestInstallHostileNames(t *testing.T) {
	r := newRig(t)
	long := "Long " + strings.Repeat("x", 291) + ".sfc"
	wide := strings.Repeat("é", 148) + ".sfc"
	if len(long) != 300 || len(wide) != 300 {
		t.Fatalf("the long names are %d and %d bytes, want 300", len(long), len(wide))
	}
	for _, tt := range []struct {
		name, file, want string
	}{
		{"slashes", "roms/../../../Sneaky (USA).sfc", "roms_.._.._.._Sneaky (USA).sfc"},
		{"bidi and control characters", "\u202eCFS.exe\x07\x1b[31m Evil\t(USA).sfc", "CFS.exe[31m Evil (USA).sfc"},
		{"300 bytes of UTF-8", wide, strings.Repeat("é", 125) + ".sfc"},
		{"an extension in capitals", "Shouting (USA).SFC", "Shouting (USA).SFC"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := romBytes(tt.name, 4096)
			rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Hostile " + tt.name,
				Files: []fakeromm.FileSpec{{Name: tt.file, Data: data}}})
			before := snapshot(t, r)
			r.in.ListWait = 0
			res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := path.Join(RomsRoot, "snes", tt.want)
			if res.Path != want || !res.Verified || !res.Listed {
				t.Fatalf("installed at %q (verified %v, listed %v), want %q listed; warnings %q",
					res.Path, res.Verified, res.Listed, want, res.Warnings)
			}
			base := path.Base(res.Path)
			if len(base) > 255 || strings.IndexFunc(base, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) >= 0 ||
				!utf8.ValidString(base) || strings.HasPrefix(base, ".") {
				t.Errorf("the name on the cabinet %q is not clean", base)
			}
			if c := changes(before, snapshot(t, r)); !slices.Equal(c, []string{want}) {
				t.Errorf("the install wrote %q, want only %s", c, want)
			}
			if got, err := os.ReadFile(r.cab.Path(want)); err != nil || !bytes.Equal(got, data) {
				t.Errorf("the installed file is not RomM's: %v", err)
			}
		})
	}

	// Names ES would never list, and names ES or Batocera keep for themselves in a system
	// folder, are refused before a byte is downloaded, with the reason; nothing changes.
	for _, tt := range []struct {
		name, file, want string
	}{
		{"climbs out", "../../etc/passwd", `climbs out of the system folder with ".."`},
		{"hidden", ".hidden (USA).sfc", "a name starting with '.' is hidden"},
		{"hidden behind a bidi mark", "\u200f .sneaky.sfc", "a name starting with '.' is hidden"},
		// RomM's client caps a name at 255 runes with an ellipsis: the extension goes, so ES
		// would never list it (the install used to wait 30 s for that).
		{"300 ASCII bytes", long, "does not end in an extension this system takes (.smc .fig .sfc"},
		{"no extension", "Plain", "does not end in an extension this system takes"},
		{"the game list", "gamelist.xml", "gamelist.xml is the system's game list"},
		{"the game list in capitals", "GameList.XML", "gamelist.xml is the system's game list"},
		{"a media folder's name", "images", "images is a folder EmulationStation keeps"},
		{"a scraper's folder", "downloaded_images", "downloaded_images is a folder EmulationStation keeps"},
		{"a pad-to-keyboard mapping", "Other.sfc.keys", "pad-to-keyboard mapping"},
		{"a p2k mapping", "Other.sfc.p2k.cfg", "pad-to-keyboard mapping"},
		{"ES's systems", "es_systems_snes.cfg", "one of EmulationStation's configuration files"},
		{"Batocera's note", "_info.txt", "Batocera's note"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Hostile " + tt.name,
				Files: []fakeromm.FileSpec{{Name: tt.file, Data: romBytes(tt.name, 4096)}}})
			games := listed(t, r, "snes")
			before := snapshot(t, r)
			_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a refusal saying %q", err, tt.want)
			}
			if q := contentRequests(r, rom.ID); len(q) != 0 {
				t.Errorf("downloaded before refusing: %d requests", len(q))
			}
			assertNothingLeft(t, r, before, "snes", games)
			if _, err := os.Stat(r.cab.Path("/etc/passwd")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("something is at /etc/passwd of the tree: %v", err)
			}
		})
	}

	// A multi-file game: a hostile folder name is cleaned; a file that climbs out is refused.
	// A multi-file game: a folder name that climbs out, or one ES keeps, is refused; a file inside
	// the game's folder follows only the other rules (a .bin beside its .cue, whatever its name).
	for _, tt := range []struct{ name, folder, want string }{
		{"folder name climbs out", "../Escape (USA)", `climbs out of the system folder with ".."`},
		{"folder named like ES's media", "Media", "media is a folder EmulationStation keeps"},
		{"hidden folder", ".Escape (USA)", "a name starting with '.' is hidden"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Escape " + tt.name, FSName: tt.folder, Folder: true,
				Files: []fakeromm.FileSpec{{Name: "Escape (USA).cue", Data: cueSheet("Escape (USA).bin")}, {Name: "Escape (USA).bin", Data: romBytes("escape", 2352*4)}}})
			games := listed(t, r, "psx")
			before := snapshot(t, r)
			_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want a refusal saying %q", err, tt.want)
			}
			if q := contentRequests(r, rom.ID); len(q) != 0 {
				t.Errorf("downloaded before refusing: %d requests", len(q))
			}
			assertNothingLeft(t, r, before, "psx", games)
		})
	}
	t.Run("inner names follow the other rules", func(t *testing.T) {
		rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Inner", FSName: "Inner (USA)", Folder: true,
			Files: []fakeromm.FileSpec{{Name: "Inner (USA).cue", Data: cueSheet("gamelist.xml")}, {Name: "gamelist.xml", Data: romBytes("inner", 2352*4)}}})
		before := snapshot(t, r)
		res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Join(RomsRoot, "psx", "Inner (USA)")
		if res.Path != dir+"/Inner (USA).cue" || !res.Verified || !res.Listed {
			t.Fatalf("%+v", res)
		}
		if c := changes(before, snapshot(t, r)); !slices.Equal(c, []string{dir, dir + "/Inner (USA).cue", dir + "/gamelist.xml"}) {
			t.Errorf("the install wrote %q", c)
		}
	})
	t.Run("a folder game ES would never list", func(t *testing.T) {
		rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Unlisted", FSName: "Unlisted (USA)", Folder: true,
			Files: []fakeromm.FileSpec{{Name: "Unlisted (USA).iso", Data: romBytes("unlisted", 4096)}, {Name: "readme.txt", Data: []byte("hi")}}})
		games := listed(t, r, "psx")
		before := snapshot(t, r)
		_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
		if err == nil || !strings.Contains(err.Error(), "no file of Unlisted ends in an extension this system takes (.cue .m3u .chd)") {
			t.Fatalf("error %v, want the refusal of a game ES would never list", err)
		}
		if q := contentRequests(r, rom.ID); len(q) != 0 {
			t.Errorf("downloaded before refusing: %d requests", len(q))
		}
		assertNothingLeft(t, r, before, "psx", games)
	})
	for _, tt := range []struct {
		name string
		file fakeromm.FileSpec
	}{
		{"file name climbs out", fakeromm.FileSpec{Name: "../../../../evil.bin", Data: []byte("evil")}},
		{"file folder climbs out", fakeromm.FileSpec{Name: "evil.bin", Dir: "../../..", Data: []byte("evil")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Evil " + tt.name, FSName: "Evil (USA)", Folder: true,
				Files: []fakeromm.FileSpec{{Name: "Evil (USA).cue", Data: cueSheet("Evil (USA).bin")}, {Name: "Evil (USA).bin", Data: []byte("bin")}, tt.file}})
			games := listed(t, r, "psx")
			before := snapshot(t, r)
			_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			if err == nil || !strings.Contains(err.Error(), `climbs out of the game folder with ".."`) || !strings.Contains(err.Error(), "ask the RomM admin to fix the set") {
				t.Fatalf("error %v, want a refusal of the climb that says who fixes it", err)
			}
			assertNothingLeft(t, r, before, "psx", games)
		})
	}
}

func TestInstallArcadeSystems(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	addSystem(t, r, library.System{Name: "fbneo", FullName: "FinalBurn Neo", HardwareType: "arcade", Extensions: []string{".zip", ".7z"}}, "Other.zip")
	arcade, err := r.cab.RomM.AddPlatform(fakeromm.Platform{Slug: "arcade", FSSlug: "arcade", Name: "Arcade", Hashable: true})
	if err != nil {
		t.Fatal(err)
	}
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: arcade.ID, Name: "Metal Slug",
		Files: []fakeromm.FileSpec{{Name: "mslug.zip", Data: makeZip(t, "201-p1.p1", "201-s1.s1", "201-c1.c1")}}})
	for _, tt := range []struct {
		name, system, want string
	}{
		{"without a system", "", "RomM's platform arcade plays in several systems here: say which with system= one of fbneo, mame"},
		{"a system of another platform", "snes", `system "snes" is not one for RomM's platform arcade here: use one of fbneo, mame`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, r)
			_, err := r.in.Install(ctx, Request{ROMID: rom.ID, System: tt.system}, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v\nwant %s", err, tt.want)
			}
			if q := contentRequests(r, rom.ID); len(q) != 0 {
				t.Errorf("downloaded before refusing: %+v", q)
			}
			if c := changes(before, snapshot(t, r)); len(c) > 0 {
				t.Errorf("the refusal changed %q", c)
			}
			assertNothingStaged(t, r)
		})
	}
	t.Run("system=fbneo", func(t *testing.T) {
		before := snapshot(t, r)
		res, err := r.in.Install(ctx, Request{ROMID: rom.ID, System: "fbneo"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.System != "fbneo" || res.Path != "/userdata/roms/fbneo/mslug.zip" || !res.Verified || !res.Listed {
			t.Fatalf("%+v", res)
		}
		// The simulator's mame has an mslug.zip of its own: it is left as it is.
		if c := changes(before, snapshot(t, r)); !slices.Equal(c, []string{res.Path}) {
			t.Errorf("the install wrote %q, want only %s", c, res.Path)
		}
	})
}

func TestInstallHashMismatch(t *testing.T) {
	r := newRig(t)
	bogus := strings.Repeat("0123456789", 4)
	plain := romBytes("mismatch", 8192)
	zipped := makeZip(t, "Mismatch (Europe).md")
	// The zip's real hash is over its contents: take it from RomM's own scan of the same bytes.
	real := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformMegaDrive, Files: []fakeromm.FileSpec{{Name: "Scanned.zip", Data: zipped}}})
	for _, tt := range []struct {
		name, system, file string
		platform           int
		data               []byte
		sha1               string
	}{
		{"plain file", "snes", "Mismatch (USA).sfc", fakeromm.PlatformSNES, plain, sha1Hex(plain)},
		{"zip by its contents", "megadrive", "Mismatch (Europe).zip", fakeromm.PlatformMegaDrive, zipped, real.SHA1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: tt.platform, Name: "Mismatch " + tt.name,
				Files: []fakeromm.FileSpec{{Name: tt.file, Data: tt.data}}, Hashes: &fakeromm.Hashes{SHA1: bogus}})
			games := listed(t, r, tt.system)
			before := snapshot(t, r)
			_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			want := fmt.Sprintf("%s does not match RomM: sha1 %s here, %s in RomM; not installed (try again; if it persists, RomM's copy may need a rescan)",
				tt.file, tt.sha1, bogus)
			if err == nil || err.Error() != want {
				t.Fatalf("error %v\nwant %s", err, want)
			}
			assertNothingLeft(t, r, before, tt.system, games)
		})
	}
}

func TestInstallWithoutHashes(t *testing.T) {
	r := newRig(t)
	switchP, err := r.cab.RomM.AddPlatform(fakeromm.Platform{Slug: "switch", FSSlug: "switch", Name: "Nintendo Switch"}) // not Hashable, as in RomM
	if err != nil {
		t.Fatal(err)
	}
	addSystem(t, r, library.System{Name: "switch", FullName: "Switch", Extensions: []string{".nsp", ".xci"}}, "Other.nsp")
	for _, tt := range []struct {
		name string
		spec fakeromm.ROMSpec
		path string
	}{
		{"hashing off on the server", fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, NoHashes: true,
			Files: []fakeromm.FileSpec{{Name: "Unhashed (USA).sfc", Data: romBytes("unhashed", 4096)}}}, "/userdata/roms/snes/Unhashed (USA).sfc"},
		{"a platform RomM does not hash", fakeromm.ROMSpec{PlatformID: switchP.ID,
			Files: []fakeromm.FileSpec{{Name: "Nacho (World).nsp", Data: romBytes("nacho", 4096)}}}, "/userdata/roms/switch/Nacho (World).nsp"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rom := addROM(t, r, tt.spec)
			res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
			if err != nil {
				t.Fatal(err)
			}
			file := tt.spec.Files[0].Name
			note := "RomM has no hash for " + file + " (its platform is not hashed, or hashing is off on the server)"
			if res.Path != tt.path || res.Verified || res.VerifyNote != note || !res.Listed {
				t.Fatalf("%+v\nwant unverified at %s, note %q", res, tt.path, note)
			}
			rec, err := Kept{DB: r.store}.InstallAt(tt.path)
			if err != nil || rec.Verified {
				t.Errorf("record %+v, %v: want it unverified", rec, err)
			}
		})
	}
}

// bombMiB is more than the 1 GiB a zip of about 1 MiB may expand to when verified.
const bombMiB = 1100

func TestInstallZipBomb(t *testing.T) {
	r := newRig(t)
	z := bombZip(t, bombMiB, bombMiB<<20)
	if len(z) > 4<<20 {
		t.Fatalf("the bomb is %d bytes", len(z))
	}
	// What RomM records for it does not matter: the installer stops before comparing.
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Bomb",
		Files: []fakeromm.FileSpec{{Name: "Bomb (USA).zip", Data: z}}, Hashes: &fakeromm.Hashes{SHA1: strings.Repeat("ab", 20)}})
	games := listed(t, r, "snes")
	before := snapshot(t, r)
	_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
	want := "Bomb (USA).zip expands beyond 1 GiB when read (an archive that unpacks without end?): not installed"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	assertNothingLeft(t, r, before, "snes", games)
}

// TestInstallZipBombHidingItsSize: a bomb whose headers declare 1 MiB cannot be read past it (Go's
// zip reader, like Python's, refuses more than the declared size), so RomM hashes it raw, as an
// archive it cannot read, and the installer does the same: the install is what RomM has, and
// nothing is expanded beyond the declared MiB.
func TestInstallZipBombHidingItsSize(t *testing.T) {
	r := newRig(t)
	z := bombZip(t, bombMiB, 1<<20)
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Name: "Hidden Bomb",
		Files: []fakeromm.FileSpec{{Name: "Hidden Bomb (USA).zip", Data: z}}})
	if rom.SHA1 != sha1Hex(z) || len(rom.Files[0].ArchiveMembers) != 0 {
		t.Fatalf("RomM hashed the hidden bomb by contents (%s, %d members), not raw", rom.SHA1, len(rom.Files[0].ArchiveMembers))
	}
	start := time.Now()
	res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
	if err != nil || !res.Verified {
		t.Fatalf("%+v, %v", res, err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("verifying a 1 MiB zip took %v: it was expanded", took)
	}
}

func TestInstallResumesAfterADrop(t *testing.T) {
	r := newRig(t)
	r.in.Download.Sleep = noSleep
	data := romBytes("dropped", 2<<20)
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "Dropped (USA).sfc", Data: data}}})
	half := int64(len(data) / 2)
	r.cab.RomM.SetFaults(fakeromm.Faults{Path: fmt.Sprintf("/api/roms/%d/content/", rom.ID), CutAfter: half, Times: 1})
	res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || !res.Listed || res.Path != "/userdata/roms/snes/Dropped (USA).sfc" {
		t.Fatalf("%+v", res)
	}
	if got, err := os.ReadFile(r.cab.Path(res.Path)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the resumed file is not RomM's (%v)", err)
	}
	q := contentRequests(r, rom.ID)
	if len(q) != 2 || q[0].Range != "" {
		t.Fatalf("content requests %+v, want two, the first without a Range", q)
	}
	var from int64
	if _, err := fmt.Sscanf(q[1].Range, "bytes=%d-", &from); err != nil || from <= 0 || from > half {
		t.Errorf("the resume asked for %q, want bytes=N- with 0 < N <= %d", q[1].Range, half)
	}
}

func TestInstallRomMTooSlow(t *testing.T) {
	r := newRig(t)
	r.in.Download = romm.DownloadOptions{IdleTimeout: 200 * time.Millisecond, MaxRetries: 1, Sleep: noSleep}
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "Slow (USA).sfc", Data: romBytes("slow", 65536)}}})
	games := listed(t, r, "snes")
	before := snapshot(t, r)
	r.cab.RomM.SetFaults(fakeromm.Faults{Path: fmt.Sprintf("/api/roms/%d/content/", rom.ID), Latency: time.Minute})
	start := time.Now()
	_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
	took := time.Since(start)
	r.cab.RomM.SetFaults(fakeromm.Faults{})
	want := "download Slow (USA).sfc from RomM: RomM sent nothing for 200ms during the download of Slow (USA).sfc (at byte 0 of 65536), 2 times in a row: check the network to RomM, then try again"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v\nwant %s…", err, want)
	}
	if took > 10*time.Second {
		t.Errorf("the install took %v to give up on a silent RomM", took)
	}
	if q := contentRequests(r, rom.ID); len(q) != 2 {
		t.Errorf("%d content requests, want 2 (one retry)", len(q))
	}
	assertNothingLeft(t, r, before, "snes", games)
}

func TestInstallDiskFull(t *testing.T) {
	t.Run("too little room to start", func(t *testing.T) {
		r := newRig(t)
		dir := r.cab.Path("/userdata/roms/snes")
		mountTmpfs(t, dir, 16<<20)
		rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "Roomy (USA).sfc", Data: romBytes("roomy", 1<<20)}}})
		_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
		var se *stage.SpaceError
		if !errors.As(err, &se) {
			t.Fatalf("error %v, want a *stage.SpaceError", err)
		}
		// 1 MiB + 5 % + 64 MiB needed, 16 MiB free: 50 MiB to free (rounded up).
		want := "free 50 MiB more on " + dir + ": the game needs 66 MiB and 16 MiB is free"
		if err.Error() != want || se.Where != dir {
			t.Errorf("error %q\nwant %q", err, want)
		}
		if q := contentRequests(r, rom.ID); len(q) != 0 {
			t.Errorf("downloaded without the room: %+v", q)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("left in the full folder: %v", left)
		}
	})
	t.Run("full at 70 percent", func(t *testing.T) {
		r := newRig(t)
		dir := r.cab.Path("/userdata/roms/snes")
		mountTmpfs(t, dir, 80<<20)
		// ES keeps listing snes while the tmpfs hides its games: one game on it.
		if err := os.WriteFile(filepath.Join(dir, "Placeholder.sfc"), []byte("ROM"), 0o644); err != nil {
			t.Fatal(err)
		}
		data := romBytes("full", 8<<20) // 8 MiB + 5 % + 64 MiB < 80 MiB: the check passes
		rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "Full (USA).sfc", Data: data}}})
		games := listed(t, r, "snes")
		before := snapshot(t, r)
		filler := filepath.Join(dir, "filler")
		var once sync.Once
		var fillErr error
		_, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, func(p Progress) {
			if p.Phase == "" && p.Done*10 >= p.Total*7 { // a byte count, 70 % in
				once.Do(func() { fillErr = fillUp(filler) })
			}
		})
		if fillErr != nil {
			t.Fatal(fillErr)
		}
		want := "the disk filled up during the download of Full (USA).sfc: nothing of the game is kept; free some space and install again (no space left on device)"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v\nwant %s", err, want)
		}
		var left []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			left = append(left, e.Name())
		}
		if !slices.Equal(left, []string{"Placeholder.sfc", "filler"}) {
			t.Errorf("the system folder holds %q, want the placeholder and the filler only", left)
		}
		os.Remove(filler)
		assertNothingLeft(t, r, before, "snes", games)
	})
}

func TestInstallTwoAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name   string
		second func(r *rig) *Installer
	}{
		{"one installer, two goroutines", func(r *rig) *Installer { return r.in }},
		{"two installers, one lock file", func(r *rig) *Installer {
			return &Installer{RomM: r.in.RomM, RomMURL: r.in.RomMURL, ES: r.in.ES, Meta: r.in.Meta, Records: Kept{DB: r.store},
				Path: r.cab.Path, LockFile: r.in.LockFile}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			ctx := context.Background()
			first := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "First (USA).sfc", Data: romBytes("first", 1<<20)}}})
			second := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformSNES, Files: []fakeromm.FileSpec{{Name: "Second (USA).sfc", Data: romBytes("second", 1<<20)}}})
			// The first install's download waits on RomM: the second comes while it holds the lock.
			r.cab.RomM.SetFaults(fakeromm.Faults{Path: fmt.Sprintf("/api/roms/%d/content/", first.ID), Latency: 300 * time.Millisecond, Times: 1})
			type outcome struct {
				res Result
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := r.in.Install(ctx, Request{ROMID: first.ID}, nil)
				done <- outcome{res, err}
			}()
			cabinettest.Await(t, "the first install to start its download", nil, func() bool { return len(contentRequests(r, first.ID)) > 0 })
			in2 := tt.second(r)
			_, err := in2.Install(ctx, Request{ROMID: second.ID}, nil)
			if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "try again when it is done") {
				t.Fatalf("the second install: %v, want ErrBusy", err)
			}
			if q := contentRequests(r, second.ID); len(q) != 0 {
				t.Errorf("the refused install downloaded: %+v", q)
			}
			o := <-done
			if o.err != nil || !o.res.Verified || o.res.Path != "/userdata/roms/snes/First (USA).sfc" {
				t.Fatalf("the first install: %+v, %v", o.res, o.err)
			}
			if _, err := os.Stat(r.cab.Path("/userdata/roms/snes/Second (USA).sfc")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused install left its file: %v", err)
			}
			assertNothingStaged(t, r)
			// Once the first is done, the second goes through.
			res, err := in2.Install(ctx, Request{ROMID: second.ID}, nil)
			if err != nil || !res.Verified {
				t.Fatalf("the second install after the first: %+v, %v", res, err)
			}
			for _, f := range []string{"First (USA).sfc", "Second (USA).sfc"} {
				rom := first
				if f[0] == 'S' {
					rom = second
				}
				if got, err := os.ReadFile(r.cab.Path("/userdata/roms/snes/" + f)); err != nil || !bytes.Equal(got, rom.Files[0].Bytes) {
					t.Errorf("%s is not its own ROM's bytes (%v)", f, err)
				}
			}
		})
	}
}

func TestInstallSkipsManuals(t *testing.T) {
	r := newRig(t)
	bin := romBytes("lima", 2352*8)
	rom := addROM(t, r, fakeromm.ROMSpec{PlatformID: fakeromm.PlatformPSX, Name: "Lima Lights", FSName: "Lima Lights (USA)", Folder: true,
		Files: []fakeromm.FileSpec{
			{Name: "Lima Lights (USA).cue", Data: cueSheet("Lima Lights (USA).bin")},
			{Name: "Lima Lights (USA).bin", Data: bin},
			{Name: "Lima Lights Manual.pdf", Dir: "manual", Category: "manual", Data: []byte("%PDF-1.4 the manual")},
			{Name: "Lima Lights OST.flac", Dir: "soundtrack", Category: "soundtrack", Data: romBytes("ost", 5000)},
		}})
	before := snapshot(t, r)
	res, err := r.in.Install(context.Background(), Request{ROMID: rom.ID}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := "/userdata/roms/psx/Lima Lights (USA)"
	if res.Files != 2 || res.Path != dir+"/Lima Lights (USA).cue" || !res.Verified || !res.Listed {
		t.Fatalf("%+v", res)
	}
	if c := changes(before, snapshot(t, r)); !slices.Equal(c, []string{dir, dir + "/Lima Lights (USA).bin", dir + "/Lima Lights (USA).cue"}) {
		t.Errorf("the install wrote %q, want the two game files only", c)
	}
	extras := map[string]bool{}
	for _, f := range rom.Files {
		if f.Category != "" {
			extras[fmt.Sprint(f.ID)] = true
		}
	}
	for _, q := range contentRequests(r, rom.ID) {
		if extras[q.Query.Get("file_ids")] {
			t.Errorf("downloaded an extra: %s?%s", q.Path, q.Query.Encode())
		}
	}
}
