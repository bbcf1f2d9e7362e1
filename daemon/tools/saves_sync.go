package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

type syncSavesArgs struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
}

// SyncSavesResult is library_sync_saves' answer: the action result, what
// the pass did with each save and the conflicts waiting afterwards.
type SyncSavesResult struct {
	ActionResult
	Game      *saveGameRef   `json:"game"`
	Session   *int           `json:"session"`
	Counts    syncCounts     `json:"counts"`
	Items     []syncItem     `json:"items"`
	Conflicts []conflictView `json:"conflicts"`
	Sync      syncStatus     `json:"sync"`
}

type syncCounts struct {
	Uploaded   int `json:"uploaded"`
	Downloaded int `json:"downloaded"`
	Conflict   int `json:"conflict"`
	InStep     int `json:"in_step"`
	Skipped    int `json:"skipped"`
	Error      int `json:"error"`
}

type syncItem struct {
	Game   saveGameRef `json:"game"`
	Slot   string      `json:"slot"`
	Action string      `json:"action"`
	Detail string      `json:"detail"`
	Backup *string     `json:"backup"`
	Hidden *string     `json:"hidden_by"`
}

var itemActions = []string{savesync.Uploaded, savesync.Downloaded, savesync.Conflicted, savesync.InStep, savesync.Skipped, savesync.Failed}

func (s saveTools) syncSavesTool() (mcp.Tool, server.ToolHandlerFunc) {
	nstr := func(d string) js { return nullable(str(d)) }
	t := defineLibrary("library_sync_saves", "Sync saves with RomM",
		"Sync game saves with the household's RomM now, the way RomM's handheld clients do, so a game continues "+
			"on another device and back: one game (system and game_id from batocera_find_games) or, with neither, "+
			"every game RomM is known to have. A newer save on one side replaces the other (the replaced file is "+
			"backed up first); a save changed on both sides is never settled silently: it becomes a conflict, "+
			"listed with how to resolve it (library_resolve_save). The running game's saves are left alone. The "+
			"cabinet syncs by itself too (after a game, at start and when idle); this is for now.",
		writes, true,
		withInput(
			opt("system", systemArg("The game's system, e.g. snes; with game_id. Leave both out for every game.")),
			opt("game_id", gameIDArg()),
		),
		withOutput(actionProps(
			req("game", nullable(gameRefProps("The game synced; null for every game."))),
			req("session", nullable(integer("RomM's sync session of the pass; null when none ran."))),
			req("counts", object("Saves by what the pass did.",
				req("uploaded", integer("Uploaded to RomM.")),
				req("downloaded", integer("Downloaded from RomM, the cabinet's file backed up first.")),
				req("conflict", integer("Changed on both sides: waiting for a choice.")),
				req("in_step", integer("Already the same on both sides.")),
				req("skipped", integer("Left for the next sync (changed while read).")),
				req("error", integer("Failed; the cabinet's file is as it was.")))),
			req("items", array("What the pass did with each save, at most 100.", object("",
				req("game", gameRefProps("The game.")),
				req("slot", str("RomM's slot: autosave (the battery save) or cabinet-state-auto (the auto state).")),
				req("action", str("What was done.", enum(itemActions...))),
				req("detail", str("More about it; for an error, what went wrong.")),
				req("backup", nstr("Where the replaced file (or RomM's side of a conflict) is kept; null: none.")),
				req("hidden_by", nstr("A state Batocera loads when the game starts, which hides the downloaded save; null: none."))))),
			req("conflicts", array("Conflicts waiting after the pass (of this game, or all), with how to resolve each.", conflictProps())),
			req("sync", syncStatusProps()),
		)...))
	h := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		progress, stop := saveProgressTo(ctx, req)
		defer stop()
		return typed(func(ctx context.Context, a syncSavesArgs) (SyncSavesResult, error) {
			return s.syncSaves(ctx, a, progress)
		})(ctx, req)
	}
	return t, h
}

// saveProgressTo sends MCP progress notifications (saves done of the pass's
// total) when the client gave a progress token; stop ends them.
func saveProgressTo(ctx context.Context, req mcp.CallToolRequest) (progress func(done, total int), stop func()) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil, func() {}
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil, func() {}
	}
	token := req.Params.Meta.ProgressToken
	return throttled(func(done, total int) {
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token, "progress": done, "total": total,
			"message": fmt.Sprintf("Syncing saves with RomM… %d of %d", done, total)})
	})
}

// throttled passes progress on to send at most once per percent of the
// total, and the last step always, until stop (a late call from the sync is
// dropped: the answer has gone).
func throttled(send func(done, total int)) (progress func(done, total int), stop func()) {
	var mu sync.Mutex
	stopped, last := false, -1
	progress = func(done, total int) {
		if total <= 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		pct := done * 100 / total
		if stopped || (pct == last && done != total) {
			return
		}
		last = pct
		send(done, total)
	}
	stop = func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
	}
	return progress, stop
}

func (s saveTools) syncSaves(ctx context.Context, a syncSavesArgs, progress func(done, total int)) (SyncSavesResult, error) {
	if (a.System == "") != (a.GameID == "") {
		return SyncSavesResult{}, refuse("Give both system and game_id to sync one game's saves, or neither to sync every game's.")
	}
	var g savesync.Game // the zero Game: every game
	var ref *saveGameRef
	what := "every game RomM is known to have"
	if a.System != "" {
		eg, sg, err := saveGame(ctx, s.es, a.System, a.GameID)
		if err != nil {
			return SyncSavesResult{}, err
		}
		g, ref = sg, ptr(refOf(sg))
		what = fmt.Sprintf("%s (%s)", gameName(eg), systemName(a.System))
	}
	if st := statusOf(s.ss.Status(), s.loc); !st.On {
		return SyncSavesResult{}, refuse("Save sync is off, so nothing is synced: %s", offText(st))
	}
	var res savesync.Result
	sent := []string{"POST /api/sync/negotiate"}
	dry, err := s.guard.run(ctx, action{what: "sync saves", sent: sent, send: func(ctx context.Context) error {
		r, err := s.ss.Sync(ctx, g, progress)
		if err != nil {
			return saveSyncFailure("sync the saves of "+what, err)
		}
		res = r
		return nil
	}})
	if err != nil {
		return SyncSavesResult{}, err
	}
	out := SyncSavesResult{Game: ref, Items: []syncItem{}}
	if dry {
		return s.wouldSync(ctx, g, what, sent, out)
	}
	var warnings []string
	for i, it := range res.Items {
		if i == maxSyncItems {
			warnings = append(warnings, fmt.Sprintf("%d saves in the pass: the first %d are listed.", len(res.Items), maxSyncItems))
			break
		}
		out.Items = append(out.Items, syncItem{Game: refOf(it.Game), Slot: untrusted.Clean(it.Slot, maxIdent), Action: it.Action,
			Detail: untrusted.Clean(it.Detail, maxSaveDetail), Backup: orNull(it.Backup, maxPath), Hidden: orNull(it.Hidden, maxPath)})
	}
	out.Counts = syncCounts{Uploaded: res.Count(savesync.Uploaded), Downloaded: res.Count(savesync.Downloaded),
		Conflict: res.Count(savesync.Conflicted), InStep: res.Count(savesync.InStep), Skipped: res.Count(savesync.Skipped),
		Error: res.Count(savesync.Failed)}
	if res.Session > 0 {
		out.Session = ptr(res.Session)
	}
	sent = append(sent, passSent(res)...)
	if n := out.Counts.Error; n > 0 {
		warnings = append(warnings, fmt.Sprintf("%d save(s) failed (their items say why): the files on the cabinet are "+
			"as they were, and the next sync tries again.", n))
	}
	for _, it := range out.Items {
		if it.Action == savesync.Downloaded && it.Hidden != nil {
			warnings = append(warnings, fmt.Sprintf("Batocera loads the state %s when %s starts, which hides the "+
				"downloaded save: load the save from RetroArch's menu, or move that state aside.", fileName(*it.Hidden), it.Game.Name))
		}
	}
	if len(res.Items) == 0 && g.ROM != "" {
		if running, err := s.es.RunningGame(ctx); err == nil && running != nil && running.Path == g.ROM {
			warnings = append(warnings, "The game is running: its saves are the emulator's until it ends, and they are synced then.")
		}
	}
	st := s.ss.Status()
	out.Sync = statusOf(st, s.loc)
	out.Conflicts = s.waiting(st, g)
	out.ActionResult = actionResult(s.cabinet, outcomeDone, "Synced the saves of "+what+" with RomM: "+countsText(out.Counts)+".",
		sent, warnings)
	return out, nil
}

// wouldSync is the dry run's answer: what there is to sync, nothing sent.
func (s saveTools) wouldSync(ctx context.Context, g savesync.Game, what string, sent []string, out SyncSavesResult) (SyncSavesResult, error) {
	st := s.ss.Status()
	out.Sync = statusOf(st, s.loc)
	out.Conflicts = s.waiting(st, g)
	detail := "Would sync the saves of " + what + " with RomM"
	if g.ROM != "" {
		sv, err := s.ss.Saves(ctx, g)
		if err != nil {
			return SyncSavesResult{}, saveSyncFailure("read the game's saves", err)
		}
		var here []string
		for _, l := range sv.Local {
			here = append(here, fmt.Sprintf("%s %s", slotLabel(l.Slot), sizeOf(l.Size)))
		}
		if len(here) == 0 {
			here = []string{"no save"}
		}
		detail += fmt.Sprintf(": on the cabinet %s, in RomM %d save(s)", strings.Join(here, ", "), len(sv.RomM))
	}
	if n := len(out.Conflicts); n > 0 {
		detail += fmt.Sprintf("; %d conflict(s) wait and stay until resolved", n)
	}
	out.ActionResult = actionResult(s.cabinet, outcomeDryRun, detail+".", sent, nil)
	return out, nil
}

// waiting are the conflicts waiting: g's, or every one for the zero Game.
func (s saveTools) waiting(st savesync.Status, g savesync.Game) []conflictView {
	out := []conflictView{}
	for _, c := range st.Waiting {
		if g.ROM != "" && c.Game.ROM != g.ROM {
			continue
		}
		if len(out) == maxConflicts {
			break
		}
		out = append(out, conflictOf(c, s.loc))
	}
	return out
}

// passSent lists what a pass sent RomM beyond the negotiation.
func passSent(res savesync.Result) []string {
	var out []string
	for _, it := range res.Items {
		if len(out) == maxSyncSent {
			out = append(out, "…")
			break
		}
		k, _ := savesync.KindOf(it.Slot)
		file := untrusted.Clean(filepath.Base(it.Game.Stem()+k.Suffix), maxName)
		switch it.Action {
		case savesync.Uploaded:
			out = append(out, "POST /api/saves "+file)
		case savesync.Downloaded:
			out = append(out, "GET /api/saves/{id}/content → "+file)
		case savesync.Conflicted:
			if it.Backup != "" {
				out = append(out, "GET /api/saves/{id}/content → "+fileName(it.Backup))
			}
		}
	}
	if res.Session > 0 {
		out = append(out, fmt.Sprintf("POST /api/sync/sessions/%d/complete", res.Session))
	}
	return out
}

func countsText(c syncCounts) string {
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(c.Uploaded, "uploaded")
	add(c.Downloaded, "downloaded")
	add(c.Conflict, "conflict(s)")
	add(c.InStep, "in step")
	add(c.Skipped, "skipped")
	add(c.Error, "failed")
	if len(parts) == 0 {
		return "nothing to upload or download"
	}
	return strings.Join(parts, ", ")
}

func (r SyncSavesResult) text() string {
	var b strings.Builder
	b.WriteString(r.ActionResult.text())
	for i, it := range r.Items {
		if i == 20 {
			fmt.Fprintf(&b, "\n… %d more item(s).", len(r.Items)-i)
			break
		}
		if it.Action == savesync.InStep {
			continue
		}
		fmt.Fprintf(&b, "\n- %s (%s) %s: %s", it.Game.Name, it.Game.System, slotLabel(it.Slot), it.Action)
		if it.Detail != "" {
			b.WriteString(", " + it.Detail)
		}
	}
	b.WriteString(conflictsText(r.Conflicts))
	b.WriteString("\n" + r.Sync.line())
	return b.String()
}
