package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Installer puts RomM games on the cabinet and takes them off (*install.Installer).
type Installer interface {
	Plan(ctx context.Context, r install.Request) (install.Result, error)
	Install(ctx context.Context, r install.Request, progress func(install.Progress)) (install.Result, error)
	Uninstall(ctx context.Context, lookup install.Game, system, id string) (install.UninstallResult, error)
}

type installArgs struct {
	ROMID  int    `json:"rom_id"`
	System string `json:"system"`
	Launch bool   `json:"launch"`
}

// InstallResult is library_install's answer: the action result and where the game is.
type InstallResult struct {
	ActionResult
	System     string `json:"system"`
	GameID     string `json:"game_id"`
	Path       string `json:"path"`
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
	Verified   bool   `json:"verified"`
	VerifyNote string `json:"verify_note"`
	Listed     bool   `json:"listed"`
	Launched   bool   `json:"launched"`
}

func (r InstallResult) text() string { return r.ActionResult.text() }

func installTool(in Installer, l launcher) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_install", "Install a game from RomM",
		"Download a RomM ROM (rom_id from library_search) onto the cabinet, verified against RomM's hashes, moved into "+
			"place at once, and shown in EmulationStation with RomM's name, description and cover. system is needed only "+
			"when the platform plays in several systems (the error lists them). A second call for the same ROM answers "+
			"unchanged. With launch: true the game starts afterwards (refused while another game runs; the install "+
			"still stands). While a game runs ES lists the new game only after it ends.",
		writes, true,
		withInput(
			req("rom_id", integer("RomM's ROM id, from library_search.", minimum(1))),
			opt("system", systemArg("The Batocera system folder, when the platform maps to several (mame or fbneo for arcade).")),
			opt("launch", boolean("Start the game once it is installed.")),
		),
		withOutput(actionProps(
			req("system", str("The system the game went into.")),
			req("game_id", str("ES's id of the game (for batocera_launch_game); empty while ES has not listed it.")),
			req("path", str("The game's path on the cabinet.")),
			req("files", integer("Files written.")),
			req("bytes", integer("Bytes written.")),
			req("verified", boolean("Every file matched RomM's hashes.")),
			req("verify_note", str("Why a file could not be verified; empty when verified.")),
			req("listed", boolean("EmulationStation lists the game.")),
			req("launched", boolean("The game was started.")),
		)...))
	h := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return typed(func(ctx context.Context, a installArgs) (InstallResult, error) {
			return installGame(ctx, in, l, a, reportTo(ctx, req, a.ROMID))
		})(ctx, req)
	}
	return t, h
}

// reportTo follows an install for the client: each phase as an info log
// notification, the download as progress notifications when the client gave
// a progress token.
func reportTo(ctx context.Context, req mcp.CallToolRequest, romID int) func(install.Progress) {
	progress := progressTo(ctx, req)
	return func(p install.Progress) {
		if p.Phase == "" {
			if progress != nil {
				progress(p)
			}
			return
		}
		if msg := phaseText(p, romID); msg != "" {
			logTo(ctx, mcp.LoggingLevelInfo, loggerInstall, msg)
		}
	}
}

// phaseText is the log line of a phase beginning.
func phaseText(p install.Progress, romID int) string {
	name := untrusted.Clean(p.Name, 100)
	file := untrusted.Clean(p.File, 200)
	switch p.Phase {
	case install.PhaseRead:
		return fmt.Sprintf("Reading ROM %d from RomM.", romID)
	case install.PhaseDownload:
		return fmt.Sprintf("Downloading %s from RomM (file %d of %d; %s of %s done).", file, p.Index, p.Files, sizeText(p.Done), sizeText(p.Total))
	case install.PhaseVerify:
		return fmt.Sprintf("Verifying %s against RomM's hashes (file %d of %d).", file, p.Index, p.Files)
	case install.PhaseMove:
		return fmt.Sprintf("Moving %s into place (%d file(s), %s).", name, p.Files, sizeText(p.Total))
	case install.PhaseList:
		return fmt.Sprintf("Having EmulationStation list %s with RomM's metadata and cover.", name)
	}
	return ""
}

// progressTo sends MCP progress notifications when the client gave a progress token.
func progressTo(ctx context.Context, req mcp.CallToolRequest) func(install.Progress) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	last := int64(-1)
	return func(p install.Progress) {
		pct := int64(0)
		if p.Total > 0 {
			pct = p.Done * 100 / p.Total
		}
		if pct == last { // one notification per percent at most
			return
		}
		last = pct
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token, "progress": p.Done, "total": p.Total,
			"message": fmt.Sprintf("Installing %s… %d %%", untrusted.Clean(p.Name, 80), pct)})
	}
}

func installGame(ctx context.Context, in Installer, l launcher, a installArgs, progress func(install.Progress)) (InstallResult, error) {
	g, cabinet := l.guard, l.cabinet
	r := install.Request{ROMID: a.ROMID, System: a.System}
	if g.dryRun {
		res, err := in.Plan(ctx, r)
		if err != nil {
			return InstallResult{}, installFailure(err)
		}
		return InstallResult{ActionResult: actionResult(cabinet, outcomeDryRun, fmt.Sprintf("Would install %s into %s (%d file(s), %s).",
			untrusted.Clean(res.Name, 100), res.System, res.Files, sizeText(res.Bytes)), res.Sent, res.Warnings),
			System: res.System, Path: res.Path, Files: res.Files, Bytes: res.Bytes}, nil
	}
	res, err := in.Install(ctx, r, progress)
	if err != nil {
		return InstallResult{}, installFailure(err)
	}
	name := fmt.Sprintf("%s (%s)", untrusted.Clean(res.Name, 100), res.System)
	detail := "Installed " + name + "."
	if res.Outcome == outcomeUnchanged {
		detail = name + " is installed already."
	}
	logTo(ctx, mcp.LoggingLevelInfo, loggerInstall, detail)
	if !res.Verified {
		detail += " Not verified: " + untrusted.Clean(res.VerifyNote, 300)
		logTo(ctx, mcp.LoggingLevelWarning, loggerInstall, name+" is not verified: "+res.VerifyNote)
	}
	for _, w := range res.Warnings {
		logTo(ctx, mcp.LoggingLevelWarning, loggerInstall, w)
	}
	out := InstallResult{ActionResult: actionResult(cabinet, res.Outcome, detail, res.Sent, res.Warnings),
		System: res.System, GameID: res.GameID, Path: res.Path, Files: res.Files, Bytes: res.Bytes,
		Verified: res.Verified, VerifyNote: res.VerifyNote, Listed: res.Listed}
	if !a.Launch {
		return out, nil
	}
	if !res.Listed || res.GameID == "" {
		out.Warnings = append(out.Warnings, "Not launched: EmulationStation does not list the game yet.")
		return out, nil
	}
	launched, err := l.launch(ctx, launchArgs{System: res.System, GameID: res.GameID}, ViaMCP)
	if err != nil {
		w := "The install stands, but the launch was refused: " + untrusted.Clean(errText(err), 300)
		logTo(ctx, mcp.LoggingLevelWarning, loggerInstall, w)
		out.Warnings = append(out.Warnings, w)
		return out, nil
	}
	out.Launched = true
	out.Outcome = outcomeDone
	out.Sent = append(out.Sent, launched.Sent...)
	out.Warnings = append(out.Warnings, launched.Warnings...)
	out.Detail += " " + launched.Detail
	return out, nil
}

func errText(err error) string {
	var rf *refusal
	if errors.As(err, &rf) {
		return rf.msg
	}
	return err.Error()
}

// installFailure turns an install error into a refusal: the installer's
// errors say what to do. It logs as an error, but for what the caller can
// change (another install runs, RomM has no such ROM, not Cabinet's game).
func installFailure(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	level := mcp.LoggingLevelError
	if errors.Is(err, install.ErrBusy) || errors.Is(err, install.ErrNotInstalled) || errors.Is(err, romm.ErrNotFound) {
		level = mcp.LoggingLevelWarning
	}
	return failedAt(loggerInstall, level, "%s", untrusted.Clean(err.Error(), maxErrorRunes))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (n+1023)/1024)
}

type uninstallArgs struct {
	System string `json:"system"`
	GameID string `json:"game_id"`
}

// UninstallResult is library_uninstall's answer.
type UninstallResult struct {
	ActionResult
	Removed []string `json:"removed"`
	Kept    []string `json:"kept"`
}

func (r UninstallResult) text() string { return r.ActionResult.text() }

func uninstallTool(in Installer, e ES, g *guard, cabinet string) (mcp.Tool, server.ToolHandlerFunc) {
	t := defineLibrary("library_uninstall", "Remove an installed game",
		"Remove a game Cabinet installed from RomM (system and game_id from batocera_find_games). Only games Cabinet "+
			"installed, only files unchanged since: a file the user changed is left and listed. Refused while the game "+
			"runs. Its saves and states are kept.",
		destroys, false,
		withInput(req("system", systemArg("The game's system, e.g. snes.")), req("game_id", gameIDArg())),
		withOutput(actionProps(
			req("removed", array("Files removed.", str("A path on the cabinet."))),
			req("kept", array("Files left because they changed since the install, or are not Cabinet's.", str("A path on the cabinet."))),
		)...))
	return t, typed(func(ctx context.Context, a uninstallArgs) (UninstallResult, error) {
		game, err := e.LookupGame(ctx, a.System, a.GameID)
		if err != nil {
			return UninstallResult{}, refuse("EmulationStation does not list that game: find it with batocera_find_games.")
		}
		name := fmt.Sprintf("%s (%s)", untrusted.Clean(gameName(game), 100), systemName(a.System))
		if g.dryRun {
			return UninstallResult{ActionResult: actionResult(cabinet, outcomeDryRun, "Would remove "+name+" if Cabinet installed it.",
				[]string{"GET /reloadgames"}, nil), Removed: []string{}, Kept: []string{}}, nil
		}
		res, err := in.Uninstall(ctx, e, a.System, a.GameID)
		if err != nil {
			return UninstallResult{}, installFailure(err)
		}
		detail := fmt.Sprintf("Removed %s: %d file(s).", name, len(res.Removed))
		if len(res.Kept) > 0 {
			detail += fmt.Sprintf(" %d changed file(s) left on the cabinet.", len(res.Kept))
		}
		out := UninstallResult{ActionResult: actionResult(cabinet, outcomeDone, detail, res.Sent, res.Warnings),
			Removed: nonNil(res.Removed), Kept: nonNil(res.Kept)}
		return out, nil
	})
}
