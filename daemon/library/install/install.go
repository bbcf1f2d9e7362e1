// Package install puts a game of the household's RomM onto the cabinet and takes it off again.
//
// An install picks the Batocera system of the ROM's platform, checks the free space, downloads the
// ROM's game files (resuming after a dropped connection), verifies each file the way RomM hashed
// it (an archive by its contents), stages the whole set out of EmulationStation's sight
// (package stage) and moves it into /userdata/roms/<system>/ at once, then has ES reload its game
// lists, waits until ES lists the game and sets its name, description, year, genre, players and
// cover through ES's own metadata routes. A record in the store says what was written, so that an
// uninstall removes only Cabinet's own, unchanged files, and so that the on-cabinet marking and
// the RomM reporting know the game's RomM id.
//
// One install runs at a time on a cabinet (a lock file shared by the daemon and `cabinet call`).
package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install/stage"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// RomM is what an install uses of the RomM client.
type RomM interface {
	ROM(ctx context.Context, id int) (romm.ROM, error)
	DownloadFile(ctx context.Context, romID int, f romm.File, dst *os.File, o romm.DownloadOptions) (int64, error)
	Cover(ctx context.Context, r romm.ROM) ([]byte, string, error)
}

// ES is what an install uses of EmulationStation's API.
type ES interface {
	Systems(ctx context.Context) ([]es.System, error)
	RunningGame(ctx context.Context) (*es.Game, error)
	ReloadGames(ctx context.Context) error
	GameLocal(ctx context.Context, system, id string) (es.Game, error)
}

// Metadata sets a game's metadata and media in ES (es.MetadataWriter).
type Metadata interface {
	SetMetadata(ctx context.Context, system, id string, values map[string]string) error
	UploadMedia(ctx context.Context, system, id, kind, contentType string, data []byte) error
}

// Records keeps the install records (the store, store.Store).
type Records interface {
	PutInstall(Install) error
	InstallAt(path string) (Install, error)
	Installs() ([]Install, error)
	DeleteInstall(path string) error
}

// Screen shows a line on the cabinet (an ES toast, RetroArch's message during a game).
type Screen interface {
	Show(ctx context.Context, text string) error
}

// RomsRoot is where Batocera keeps the system folders.
const RomsRoot = "/userdata/roms"

// DefaultMaxBytes is the default cap on one install: above the largest games Batocera runs
// (a PS3 or Wii U game), far below what a server's wrong size would make it.
const DefaultMaxBytes = 64 << 30

// Installer installs and uninstalls games. Its fields are its dependencies; the zero values of
// the optional ones are documented.
type Installer struct {
	RomM    RomM
	RomMURL string // recorded with each install
	ES      ES
	Meta    Metadata
	Records Records
	// Platforms maps RomM platforms to Batocera folders; nil: the default table.
	Platforms *platforms.Map
	// Path maps a cabinet path to this machine's (cabinet.paths.root in tests); nil: the same.
	Path func(string) string
	// Screen shows the progress on the cabinet; nil: none.
	Screen Screen
	// LockFile is held while an install or uninstall runs ("" : the in-process lock only).
	LockFile string
	// ListWait bounds the wait for ES to list a game after a reload; 0 means 30 s.
	ListWait time.Duration
	// ToastEvery is the least time between two progress toasts; 0 means 5 s.
	ToastEvery time.Duration
	// MaxBytes caps what one install writes (cabinet.library.max_install_bytes); 0 means
	// DefaultMaxBytes. The free space of the system folder's disk, less a reserve, caps it too.
	MaxBytes int64
	// Download tunes each file's download (retries, idle timeout); its Progress and Budget are
	// replaced by the installer's own. The zero value is romm's defaults.
	Download romm.DownloadOptions
	Now      func() time.Time

	mu sync.Mutex
}

// Request is one install.
type Request struct {
	ROMID  int
	System string // needed only when the platform maps to several folders ES lists
}

// Result is what an install did.
type Result struct {
	Outcome string // "done", or "unchanged" when the game was installed already
	System  string
	GameID  string // ES's id; "" while ES has not listed it
	Path    string // the game's path as ES lists it
	Name    string
	Files   int
	Bytes   int64
	// Verified: every file matched RomM's hashes. VerifyNote says why not.
	Verified   bool
	VerifyNote string
	// Listed: ES lists the game with its metadata. False while a game runs (ES reloads after it).
	Listed   bool
	Sent     []string
	Warnings []string
}

// Phases of an install, in order; Progress.Phase names the one beginning.
const (
	PhaseRead     = "read"     // reading the ROM from RomM
	PhaseDownload = "download" // downloading File, the Index-th of Files
	PhaseVerify   = "verify"   // checking File against RomM's hashes
	PhaseMove     = "move"     // moving the files into the system folder at once
	PhaseList     = "list"     // having ES list the game, with RomM's metadata and cover
)

// Progress is reported when a phase begins (Phase set) and as the files download (Phase empty).
// Done and Total always count the bytes of the game's files.
type Progress struct {
	Phase        string
	Name         string // the game; "" before RomM answered
	File         string // the file of a download or verify phase
	Index, Files int    // which file (from 1), of how many
	Done, Total  int64
}

// Errors an install answers that callers tell apart.
var (
	// ErrBusy: another install or uninstall runs.
	ErrBusy = errors.New("another install or uninstall is running on the cabinet: try again when it is done")
	// ErrNotInstalled: uninstall of a game Cabinet did not install.
	ErrNotInstalled = errors.New("Cabinet did not install this game, so it does not remove it: remove it yourself if you want it gone")
)

func (in *Installer) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

func (in *Installer) local(p string) string {
	if in.Path != nil {
		return in.Path(p)
	}
	return p
}

// lock takes the in-process lock and the lock file; the release undoes both.
func (in *Installer) lock() (func(), error) {
	if !in.mu.TryLock() {
		return nil, ErrBusy
	}
	if in.LockFile == "" {
		return in.mu.Unlock, nil
	}
	if err := os.MkdirAll(filepath.Dir(in.LockFile), 0o755); err != nil {
		in.mu.Unlock()
		return nil, fmt.Errorf("take the install lock: %w", err)
	}
	f, err := os.OpenFile(in.LockFile, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		in.mu.Unlock()
		return nil, fmt.Errorf("take the install lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		in.mu.Unlock()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("take the install lock: %w", err)
	}
	return func() { f.Close(); in.mu.Unlock() }, nil
}

// Install puts the RomM ROM of r on the cabinet; progress (nil: none) follows the download.
func (in *Installer) Install(ctx context.Context, r Request, progress func(Progress)) (Result, error) {
	unlock, err := in.lock()
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	if r.ROMID <= 0 {
		return Result{}, errROMID(r.ROMID)
	}
	if done, ok, err := in.already(ctx, r); ok || err != nil {
		return done, err
	}
	report := func(p Progress) {
		if progress != nil {
			progress(p)
		}
	}
	report(Progress{Phase: PhaseRead})
	rom, system, plan, err := in.prepare(ctx, r)
	if err != nil {
		return Result{}, err
	}
	sysDir := in.local(path.Join(RomsRoot, system))
	if err := in.fits(rom, plan); err != nil {
		return Result{}, err
	}
	if err := stage.NeedSpace(sysDir, uint64(plan.bytes)); err != nil {
		return Result{}, err
	}
	budget, err := in.budget(sysDir)
	if err != nil {
		return Result{}, err
	}
	res := Result{Outcome: "done", System: system, Name: rom.Name, Files: len(plan.files), Bytes: plan.bytes}
	cabinetDir := path.Join(RomsRoot, system)
	res.Path = path.Join(cabinetDir, plan.gamePath)
	if _, err := os.Lstat(in.local(res.Path)); err == nil {
		return Result{}, fmt.Errorf("%s is on the cabinet already and Cabinet did not install it: it leaves it as it is", res.Path)
	}
	st, err := stage.Begin(sysDir, fmt.Sprintf("romm-%d", rom.ID), stageMeta(in.RomMURL, rom))
	if err != nil {
		return Result{}, err
	}
	committed := false
	defer func() {
		if !committed {
			st.Abort()
		}
	}()
	verified, notes := true, []string(nil)
	var written []InstalledFile
	tp := in.toaster(ctx, rom.Name, plan.bytes, progress)
	var before int64
	phase := func(ph string, i int, file string) { // i: the file's index, -1 for none
		report(Progress{Phase: ph, Name: rom.Name, File: file, Index: i + 1, Files: len(plan.files), Done: before, Total: plan.bytes})
	}
	for i, pf := range plan.files {
		part, err := st.PartPath(pf.rel)
		if err != nil {
			return Result{}, err
		}
		phase(PhaseDownload, i, pf.file.Name)
		got, err := in.download(ctx, rom.ID, pf.file, part, budget-before, func(done int64) { tp(before + done) })
		if err != nil {
			return Result{}, err
		}
		before += got
		phase(PhaseVerify, i, pf.file.Name)
		ok, note, err := verify(ctx, part, pf.file, plan.folder != "")
		if err != nil {
			return Result{}, err
		}
		if !ok {
			verified = false
			notes = append(notes, note)
		}
		sum, size, err := rawSHA1(part)
		if err != nil {
			return Result{}, err
		}
		written = append(written, InstalledFile{Path: path.Join(cabinetDir, pf.final), Size: size, SHA1: sum})
	}
	phase(PhaseMove, -1, "")
	c := stage.Commit{Files: plan.rels(), Folder: plan.folder}
	if plan.playlist != nil {
		c.Playlist = plan.playlist
	}
	if _, err := st.Commit(c); err != nil {
		if errors.Is(err, stage.ErrExists) {
			return Result{}, fmt.Errorf("a file of %s is on the cabinet already and Cabinet did not write it: it leaves it as it is (%w)", rom.Name, err)
		}
		return Result{}, fmt.Errorf("move %s into %s: %w", rom.Name, cabinetDir, err)
	}
	committed = true
	if plan.playlist != nil {
		pl := path.Join(cabinetDir, plan.playlist.Name)
		sum, size, err := rawSHA1(in.local(pl))
		if err == nil {
			written = append(written, InstalledFile{Path: pl, Size: size, SHA1: sum})
		}
	}
	res.Verified = verified
	if !verified {
		res.VerifyNote = strings.Join(notes, "; ")
	}
	rec := Install{Path: res.Path, System: system, ROMID: rom.ID, RomM: in.RomMURL, Name: rom.Name, Files: written,
		Bytes: plan.bytes, Verified: verified, InstalledAt: in.now().UTC()}
	if plan.folder != "" {
		rec.Folder = path.Join(cabinetDir, plan.folder)
	}
	if err := in.Records.PutInstall(rec); err != nil {
		return Result{}, fmt.Errorf("%s is on the cabinet, but its install record could not be saved (uninstall will not know it): %w", rom.Name, err)
	}
	in.show(ctx, fmt.Sprintf("Installed %s", untrusted.Clean(rom.Name, 80)))
	phase(PhaseList, -1, "")
	listed, sent, warn, err := in.finishES(ctx, &rec, rom)
	res.Sent = append(res.Sent, sent...)
	res.Warnings = append(res.Warnings, warn...)
	if err != nil {
		res.Warnings = append(res.Warnings, "EmulationStation: "+untrusted.Clean(err.Error(), 300))
	}
	res.Listed, res.GameID = listed, rec.GameID
	return res, nil
}

// already answers an install of a ROM Cabinet installed before: unchanged, when its files are
// still there.
func (in *Installer) already(ctx context.Context, r Request) (Result, bool, error) {
	all, err := in.Records.Installs()
	if err != nil {
		return Result{}, false, fmt.Errorf("read the install records: %w", err)
	}
	for _, rec := range all {
		if rec.ROMID != r.ROMID || rec.RomM != in.RomMURL || (r.System != "" && rec.System != r.System) {
			continue
		}
		if _, err := os.Stat(in.local(rec.Path)); err != nil {
			continue // gone: install again
		}
		res := Result{Outcome: "unchanged", System: rec.System, GameID: rec.GameID, Path: rec.Path, Name: rec.Name,
			Files: len(rec.Files), Bytes: rec.Bytes, Verified: rec.Verified, Listed: rec.Listed}
		if !rec.Listed {
			if rom, err := in.RomM.ROM(ctx, rec.ROMID); err == nil {
				listed, sent, warn, err := in.finishES(ctx, &rec, rom)
				res.Listed, res.GameID, res.Sent, res.Warnings = listed, rec.GameID, sent, warn
				if err != nil {
					res.Warnings = append(res.Warnings, "EmulationStation: "+untrusted.Clean(err.Error(), 300))
				}
			}
		}
		return res, true, nil
	}
	return Result{}, false, nil
}

// pickSystem is the Batocera folder for the ROM: the one its platform maps to among those ES
// lists, or want when the platform maps to several.
func (in *Installer) pickSystem(ctx context.Context, rom romm.ROM, want string) (string, []string, error) {
	systems, err := in.ES.Systems(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("ask EmulationStation for its systems: %w", err)
	}
	listed := map[string]bool{}
	exts := map[string][]string{}
	for _, s := range systems {
		listed[s.Name] = true
		exts[s.Name] = s.Extensions
	}
	m := in.Platforms
	if m == nil {
		m = platforms.Default()
	}
	cands := m.Candidates(rom.PlatformSlug, rom.PlatformFSSlug, listed)
	platform := untrusted.Clean(rom.PlatformSlug, 60)
	switch {
	case len(cands) == 0 && want != "" && listed[want]:
		return "", nil, fmt.Errorf("RomM's platform %s does not map to the system %s; map it with cabinet.romm.platform_map=%s:%s if its games play there",
			platform, want, platform, want)
	case len(cands) == 0:
		return "", nil, fmt.Errorf("no system EmulationStation lists on this cabinet takes RomM's platform %s: add one of its games by hand first, or map it with cabinet.romm.platform_map=%s:<folder>",
			platform, platform)
	case want != "":
		for _, c := range cands {
			if c == want {
				return want, exts[want], nil
			}
		}
		return "", nil, fmt.Errorf("system %q is not one for RomM's platform %s here: use one of %s", untrusted.Clean(want, 40), platform, strings.Join(cands, ", "))
	case len(cands) > 1:
		return "", nil, fmt.Errorf("RomM's platform %s plays in several systems here: say which with system= one of %s", platform, strings.Join(cands, ", "))
	}
	return cands[0], exts[cands[0]], nil
}

// download writes one file into part, at most budget bytes, and returns how many it wrote; the
// RomM client resumes it with Range after a dropped connection. An install that fails removes its
// stage, so the next one starts afresh, and its error says so.
func (in *Installer) download(ctx context.Context, romID int, f romm.File, part string, budget int64, progress func(int64)) (int64, error) {
	name := untrusted.Clean(f.Name, 100)
	if budget <= 0 {
		return 0, fmt.Errorf("download %s from RomM: the files before it used all %s this install may write; nothing of the game is kept", name, sizeText(in.maxBytes()))
	}
	dst, err := os.OpenFile(part, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", name, err)
	}
	defer dst.Close()
	o := in.Download
	o.Budget = budget
	o.Progress = func(done, _ int64) { progress(done) }
	n, err := in.RomM.DownloadFile(ctx, romID, f, dst, o)
	if err != nil {
		switch {
		case errors.Is(err, syscall.ENOSPC):
			return n, diskFull(f.Name)
		case errors.Is(err, romm.ErrTooLarge):
			return n, fmt.Errorf("download %s from RomM: %w; an install writes at most the free space of the disk less 64 MiB, and at most cabinet.library.max_install_bytes (%s): nothing of the game is kept",
				name, err, sizeText(in.maxBytes()))
		}
		return n, fmt.Errorf("download %s from RomM: %w; nothing of the game is kept: installing again downloads it afresh", name, err)
	}
	if err := dst.Sync(); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return n, diskFull(f.Name)
		}
		return n, fmt.Errorf("write %s: %w", name, err)
	}
	return n, nil
}

func (in *Installer) maxBytes() int64 {
	if in.MaxBytes > 0 {
		return in.MaxBytes
	}
	return DefaultMaxBytes
}

// fits refuses a game whose listed size is over the install cap, before anything is written.
func (in *Installer) fits(rom romm.ROM, p plan) error {
	if p.bytes > in.maxBytes() {
		return fmt.Errorf("RomM lists %s for %s, more than the %s an install may write (cabinet.library.max_install_bytes): raise it if the game is really that large",
			sizeText(p.bytes), untrusted.Clean(rom.Name, 100), sizeText(in.maxBytes()))
	}
	return nil
}

// budget is what the install may write in all: the cap, and the free space of dir's disk less
// stage.Reserve. The downloads are held to it whatever sizes RomM lists, or when it lists none.
func (in *Installer) budget(dir string) (int64, error) {
	room, err := stage.Room(dir)
	if err != nil {
		return 0, err
	}
	return min(room, in.maxBytes()), nil
}

// sizeText is n in the unit a person reads: bytes below 1 MiB, else MiB or GiB with one decimal.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// diskFull is a download that ran out of room after NeedSpace let it start (something else wrote
// to the share meanwhile).
func diskFull(name string) error {
	return fmt.Errorf("the disk filled up during the download of %s: nothing of the game is kept; free some space and install again (%w)",
		untrusted.Clean(name, 100), syscall.ENOSPC)
}

// toaster turns byte counts into progress reports, and into a toast on the cabinet at most every
// ToastEvery ("Installing Chrono Trigger… 40 %").
func (in *Installer) toaster(ctx context.Context, name string, total int64, progress func(Progress)) func(int64) {
	every := in.ToastEvery
	if every <= 0 {
		every = 5 * time.Second
	}
	var last time.Time
	clean := untrusted.Clean(name, 80)
	return func(done int64) {
		if progress != nil {
			progress(Progress{Name: name, Done: done, Total: total})
		}
		if now := in.now(); total > 0 && now.Sub(last) >= every {
			last = now
			in.show(ctx, fmt.Sprintf("Installing %s… %d %%", clean, done*100/total))
		}
	}
}

func (in *Installer) show(ctx context.Context, text string) {
	if in.Screen == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = in.Screen.Show(sctx, text) // the screen is a courtesy: the install does not wait on it
}

// stageMeta is the stage's install.json: enough for doctor to say what a leftover was.
func stageMeta(url string, rom romm.ROM) []byte {
	return []byte(fmt.Sprintf("{\"rom_id\":%d,\"name\":%q,\"romm\":%q}\n", rom.ID, untrusted.Clean(rom.Name, 200), url))
}

// prepare reads the ROM from RomM and decides where it goes and what is written: what Install
// does before writing anything, and all that Plan does.
func (in *Installer) prepare(ctx context.Context, r Request) (romm.ROM, string, plan, error) {
	rom, err := in.RomM.ROM(ctx, r.ROMID)
	if err != nil {
		return romm.ROM{}, "", plan{}, fmt.Errorf("read ROM %d from RomM: %w", r.ROMID, err)
	}
	system, exts, err := in.pickSystem(ctx, rom, r.System)
	if err != nil {
		return romm.ROM{}, "", plan{}, err
	}
	p, err := planFiles(rom, exts)
	if err != nil {
		return romm.ROM{}, "", plan{}, err
	}
	return rom, system, p, nil
}

func errROMID(id int) error {
	return fmt.Errorf("rom_id must be a RomM ROM id (a positive number), got %d", id)
}

// Plan says what Install would do, writing nothing and downloading nothing (a dry run).
func (in *Installer) Plan(ctx context.Context, r Request) (Result, error) {
	if r.ROMID <= 0 {
		return Result{}, errROMID(r.ROMID)
	}
	rom, system, p, err := in.prepare(ctx, r)
	if err != nil {
		return Result{}, err
	}
	if err := in.fits(rom, p); err != nil {
		return Result{}, err
	}
	res := Result{Outcome: "dry_run", System: system, Name: rom.Name, Files: len(p.files), Bytes: p.bytes,
		Path: path.Join(RomsRoot, system, p.gamePath)}
	for _, f := range p.files {
		res.Sent = append(res.Sent, fmt.Sprintf("GET /api/roms/%d/content/%s?file_ids=%d", rom.ID, untrusted.Clean(f.file.Name, 200), f.file.ID))
	}
	res.Sent = append(res.Sent, "GET /reloadgames")
	if err := stage.NeedSpace(in.local(path.Join(RomsRoot, system)), uint64(p.bytes)); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
	return res, nil
}

// Leftovers are the stages of installs that did not finish (a crash, a kill, a power cut): never
// listed by ES, removed by CleanLeftovers, reported by `cabinet doctor`.
func (in *Installer) Leftovers() ([]stage.Leftover, error) {
	return stage.Leftovers(in.local(RomsRoot))
}

// CleanLeftovers removes what unfinished installs left, when no install runs (the daemon does it
// at start; the next install of the same ROM downloads it again).
func (in *Installer) CleanLeftovers() (int, error) {
	unlock, err := in.lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	left, err := in.Leftovers()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, l := range left {
		if err := l.Remove(); err != nil {
			return n, fmt.Errorf("remove the unfinished install in %s: %w", l.Dir, err)
		}
		n++
	}
	return n, nil
}
