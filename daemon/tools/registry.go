package tools

import (
	"context"

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

// define builds a tool definition with its title and every annotation hint
// set explicitly. Nothing here reaches beyond the cabinet, so openWorld is
// false throughout.
func define(name, title, description string, e effect, idempotent bool, opts ...mcp.ToolOption) mcp.Tool {
	base := []mcp.ToolOption{
		mcp.WithDescription(description),
		mcp.WithToolTitle(title),
		mcp.WithTitleAnnotation(title),
		mcp.WithReadOnlyHintAnnotation(e == reads),
		mcp.WithDestructiveHintAnnotation(e == destroys),
		mcp.WithIdempotentHintAnnotation(e == reads || idempotent),
		mcp.WithOpenWorldHintAnnotation(false),
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

// buildToolset defines every tool. The order is the order of tools/list.
func buildToolset(h *handlers) *toolset {
	ts := &toolset{}
	ts.addRead(getStatusTool(h))
	ts.addRead(listSystemsTool(h))
	ts.addRead(findGamesTool(h))
	ts.addRead(getGameTool(h))
	ts.addRead(getHealthTool(h))
	if h.history != nil {
		ts.addRead(playHistoryTool(h))
	}

	ts.addWrite(launchGameTool(h))
	ts.addWrite(quitGameTool(h))
	ts.addWrite(showMessageTool(h))
	ts.addWrite(reloadGamesTool(h))
	ts.addWrite(pauseGameTool(h))
	ts.addWrite(saveStateTool(h))
	ts.addWrite(loadStateTool(h))
	ts.addWrite(changeSaveSlotTool(h))
	ts.addWrite(takeScreenshotTool(h))
	ts.addWrite(resetGameTool(h))
	ts.addWrite(adjustVolumeTool(h))
	return ts
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
