package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// The save tools: the daemon's save sync with RomM (package savesync, run
// by the daemon). library_saves reads one game's saves; library_sync_saves
// and library_resolve_save change files on the cabinet and in RomM, need
// the library token scope and are never registered in read-only mode. They
// are registered only with Deps.SaveSync. A game is named as everywhere
// else, by system and ES's game id; ES's own entry gives the ROM path the
// sync works from.

// Bounds of what the save tools print.
const (
	maxRomMSaves   = 50
	maxSaveBackups = 20
	maxSyncItems   = 100
	maxSyncSent    = 50
	maxConflicts   = 20
	maxHowTo       = 1200
	maxSaveDetail  = 400
)

// Slots the save tools name (savesync.Battery and savesync.AutoState).
var saveSlots = []string{savesync.Battery.Slot, savesync.AutoState.Slot}

// slotArg documents the slots.
func slotArg() js {
	return str(`RomM's save slot: "autosave" is the game's battery save (RetroArch's .srm), "cabinet-state-auto" `+
		`its auto save state (synced only with cabinet.romm.sync_states).`, enum(saveSlots...))
}

// saveGame looks the game up in ES's own list: its path is what the sync
// works from (callers never supply one).
func saveGame(ctx context.Context, e ES, system, id string) (es.Game, savesync.Game, error) {
	g, err := e.LookupGame(ctx, system, id)
	switch {
	case errors.Is(err, es.ErrNotFound), errors.Is(err, es.ErrInvalidArgument):
		return es.Game{}, savesync.Game{}, refuse("No game with id %q in system %q. Find games and their ids with "+
			"batocera_find_games (system names come from batocera_list_systems).", untrusted.Clean(id, maxIdent),
			untrusted.Clean(system, maxIdent))
	case err != nil:
		return es.Game{}, savesync.Game{}, esFailure("look up the game", err)
	case g.Path == "":
		return es.Game{}, savesync.Game{}, refuse("EmulationStation lists game %q without a path, so its saves cannot "+
			"be found; reload the game lists with batocera_reload_games.", untrusted.Clean(id, maxIdent))
	}
	return g, savesync.Game{System: system, ROM: g.Path, Name: g.Name}, nil
}

// saveGameRef names a game in a save tool's answer.
type saveGameRef struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
	Name   string `json:"name"`
}

func refOf(g savesync.Game) saveGameRef {
	return saveGameRef{System: systemName(g.System), GameID: es.GameID(g.ROM), Name: untrusted.Clean(g.Title(), maxName)}
}

func gameRefProps(d string) js {
	return object(d,
		req("system", str("The Batocera system.")),
		req("game_id", str("ES's id of the game (batocera_launch_game and the save tools take it).")),
		req("name", str("The game's name.")))
}

// when renders a time in loc, null when zero.
func when(t time.Time, loc *time.Location) *string {
	if t.IsZero() {
		return nil
	}
	return ptr(t.In(loc).Format(time.RFC3339))
}

// orNull is s cleaned and capped, null when empty.
func orNull(s string, n int) *string {
	if s = untrusted.Clean(s, n); s == "" {
		return nil
	}
	return &s
}

// slotLabel names a slot for the household.
func slotLabel(slot string) string {
	if k, ok := savesync.KindOf(slot); ok {
		return k.Label
	}
	return untrusted.Clean(slot, maxIdent)
}

// howToResolve is savesync.HowToResolve with the game named as the tool
// takes it: savesync writes the ROM path as game_id, library_resolve_save
// takes ES's id of that path.
func howToResolve(c savesync.Conflict) string {
	s := savesync.HowToResolve(c)
	s = strings.Replace(s, fmt.Sprintf("game_id: %q", c.Game.ROM), fmt.Sprintf("game_id: %q", es.GameID(c.Game.ROM)), 1)
	return untrusted.Clean(s, maxHowTo)
}

// saveSyncFailure turns an error of the daemon's save sync into a refusal;
// its errors say what to do.
func saveSyncFailure(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return failedAt(loggerRomM, mcp.LoggingLevelWarning, "Could not %s: %s", what, untrusted.Clean(err.Error(), maxErrorRunes))
}

// sizeOf renders a save's size.
func sizeOf(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	return sizeText(n)
}

// offText says why the sync is off and what to do.
func offText(st syncStatus) string {
	if st.Problem != nil {
		return *st.Problem
	}
	return "set cabinet.romm.sync_saves=1 and pair the cabinet with RomM (cabinet romm pair --sync-saves)."
}

// fileName is a path's last element, cleaned.
func fileName(p string) string { return untrusted.Clean(filepath.Base(p), maxName) }

type savesArgs struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
}

// SavesResult is library_saves' answer.
type SavesResult struct {
	Game       savesGame      `json:"game"`
	Local      []localSave    `json:"local"`
	RomM       []rommSave     `json:"romm"`
	RomMError  *string        `json:"romm_error"`
	LastSynced []syncedView   `json:"last_synced"`
	Conflicts  []conflictView `json:"conflicts"`
	Backups    []backupView   `json:"backups"`
	Sync       syncStatus     `json:"sync"`
	Warnings   []string       `json:"warnings"`
}

type savesGame struct {
	saveGameRef
	Path  string `json:"path"`
	ROMID *int   `json:"rom_id"`
}

type localSave struct {
	Slot     string  `json:"slot"`
	Path     string  `json:"path"`
	Size     int64   `json:"size_bytes"`
	Modified *string `json:"modified"`
	Hash     string  `json:"hash"`
}

type rommSave struct {
	ID        int     `json:"save_id"`
	File      string  `json:"file"`
	Slot      string  `json:"slot"`
	Size      int64   `json:"size_bytes"`
	UpdatedAt *string `json:"updated_at"`
	Hash      *string `json:"hash"`
	From      *string `json:"from_device"`
	Emulator  *string `json:"emulator"`
}

type syncedView struct {
	Slot          string  `json:"slot"`
	At            *string `json:"at"`
	Way           string  `json:"way"`
	SaveID        int     `json:"save_id"`
	Hash          string  `json:"hash"`
	RomMUpdatedAt *string `json:"romm_updated_at"`
}

type backupView struct {
	Path   string  `json:"path"`
	Save   string  `json:"save"`
	RomM   bool    `json:"romm_side"`
	Size   int64   `json:"size_bytes"`
	MadeAt *string `json:"made_at"`
}

// saveTools is what the save tools share.
type saveTools struct {
	ss      SaveSync
	es      ES
	guard   *guard
	cabinet string
	loc     *time.Location
}

func (s saveTools) savesTool() (mcp.Tool, server.ToolHandlerFunc) {
	nstr := func(d string) js { return nullable(str(d)) }
	md5 := func(d string) js { return str(d + ", md5 in hex (RomM's content_hash).") }
	t := defineLibrary("library_saves", "A game's saves",
		"One game's saves and their sync with the household's RomM: the battery save (and the auto state, when "+
			"states are synced) on the cabinet, the saves RomM holds for the game with their times, sizes and the "+
			"device that uploaded them, what was last synced, the conflicts waiting (a save changed on both sides; "+
			"each says how to settle it with library_resolve_save), Cabinet's backups, and the sync as a whole "+
			"(state, last session). system and game_id come from batocera_find_games.",
		reads, true,
		withInput(req("system", systemArg("The game's system, e.g. snes.")), req("game_id", gameIDArg())),
		withOutput(
			req("game", object("The game.",
				req("system", str("The Batocera system.")),
				req("game_id", str("ES's id of the game.")),
				req("name", str("The game's name.")),
				req("path", str("The ROM's path on the cabinet.")),
				req("rom_id", nullable(integer("RomM's id of the game; null when RomM is not known to have it: its saves stay on the cabinet."))))),
			req("local", array("The save files on the cabinet.", object("",
				req("slot", str("RomM's slot the file syncs with: autosave (the battery save) or cabinet-state-auto (the auto state).")),
				req("path", str("The file.")),
				req("size_bytes", integer("Its size.")),
				req("modified", nstr("When it last changed (RFC 3339).")),
				req("hash", md5("Its content"))))),
			req("romm", array("The saves RomM holds for the game, newest first, at most 50.", object("",
				req("save_id", integer("RomM's id of the save.")),
				req("file", str("Its file name in RomM.")),
				req("slot", str("Its slot (autosave pairs with the cabinet's battery save).")),
				req("size_bytes", integer("Its size.")),
				req("updated_at", nstr("When it was uploaded (RFC 3339).")),
				req("hash", nstr("RomM's content_hash (md5 in hex), null when RomM has none.")),
				req("from_device", nstr("The device that uploaded it, when RomM says.")),
				req("emulator", nstr("The emulator RomM records for it."))))),
			req("romm_error", nstr("Why RomM's saves could not be listed; null when they were.")),
			req("last_synced", array("What was last synced in each slot.", object("",
				req("slot", str("RomM's slot.")),
				req("at", nstr("When (RFC 3339).")),
				req("way", str("How it got in step: uploaded, downloaded, or same (the same bytes on both sides).")),
				req("save_id", integer("RomM's save then.")),
				req("hash", md5("The content both sides had")),
				req("romm_updated_at", nstr("RomM's time of that save (RFC 3339)."))))),
			req("conflicts", array("Conflicts waiting for a choice.", conflictProps())),
			req("backups", array("Cabinet's backups of this game's saves (and RomM's side of a conflict), newest first, at most 20.", object("",
				req("path", str("The copy.")),
				req("save", str("The save's file name it is a copy of.")),
				req("romm_side", boolean("RomM's side of a conflict, not a backup of the cabinet's save.")),
				req("size_bytes", integer("Its size.")),
				req("made_at", nstr("When it was made (RFC 3339)."))))),
			req("sync", syncStatusProps()),
			req("warnings", array("What limits the answer or the sync of this game.", str("One warning."))),
		))
	return t, typed(s.saves)
}

func (s saveTools) saves(ctx context.Context, a savesArgs) (SavesResult, error) {
	ss, loc := s.ss, s.loc
	eg, g, err := saveGame(ctx, s.es, a.System, a.GameID)
	if err != nil {
		return SavesResult{}, err
	}
	sv, err := ss.Saves(ctx, g)
	if err != nil {
		return SavesResult{}, saveSyncFailure("read the game's saves", err)
	}
	res := SavesResult{Game: savesGame{saveGameRef: saveGameRef{System: systemName(a.System), GameID: untrusted.Clean(eg.ID, maxIdent),
		Name: gameName(eg)}, Path: untrusted.Clean(eg.Path, maxPath)},
		Local: []localSave{}, RomM: []rommSave{}, RomMError: orNull(sv.RomMErr, maxErrorRunes), LastSynced: []syncedView{},
		Conflicts: []conflictView{}, Backups: []backupView{}, Sync: statusOf(ss.Status(), loc), Warnings: []string{}}
	if sv.Game.ROMID > 0 {
		res.Game.ROMID = ptr(sv.Game.ROMID)
	}
	for _, l := range sv.Local {
		res.Local = append(res.Local, localSave{Slot: untrusted.Clean(l.Slot, maxIdent), Path: untrusted.Clean(l.Path, maxPath),
			Size: l.Size, Modified: when(l.Modified, loc), Hash: untrusted.Clean(l.Hash, maxIdent)})
	}
	remote := slices.Clone(sv.RomM)
	slices.SortStableFunc(remote, func(x, y savesync.RemoteSave) int { return y.UpdatedAt.Compare(x.UpdatedAt) })
	for i, r := range remote {
		if i == maxRomMSaves {
			res.Warnings = append(res.Warnings, fmt.Sprintf("RomM holds %d saves for the game: the newest %d are listed.", len(remote), maxRomMSaves))
			break
		}
		res.RomM = append(res.RomM, rommSave{ID: r.ID, File: untrusted.Clean(r.File, maxName), Slot: untrusted.Clean(r.Slot, maxIdent),
			Size: r.Size, UpdatedAt: when(r.UpdatedAt, loc), Hash: orNull(r.Hash, maxIdent), From: orNull(r.From, maxShort),
			Emulator: orNull(r.Emulator, maxShort)})
	}
	for _, s := range sv.Synced {
		res.LastSynced = append(res.LastSynced, syncedView{Slot: untrusted.Clean(s.Slot, maxIdent), At: when(s.At, loc),
			Way: untrusted.Clean(s.Way, maxIdent), SaveID: s.SaveID, Hash: untrusted.Clean(s.Hash, maxIdent),
			RomMUpdatedAt: when(s.ServerUpdatedAt, loc)})
	}
	for _, c := range sv.Conflict {
		res.Conflicts = append(res.Conflicts, conflictOf(c, loc))
	}
	copies := slices.Clone(sv.Backups)
	slices.SortStableFunc(copies, func(x, y savesync.Copy) int { return y.MadeAt.Compare(x.MadeAt) })
	for i, c := range copies {
		if i == maxSaveBackups {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d copies in the backup folder: the newest %d are listed.", len(copies), maxSaveBackups))
			break
		}
		res.Backups = append(res.Backups, backupView{Path: untrusted.Clean(c.Path, maxPath), Save: untrusted.Clean(c.Save, maxName),
			RomM: c.RomM, Size: c.Size, MadeAt: when(c.MadeAt, loc)})
	}
	switch {
	case savesync.Standalone(g.System):
		res.Warnings = append(res.Warnings, fmt.Sprintf("The saves of %s games are not synced: its emulator keeps saves "+
			"that do not map to one game.", systemName(g.System)))
	case !res.Sync.On:
		res.Warnings = append(res.Warnings, "Save sync is off, so nothing is synced: "+offText(res.Sync))
	case res.Game.ROMID == nil:
		res.Warnings = append(res.Warnings, "RomM is not known to have this game, so its saves stay on the cabinet "+
			"(a game installed from RomM, or one RomM has with the same file, is synced).")
	}
	return res, nil
}

func (r SavesResult) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)", r.Game.Name, r.Game.System)
	if r.Game.ROMID != nil {
		fmt.Fprintf(&b, ", RomM ROM %d", *r.Game.ROMID)
	}
	b.WriteString(".")
	if len(r.Local) == 0 {
		b.WriteString("\nOn the cabinet: no save.")
	}
	for _, l := range r.Local {
		fmt.Fprintf(&b, "\nOn the cabinet: %s %s, %s, changed %s.", slotLabel(l.Slot), fileName(l.Path), sizeOf(l.Size), deref(l.Modified))
	}
	switch {
	case r.RomMError != nil:
		b.WriteString("\nRomM's saves could not be listed: " + *r.RomMError)
	case len(r.RomM) == 0:
		b.WriteString("\nIn RomM: no save.")
	}
	for i, s := range r.RomM {
		if i == 5 {
			fmt.Fprintf(&b, "\n… and %d more in RomM.", len(r.RomM)-i)
			break
		}
		fmt.Fprintf(&b, "\nIn RomM: %s (slot %s), %s, %s", s.File, s.Slot, sizeOf(s.Size), deref(s.UpdatedAt))
		if s.From != nil {
			b.WriteString(", from " + *s.From)
		}
		b.WriteString(".")
	}
	for _, s := range r.LastSynced {
		fmt.Fprintf(&b, "\nLast synced: %s %s (%s).", slotLabel(s.Slot), deref(s.At), s.Way)
	}
	b.WriteString(conflictsText(r.Conflicts))
	if n := len(r.Backups); n > 0 {
		fmt.Fprintf(&b, "\nBackups: %d, newest %s.", n, r.Backups[0].Path)
	}
	b.WriteString("\n" + r.Sync.line())
	for _, w := range r.Warnings {
		b.WriteString("\nWarning: " + w)
	}
	return b.String()
}
