// Package savesync keeps the cabinet's game saves in step with the household's RomM through
// RomM's own sync protocol (POST /api/sync/negotiate, then uploads and downloads per save), the
// way RomM's handheld clients do, so a game started on the cabinet continues on a handheld and
// back.
//
// What it syncs: the battery save RetroArch keeps for a game (Batocera's configgen sets
// RetroArch's savefile_directory to /userdata/saves/<system> with sort_savefiles_enable off, so
// the file is /userdata/saves/<system>/<ROM stem>.srm), in RomM's slot "autosave" — the slot
// RomM's handheld client grout uses (its default save slot, which Argosy matches), so saves pair
// across devices; and, when asked, the auto state (<ROM stem>.state.auto) in a slot of its own.
//
// Its promises: a file a download would replace is copied to Cabinet's backup folder first (and
// the download is abandoned if that copy fails); every write is temp + fsync + rename after the
// bytes matched RomM's content_hash; the running game's files are never touched; a change on
// both sides is never settled silently: the local save stays, RomM's is kept beside the backups,
// and the household is told (Conflict).
package savesync

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind is one kind of file synced for a game: its RomM slot and its name on the cabinet.
type Kind struct {
	// Slot is RomM's slot: saves pair between devices on (rom_id, slot).
	Slot string
	// Suffix follows the ROM's stem in the file's name (".srm").
	Suffix string
	// Accept are the extensions of RomM's file names this kind takes (another device's battery
	// save may be a .sav: the same bytes, named by its emulator).
	Accept []string
	// Label names the kind to the household.
	Label string
}

// The kinds.
var (
	// Battery is the game's own save (SRAM, memory card): RetroArch's .srm, RomM's "autosave" slot
	// (grout's default slot, internal/savesync in rommapp/grout).
	Battery = Kind{Slot: "autosave", Suffix: ".srm", Accept: []string{".srm", ".sav"}, Label: "save"}
	// AutoState is RetroArch's auto save state (cabinet.romm.sync_states=1 only): states are tied
	// to the core's version, so only cabinets and clients running the same core load them.
	AutoState = Kind{Slot: "cabinet-state-auto", Suffix: ".state.auto", Accept: []string{".auto"}, Label: "auto state"}
)

// KindOf is the kind synced in slot, false for a slot Cabinet does not sync.
func KindOf(slot string) (Kind, bool) {
	for _, k := range []Kind{Battery, AutoState} {
		if k.Slot == slot {
			return k, true
		}
	}
	return Kind{}, false
}

// Limits on what is synced.
const (
	// MaxSaveBytes bounds one save either way: a battery save is at most a few hundred KiB (a
	// PlayStation memory card 128 KiB, an N64 flash 128 KiB), a state a few MiB.
	MaxSaveBytes = 64 << 20
	// maxName bounds a file name (the file systems' own limit).
	maxName = 255
)

// Game is a game on the cabinet that RomM knows.
type Game struct {
	// System is the Batocera system (the roms folder); ROM the game's path as ES lists it.
	System string `json:"system"`
	ROM    string `json:"rom"`
	ROMID  int    `json:"rom_id"`
	// Core is the RetroArch core that last ran it (RomM's emulator field), "" when unknown.
	Core string `json:"core,omitempty"`
	// Name is the game's name, for the household.
	Name string `json:"name,omitempty"`
}

// Stem is the ROM file's name without its extension: RetroArch names the saves after it.
func (g Game) Stem() string {
	b := filepath.Base(g.ROM)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// Title is what the household calls the game.
func (g Game) Title() string {
	if g.Name != "" {
		return g.Name
	}
	return g.Stem()
}

// check refuses a game whose names would put a file anywhere but its system's save folder.
func (g Game) check() error {
	switch {
	case g.ROMID <= 0:
		return errors.New("RomM does not know the game")
	case !plainName(g.System):
		return fmt.Errorf("system %q is not a folder name", g.System)
	case !plainName(g.Stem()) || strings.HasPrefix(g.Stem(), "."):
		return fmt.Errorf("the game's file name %q cannot name a save", filepath.Base(g.ROM))
	}
	return nil
}

// plainName reports whether s is one path element: no separator, no NUL, not . or .., not
// longer than a file name may be.
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && len(s) <= maxName && !strings.ContainsAny(s, "/\\\x00")
}

// Layout is where Batocera keeps saves.
type Layout struct {
	// Saves is /userdata/saves (under cabinet.paths.root in tests).
	Saves string
}

// Path is the file of kind k for game g: <saves>/<system>/<stem><suffix>.
func (l Layout) Path(g Game, k Kind) string {
	return filepath.Join(l.Saves, g.System, g.Stem()+k.Suffix)
}

// BackupDir is Cabinet's own folder of backups and of RomM's side of conflicts.
func (l Layout) BackupDir() string { return filepath.Join(l.Saves, ".cabinet-backup") }

// Local is a save file as it is on the cabinet now.
type Local struct {
	Path    string
	Hash    string // md5, hex: RomM's content_hash of a plain file
	Size    int64
	ModTime time.Time
}

// ErrTooLarge is wrapped by the refusal of a file over MaxSaveBytes.
var ErrTooLarge = errors.New("larger than a save can be")

// ReadLocal hashes the file at path; ok is false when there is none. A directory, a device or a
// file over MaxSaveBytes is an error: it is not a save Cabinet syncs.
func ReadLocal(path string) (l Local, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Local{}, false, nil
	}
	if err != nil {
		return Local{}, false, fmt.Errorf("read the save %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Local{}, false, fmt.Errorf("read the save %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return Local{}, false, fmt.Errorf("the save %s is not a file: move it aside", path)
	}
	if fi.Size() > MaxSaveBytes {
		return Local{}, false, fmt.Errorf("the save %s is %d bytes, %w (%d MiB): it is not synced", path, fi.Size(), ErrTooLarge, MaxSaveBytes>>20)
	}
	h := md5.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxSaveBytes+1))
	if err != nil {
		return Local{}, false, fmt.Errorf("read the save %s: %w", path, err)
	}
	if n > MaxSaveBytes {
		return Local{}, false, fmt.Errorf("the save %s grew past %d MiB while it was read: it is not synced", path, MaxSaveBytes>>20)
	}
	return Local{Path: path, Hash: hex.EncodeToString(h.Sum(nil)), Size: n, ModTime: fi.ModTime()}, true, nil
}

// checkServerName refuses a RomM file name that is not a plain file name of kind k: the
// cabinet never writes under RomM's names, but a name like "../x" or "a/b" says the answer is not
// to be trusted with the player's files.
func checkServerName(name string, k Kind) error {
	switch {
	case !plainName(name):
		return fmt.Errorf("RomM's save name %q is not a file name (a separator, NUL, .. or over %d bytes)", clean(name, 80), maxName)
	case !acceptedExt(name, k):
		return fmt.Errorf("RomM's save %q is not a %s RetroArch reads (%s)", clean(name, 80), k.Label, strings.Join(k.Accept, ", "))
	}
	return nil
}

func acceptedExt(name string, k Kind) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, a := range k.Accept {
		if ext == a {
			return true
		}
	}
	return false
}

// validHash reports whether s looks like an md5 hex digest.
func validHash(s string) bool {
	if len(s) != 32 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// sumOf is RomM's content_hash of b.
func sumOf(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}
