package tools

import (
	"context"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// effect is what a tool does to the cabinet; it sets all four annotation
// hints (mcp-go defaults an unannotated tool to destructive and open-world).
type effect int

const (
	reads       effect = iota // changes nothing
	writes                    // changes something that can be undone
	destroys                  // loses something: unsaved progress, the current game state
	effectCount               // for tests
)

// define builds a cabinet tool's definition with its title and every
// annotation hint set explicitly. A cabinet tool reaches nothing beyond the
// cabinet: openWorld is false.
func define(name, title, description string, e effect, idempotent bool, opts ...mcp.ToolOption) mcp.Tool {
	return definition(name, title, description, e, idempotent, false, opts...)
}

// defineLibrary is define for the library tools, which reach the
// household's RomM and ROMarr servers: openWorld is true.
func defineLibrary(name, title, description string, e effect, idempotent bool, opts ...mcp.ToolOption) mcp.Tool {
	return definition(name, title, description, e, idempotent, true, opts...)
}

func definition(name, title, description string, e effect, idempotent, openWorld bool, opts ...mcp.ToolOption) mcp.Tool {
	base := []mcp.ToolOption{
		mcp.WithDescription(description),
		mcp.WithToolTitle(title),
		mcp.WithTitleAnnotation(title),
		mcp.WithReadOnlyHintAnnotation(e == reads),
		mcp.WithDestructiveHintAnnotation(e == destroys),
		mcp.WithIdempotentHintAnnotation(e == reads || idempotent),
		mcp.WithOpenWorldHintAnnotation(openWorld),
		mcp.WithToolIcons(toolIcon(name)),
		withInput(), // tools without arguments still get a closed schema
	}
	return mcp.NewTool(name, append(base, opts...)...)
}

// toolset holds the tools in two lists, read and write. Adding a tool to the
// wrong list panics at start-up, so a mis-annotated tool never ships.
type toolset struct {
	read, write []server.ServerTool
}

func (ts *toolset) addRead(t mcp.Tool, h server.ToolHandlerFunc) {
	a := t.Annotations
	if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		panic("tools: read tool " + t.Name + " is not annotated read-only and non-destructive")
	}
	ts.read = append(ts.read, server.ServerTool{Tool: t, Handler: h})
}

func (ts *toolset) addWrite(t mcp.Tool, h server.ToolHandlerFunc) {
	a := t.Annotations
	if a.ReadOnlyHint == nil || *a.ReadOnlyHint || a.DestructiveHint == nil {
		panic("tools: write tool " + t.Name + " is annotated read-only or has no destructive hint")
	}
	ts.write = append(ts.write, server.ServerTool{Tool: t, Handler: h})
}

// buildToolset defines every tool, handing each the dependencies it uses.
// The order is the order of tools/list.
func buildToolset(w wiring) *toolset {
	d, o, g, cat := w.deps, w.opts, w.guard, w.catalog
	ra := raLink{ra: d.RetroArch, es: d.ES, timeout: o.RetroArchTimeout}
	ts := &toolset{}
	ts.addRead(getStatusTool(statusDeps{cabinet: d.Name, mode: modeState{ReadOnly: o.ReadOnly, DryRun: o.DryRun},
		es: d.ES, ra: ra, daemon: d.Daemon, limits: d.Household, saves: d.SaveSync, loc: d.Location}))
	ts.addRead(listSystemsTool(d.ES))
	ts.addRead(findGamesTool(cat, d.Seed, d.Location))
	ts.addRead(getGameTool(d.ES, d.Location))
	ts.addRead(getHealthTool(healthDeps{cabinet: d.Name, version: d.Version, paths: d.Paths, es: d.ES, ra: ra,
		daemon: d.Daemon}))
	if d.History != nil {
		ts.addRead(playHistoryTool(d.History, d.Clock, d.Location))
	}
	if d.Household != nil {
		ts.addRead(getLimitsTool(d.Household, d.Name))
	}

	ts.addWrite(launchGameTool(w.launcher()))
	ts.addWrite(quitGameTool(w.quitter()))
	ts.addWrite(showMessageTool(ra, d.ES, g, d.Name))
	ts.addWrite(reloadGamesTool(d.ES, g, cat, d.Name))
	ts.addWrite(pauseGameTool(ra, g, d.Name))
	ts.addWrite(saveStateTool(ra, g, d.Name))
	ts.addWrite(loadStateTool(ra, g, d.Name))
	ts.addWrite(changeSaveSlotTool(ra, g, d.Name))
	ts.addWrite(takeScreenshotTool(ra, g, d.Name, shotFolder{dir: d.Paths.ScreenshotDir, wait: o.ScreenshotWait,
		maxBytes: o.MaxScreenshotBytes}))
	ts.addWrite(resetGameTool(ra, g, d.Name))
	ts.addWrite(adjustVolumeTool(ra, g, d.Name))
	if d.Volume != nil {
		ts.addWrite(setVolumeTool(d.Volume, g, d.Name))
	}
	if d.Power != nil {
		ts.addWrite(powerTool(d.Power, g, d.Name))
	}
	if d.Household != nil {
		ts.addWrite(setLimitsTool(d.Household, g, d.Name))
		ts.addWrite(grantTimeTool(d.Household, g, d.Name))
		ts.addWrite(pausePlayTool(d.Household, g, d.Name))
		ts.addWrite(setPlayerTool(d.Household, g, d.Name))
		ts.addWrite(setUIModeTool(d.Household, g, d.Name))
	}
	addLibraryTools(ts, w)
	return ts
}

// addLibraryTools registers the library tools of the servers that are
// configured; the write ones only with cabinet.library.allow_writes. The
// save tools come with the daemon's save sync (Deps.SaveSync), the ones that
// change files only when it is asked for (Deps.SaveSyncWrites).
func addLibraryTools(ts *toolset, w wiring) {
	lib := w.deps.Library
	if lib.Platforms == nil {
		lib.Platforms = platforms.Default()
	}
	l := libraryTools{lib: lib, es: w.deps.ES, daemon: w.deps.Daemon, mark: &cabinetMarker{cat: w.catalog, installs: w.deps.Installs, rommURL: lib.RomMURL}}
	if lib.RomM != nil || lib.ROMarr != nil {
		ts.addRead(l.statusTool())
		ts.addRead(l.searchTool())
	}
	if lib.RomM != nil {
		ts.addRead(l.getROMTool())
		ts.addRead(l.listPlatformsTool())
		ts.addRead(l.listCollectionsTool())
		ts.addRead(l.getCollectionTool())
		if lib.APIIndex != nil {
			ts.addRead(l.apiListTool(lib.APIIndex))
			ts.addRead(l.apiDescribeTool(lib.APIIndex))
			ts.addRead(l.apiReadTool(lib.APIIndex))
		}
	}
	if lib.RomM != nil && lib.Installer != nil {
		ts.addWrite(installTool(lib.Installer, w.launcher()))
		ts.addWrite(uninstallTool(lib.Installer, w.deps.ES, w.guard, w.deps.Name))
	}
	if r := lib.ROMarr; r != nil {
		ts.addRead(romarrStatusTool(r))
		ts.addRead(romarrWantedTool(r))
		ts.addRead(romarrQueueTool(r))
		if lib.AllowWrites {
			ts.addWrite(romarrRequestTool(r, w.guard, w.deps.Name))
		}
		if s := w.deps.Requests; s != nil {
			ts.addRead(libraryRequestsTool(s))
			if lib.AllowWrites {
				ts.addWrite(libraryRequestTool(requestDeps{lib: lib, store: s, guard: w.guard, clock: w.deps.Clock,
					cabinet: w.deps.Name, daemon: w.deps.Daemon != nil}))
			}
		}
	}
	if ss := w.deps.SaveSync; ss != nil {
		st := saveTools{ss: ss, es: w.deps.ES, guard: w.guard, cabinet: w.deps.Name, loc: w.deps.Location}
		ts.addRead(st.savesTool())
		if w.deps.SaveSyncWrites {
			ts.addWrite(st.syncSavesTool())
			ts.addWrite(st.resolveSaveTool())
		}
	}
}

// registered is what the server registers: in read-only mode the write
// tools are left out entirely.
func (ts *toolset) registered(readOnly bool) []server.ServerTool {
	if readOnly {
		return ts.read
	}
	return append(append([]server.ServerTool(nil), ts.read...), ts.write...)
}

// filter refuses write tools again at call time in read-only mode (mcp-go
// applies tool filters to tools/call as well as tools/list), so a write
// tool registered by mistake, or added later by someone else, still cannot
// run.
func (ts *toolset) filter(readOnly bool) server.ToolFilterFunc {
	write := map[string]bool{}
	for _, t := range ts.write {
		write[t.Tool.Name] = true
	}
	return func(_ context.Context, tools []mcp.Tool) []mcp.Tool {
		if !readOnly {
			return tools
		}
		out := tools[:0:0]
		for _, t := range tools {
			if !write[t.Name] && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint {
				out = append(out, t)
			}
		}
		return out
	}
}
