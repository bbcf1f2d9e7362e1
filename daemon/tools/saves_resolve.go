package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

type resolveSaveArgs struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
	Slot   string `json:"slot"`
	Keep   string `json:"keep"`
}

// ResolveSaveResult is library_resolve_save's answer.
type ResolveSaveResult struct {
	ActionResult
	Game     saveGameRef `json:"game"`
	Slot     string      `json:"slot"`
	Keep     string      `json:"keep"`
	Backup   *string     `json:"backup"`
	HiddenBy *string     `json:"hidden_by"`
}

func (r ResolveSaveResult) text() string { return r.ActionResult.text() }

func (s saveTools) resolveSaveTool() (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_resolve_save", "Resolve a save conflict",
		"Settle a save conflict (a save changed both on the cabinet and in RomM; library_saves and "+
			"library_sync_saves list them) by keeping one side: keep local uploads the cabinet's save to RomM as "+
			"the newest, keep romm puts RomM's save in place on the cabinet. The other side is not lost: it is kept "+
			"as a backup, and the answer says where. Ask the player which progress to keep first: the game's save "+
			"is replaced. Refused while the game runs.",
		destroys, false,
		withInput(
			req("system", systemArg("The game's system, e.g. snes.")),
			req("game_id", gameIDArg()),
			req("slot", slotArg()),
			req("keep", str("Which save to keep: local (the cabinet's) or romm (RomM's).", enum(savesync.KeepLocal, savesync.KeepRomM))),
		),
		withOutput(actionProps(
			req("game", gameRefProps("The game.")),
			req("slot", str("RomM's slot.")),
			req("keep", str("The side kept.", enum(savesync.KeepLocal, savesync.KeepRomM))),
			req("backup", nullable(str("Where the other side is kept on the cabinet; null when there was nothing to keep."))),
			req("hidden_by", nullable(str("A state Batocera loads when the game starts, which hides the save kept; null: none."))),
		)...))
	return t, typed(s.resolveSave)
}

func (s saveTools) resolveSave(ctx context.Context, a resolveSaveArgs) (ResolveSaveResult, error) {
	if !slices.Contains(saveSlots, a.Slot) {
		return ResolveSaveResult{}, refuse("slot must be %q (the battery save) or %q (the auto state); got %q.",
			savesync.Battery.Slot, savesync.AutoState.Slot, untrusted.Clean(a.Slot, maxIdent))
	}
	if a.Keep != savesync.KeepLocal && a.Keep != savesync.KeepRomM {
		return ResolveSaveResult{}, refuse("keep must be %q (the cabinet's save) or %q (RomM's save); got %q.",
			savesync.KeepLocal, savesync.KeepRomM, untrusted.Clean(a.Keep, maxIdent))
	}
	eg, g, err := saveGame(ctx, s.es, a.System, a.GameID)
	if err != nil {
		return ResolveSaveResult{}, err
	}
	name := fmt.Sprintf("%s (%s)", gameName(eg), systemName(a.System))
	label := slotLabel(a.Slot)
	noConflict := refuse("No save conflict waits for %s in slot %s, so there is nothing to resolve. Run library_saves "+
		"{system: %q, game_id: %q} to see its saves and any conflicts.", name, a.Slot, systemName(a.System), untrusted.Clean(eg.ID, maxIdent))
	c, romID, found, err := s.conflictFor(ctx, g, a.Slot)
	if err != nil {
		return ResolveSaveResult{}, err
	}
	if romID == 0 {
		return ResolveSaveResult{}, noConflict
	}
	out := ResolveSaveResult{Game: saveGameRef{System: systemName(a.System), GameID: untrusted.Clean(eg.ID, maxIdent), Name: gameName(eg)},
		Slot: a.Slot, Keep: a.Keep}
	k, _ := savesync.KindOf(a.Slot)
	var sent []string
	switch a.Keep {
	case savesync.KeepLocal:
		sent = []string{"POST /api/saves " + untrusted.Clean(g.Stem()+k.Suffix, maxName) + " (overwrite)"}
	case savesync.KeepRomM:
		if found {
			sent = []string{fmt.Sprintf("POST /api/saves/%d/downloaded", c.SaveID)}
		} else {
			sent = []string{"POST /api/saves/{id}/downloaded"}
		}
	}
	var item savesync.Item
	dry, err := s.guard.run(ctx, action{what: "resolve the save conflict", sent: sent, send: func(ctx context.Context) error {
		it, err := s.ss.Resolve(ctx, romID, a.Slot, a.Keep)
		switch {
		case errors.Is(err, savesync.ErrNoConflict):
			return noConflict
		case err != nil:
			return saveSyncFailure("resolve the conflict of "+name, err)
		}
		item = it
		return nil
	}})
	switch {
	case err != nil:
		return ResolveSaveResult{}, err
	case dry && !found:
		return ResolveSaveResult{}, noConflict
	case dry:
		out.ActionResult = actionResult(s.cabinet, outcomeDryRun, wouldResolve(c, a.Keep, name, label, s.ss.Status().BackupDir), sent, nil)
		out.HiddenBy = orNull(c.HiddenBy, maxPath)
		return out, nil
	}
	out.Backup, out.HiddenBy = orNull(item.Backup, maxPath), orNull(item.Hidden, maxPath)
	var detail string
	switch {
	case a.Keep == savesync.KeepLocal && out.Backup != nil:
		detail = fmt.Sprintf("Kept the cabinet's %s of %s: it is now the newest in RomM; RomM's earlier one is kept in %s.", label, name, *out.Backup)
	case a.Keep == savesync.KeepLocal:
		detail = fmt.Sprintf("Kept the cabinet's %s of %s: it is now the newest in RomM, which keeps its earlier one in its history.", label, name)
	case out.Backup != nil:
		detail = fmt.Sprintf("Put RomM's %s of %s in place; the cabinet's is kept in %s.", label, name, *out.Backup)
	default:
		detail = fmt.Sprintf("Put RomM's %s of %s in place (the cabinet had none to keep).", label, name)
	}
	var warnings []string
	if out.HiddenBy != nil {
		warnings = append(warnings, fmt.Sprintf("Batocera loads the state %s when the game starts, which hides this save: "+
			"load the save from RetroArch's menu, or move that state aside.", fileName(*out.HiddenBy)))
	}
	out.ActionResult = actionResult(s.cabinet, outcomeDone, detail, sent, warnings)
	return out, nil
}

// conflictFor finds the conflict waiting for g's slot: in the sync's list by
// the game's path, else through the game's saves (RomM's id of the game
// may be kept under another path). romID is 0 when RomM is not known to
// have the game.
func (s saveTools) conflictFor(ctx context.Context, g savesync.Game, slot string) (c savesync.Conflict, romID int, found bool, err error) {
	for _, c := range s.ss.Status().Waiting {
		if c.Game.ROM == g.ROM && c.Slot == slot {
			return c, c.Game.ROMID, true, nil
		}
	}
	sv, err := s.ss.Saves(ctx, g)
	if err != nil {
		return savesync.Conflict{}, 0, false, saveSyncFailure("read the game's saves", err)
	}
	for _, c := range sv.Conflict {
		if c.Slot == slot {
			return c, c.Game.ROMID, true, nil
		}
	}
	return savesync.Conflict{}, sv.Game.ROMID, false, nil
}

// wouldResolve is the dry run's detail.
func wouldResolve(c savesync.Conflict, keep, name, label, backupDir string) string {
	romm := untrusted.Clean(c.RomMFile, maxName)
	if keep == savesync.KeepLocal {
		return fmt.Sprintf("Would keep the cabinet's %s of %s and upload it to RomM as the newest; RomM's (%s) would be kept in %s.",
			label, name, romm, untrusted.Clean(filepath.Dir(c.Copy), maxPath))
	}
	return fmt.Sprintf("Would put RomM's %s of %s (%s) in place; the cabinet's %s would be backed up to %s first.",
		label, name, romm, fileName(c.Local), untrusted.Clean(filepath.Join(backupDir, c.Game.System), maxPath))
}
