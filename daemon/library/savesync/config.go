package savesync

import (
	"slices"
	"time"
)

// Config is the save sync's configuration (cabinet.romm.sync_* and save_backup*).
type Config struct {
	// Asked: cabinet.romm.sync_saves is on. On: and the cabinet can sync (paired with the RomM
	// of cabinet.romm.url, with the assets scopes); else Problem says what to do.
	Asked, On bool
	Problem   string
	// The RomM and the cabinet's device in it.
	URL, Token, CAFile, DeviceID string
	States                       bool
	// Systems limits the sync to these systems (nil: every covered one).
	Systems  []string
	Keep     int
	MaxBytes int64
	// Saves is /userdata/saves (under cabinet.paths.root).
	Saves string
	// Root is cabinet.paths.root (ROM paths are read under it); PlatformMap the RomM slug to
	// Batocera folder overrides, for finding a game in RomM by name.
	Root        string
	PlatformMap map[string]string
}

// Covers reports whether the sync takes the saves of system: a system whose games Batocera runs
// in RetroArch by default, within cabinet.romm.sync_systems.
func (c Config) Covers(system string) bool {
	if !plainName(system) || Standalone(system) {
		return false
	}
	return len(c.Systems) == 0 || slices.Contains(c.Systems, system)
}

// standalone are Batocera's systems whose default emulator is not RetroArch and keeps its
// saves in a way that does not map to one game (batocera.linux configgen, generators/*):
// Dolphin's shared GameCube cards and Wii NAND, PCSX2's shared memory cards, PPSSPP's folders
// named by the game's id, the PC and console emulators that keep saves inside their own
// trees, and ports. A game of a covered system set to a standalone emulator is left out too
// (Standalone checks the system; the daemon checks the game's emulator).
var standalone = map[string]bool{
	"gamecube": true, "wii": true, "wiiu": true, "ps2": true, "ps3": true, "ps4": true, "psvita": true, "psp": true,
	"switch": true, "xbox": true, "xbox360": true, "3ds": true, "windows": true, "windows_installers": true,
	"steam": true, "flatpak": true, "ports": true, "pico8": true, "model2": true, "model3": true, "triforce": true,
	"chihiro": true, "lindbergh": true, "daphne": true, "singe": true, "vita": true,
}

// Standalone reports whether system is one whose saves Cabinet leaves out.
func Standalone(system string) bool { return standalone[system] }

// StandaloneSystems lists them, sorted (README and doctor).
func StandaloneSystems() []string {
	out := make([]string, 0, len(standalone))
	for s := range standalone {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// States the sync is in (sensor.batocera_save_sync).
const (
	StateOK       = "ok"
	StateSyncing  = "syncing"
	StateConflict = "conflict"
	StateError    = "error"
	StateOff      = "off"
)

// Status is the sync as the household sees it: Home Assistant's sensor, doctor, MCP.
type Status struct {
	State          string      `json:"state"`
	Asked          bool        `json:"asked"`
	On             bool        `json:"on"`
	Problem        string      `json:"problem,omitempty"`
	LastSync       time.Time   `json:"last_sync,omitempty"`
	UploadsToday   int         `json:"uploads_today"`
	DownloadsToday int         `json:"downloads_today"`
	Conflicts      int         `json:"conflicts_waiting"`
	LastError      string      `json:"last_error,omitempty"`
	LastSession    LastSession `json:"last_session"`
	BackupBytes    int64       `json:"backup_bytes"`
	BackupDir      string      `json:"backup_dir"`
	NextTry        time.Time   `json:"next_try,omitempty"`
	Waiting        []Conflict  `json:"conflicts,omitempty"`
	// Hidden are today's downloads that a state Batocera loads at launch hides.
	Hidden []Entry `json:"hidden,omitempty"`
}

// Describe builds the Status from what is kept, syncing (a pass runs now) and the error that
// holds the sync back (RomM unreachable, say), "" when none.
func (k Kept) Describe(cfg Config, syncing bool, held string, backups Backups, now time.Time) Status {
	st := Status{Asked: cfg.Asked, On: cfg.On, Problem: cfg.Problem, BackupDir: backups.Dir}
	if j, err := k.Journal(); err == nil {
		st.LastSync, st.LastError, st.LastSession = j.LastSync, j.LastError, j.LastSession
		if j.Day == now.Format("2006-01-02") {
			st.UploadsToday, st.DownloadsToday = j.Uploads, j.Downloads
		}
		for _, e := range j.History {
			if e.Hidden != "" && now.Sub(e.At) < 24*time.Hour {
				st.Hidden = append(st.Hidden, e)
			}
		}
	}
	if cs, err := k.Conflicts(); err == nil {
		st.Conflicts, st.Waiting = len(cs), cs
	}
	if held != "" {
		st.LastError = held
	}
	st.BackupBytes = backups.Bytes()
	switch {
	case !cfg.On:
		st.State = StateOff
		if cfg.Asked {
			st.State = StateError // asked for, and cannot: the household is told why
			st.LastError = cfg.Problem
		}
	case syncing:
		st.State = StateSyncing
	case st.Conflicts > 0:
		st.State = StateConflict
	case held != "" || st.LastError != "":
		st.State = StateError
	default:
		st.State = StateOK
	}
	return st
}
