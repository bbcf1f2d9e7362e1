package doctor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
)

// SaveSyncEnv is the save sync as the check sees it.
type SaveSyncEnv struct {
	// Config is cabinet.romm.sync_* with the pairing: what is shown when cabinet serve does not
	// answer.
	Config savesync.Config
	// Daemon asks cabinet serve for the sync's status (nil status: it answered without one).
	Daemon func(ctx context.Context) (*savesync.Status, error)
}

// CheckSaveSync is the save sync check's name.
const CheckSaveSync = "save-sync"

const saveSyncOff = `off — to have saves follow the player between the cabinet and RomM's other devices, run ` +
	"`cabinet romm pair --sync-saves` and set cabinet.romm.sync_saves=1 (README: \"Saves follow you\")"

// checkSaveSync shows whether saves sync, the last session, the conflicts waiting and the size
// of the backups. A conflict is a warning: it waits for the household.
func checkSaveSync(ctx context.Context, env SaveSyncEnv) Result {
	cfg := env.Config
	if !cfg.Asked {
		return Result{Status: Skip, Detail: saveSyncOff}
	}
	if !cfg.On {
		return Result{Status: Warn, Detail: "asked for, but off: " + cfg.Problem,
			Hint: "run `cabinet romm pair --sync-saves` (it asks RomM for assets.read and assets.write)"}
	}
	var st *savesync.Status
	var err error
	if env.Daemon != nil {
		st, err = env.Daemon(ctx)
	}
	if st == nil {
		res := Result{Status: Warn, Detail: "on — with " + cfg.URL}
		if env.Daemon == nil || err != nil {
			res.Lines = []string{"Only `cabinet serve` syncs saves, and it does not answer (see the daemon check)"}
			res.Hint = "start it (batocera-services start cabinet): until it runs, saves stay on the cabinet"
		} else {
			res.Lines = []string{"cabinet serve answers but has not reported the sync yet (it is starting)"}
		}
		return res
	}
	return reportedSaveSync(cfg, *st)
}

func reportedSaveSync(cfg savesync.Config, st savesync.Status) Result {
	res := Result{Status: OK, Detail: fmt.Sprintf("on (%s) — with %s", st.State, cfg.URL)}
	if st.LastSync.IsZero() {
		res.Lines = append(res.Lines, "Last sync: none yet")
	} else {
		ls := st.LastSession
		res.Lines = append(res.Lines, fmt.Sprintf("Last sync: %s (%s; RomM session %d): %d games, %d uploaded, %d downloaded, %d conflicts, %d failed",
			st.LastSync.Local().Format("2006-01-02 15:04"), ls.Trigger, ls.ID, ls.Games, ls.Uploaded, ls.Download, ls.Conflicts, ls.Failed))
	}
	res.Lines = append(res.Lines, fmt.Sprintf("Today: %d uploaded, %d downloaded", st.UploadsToday, st.DownloadsToday),
		fmt.Sprintf("Backups: %s in %s", sizeText(st.BackupBytes), st.BackupDir))
	if len(cfg.Systems) > 0 {
		res.Facts = append(res.Facts, "systems: "+strings.Join(cfg.Systems, ", "))
	}
	res.Facts = append(res.Facts, "never synced (their emulators keep saves that do not map to one game): "+strings.Join(savesync.StandaloneSystems(), ", "))
	for _, c := range st.Waiting {
		res.Lines = append(res.Lines, "Conflict: "+savesync.HowToResolve(c))
		if c.HiddenBy != "" {
			res.Lines = append(res.Lines, "  (Batocera's auto-save loads "+c.HiddenBy+" at launch: a save put in place is hidden by that state)")
		}
	}
	for _, e := range st.Hidden {
		res.Lines = append(res.Lines, fmt.Sprintf("Hidden: %s got RomM's save at %s, but Batocera's auto-save loads %s at launch, which takes over from it: load the save from RetroArch's menu, or move that state aside",
			e.Game, e.At.Local().Format("15:04"), e.Hidden))
	}
	if st.Conflicts > 0 {
		res.Status = Warn
		res.Hint = "choose which save to keep with the MCP tool library_resolve_save (the other is kept as a backup)"
	}
	if st.LastError != "" {
		res.Status = Warn
		res.Lines = append(res.Lines, "Last problem: "+st.LastError)
		if !st.NextTry.IsZero() {
			res.Lines = append(res.Lines, "Next try: "+st.NextTry.Local().Format(time.Kitchen))
		}
		if res.Hint == "" {
			res.Hint = "the saves stay on the cabinet and are tried again by themselves; check RomM and the pairing (cabinet romm status)"
		}
	}
	return res
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
