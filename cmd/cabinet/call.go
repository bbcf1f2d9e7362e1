package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/hook/socket"
)

type callCommand struct{ env *env }

func (c *callCommand) Run(ctx context.Context, args []string) error {
	var sets setFlag
	fs := newFlags(c.env, "call", "[--dry-run] TOOL [key=value...]", `Call one MCP tool through the same handlers an assistant uses and print its
structured result as JSON; exit 1 when the tool reports an error. Values are parsed
by the tool's schema (numbers, booleans). --list lists the tools. While the daemon
runs the call goes through it (its rate limits, its play history).
Examples:
  cabinet call batocera_find_games query="street fighter" limit=5
  cabinet call --dry-run batocera_launch_game system=nes game_id=<id>`, &sets)
	dryRun := fs.Bool("dry-run", false, "report what would be sent and send nothing")
	list := fs.Bool("list", false, "list the tools")
	standalone := fs.Bool("standalone", false, "do not use the daemon even if it runs")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	l := loadConfig(c.env, sets)
	local, err := localTools(&l.Config, *dryRun)
	if err != nil {
		return err
	}
	if *list {
		names := local.ToolNames()
		sort.Strings(names)
		for _, n := range names {
			t, _ := local.Tool(n)
			fmt.Fprintf(c.env.Stdout, "%-28s %s\n", n, firstSentence(t.Description))
		}
		return nil
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: name a tool (cabinet call --list)", errUsage)
	}
	name := fs.Arg(0)
	sock := ""
	if !*standalone {
		sock = l.Config.Layout().Socket()
	}
	var cl *client.Client
	tool, ok := local.Tool(name)
	if !ok && sock != "" {
		// Some tools only the daemon offers (the household's play-time
		// rules, which it keeps): ask it for the tool's schema.
		if cl, err = c.client(ctx, sock, local, *dryRun); err != nil {
			return err
		}
		defer cl.Close()
		tool, ok = listedTool(ctx, cl, name)
	}
	if !ok {
		return fmt.Errorf("%w: no tool %q (cabinet call --list)", errUsage, name)
	}
	callArgs, err := tools.ParseCallArgs(tool, fs.Args()[1:])
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if cl == nil {
		if cl, err = c.client(ctx, sock, local, *dryRun); err != nil {
			return err
		}
		defer cl.Close()
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := cl.CallTool(cctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: callArgs}})
	if err != nil {
		return fmt.Errorf("call %s: %w", name, err)
	}
	if err := printResult(c.env.Stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return &codedError{msg: toolErrorText(res), code: exitError}
	}
	return nil
}

// client connects to the daemon's MCP when it runs, else in-process.
func (c *callCommand) client(ctx context.Context, sock string, local *tools.Server, dryRun bool) (*client.Client, error) {
	var cl *client.Client
	if sock != "" {
		if conn, err := socket.DialMCP(ctx, sock, dryRun); err == nil {
			tr := transport.NewIO(conn, conn, io.NopCloser(strings.NewReader("")))
			// Closing the session ends the read loop; that is no error.
			transport.WithCommandLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))(tr)
			cl = client.NewClient(tr)
		}
	}
	if cl == nil {
		var err error
		if cl, err = client.NewInProcessClient(local.MCP()); err != nil {
			return nil, err
		}
	}
	ictx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := cl.Start(ictx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "cabinet call", Version: buildVersion()}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := cl.Initialize(ictx, req); err != nil {
		cl.Close()
		return nil, fmt.Errorf("mcp initialize: %w", err)
	}
	return cl, nil
}

// listedTool is the tool named name in cl's tools/list (the daemon's when
// cl speaks to it).
func listedTool(ctx context.Context, cl *client.Client, name string) (mcp.Tool, bool) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := cl.ListTools(lctx, mcp.ListToolsRequest{})
	if err != nil {
		return mcp.Tool{}, false
	}
	for _, t := range res.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return mcp.Tool{}, false
}

// printResult prints the structured content (or the text) as JSON, and
// says when an image came back (a screenshot).
func printResult(w io.Writer, res *mcp.CallToolResult) error {
	out := map[string]any{}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		var v any
		json.Unmarshal(b, &v)
		if m, ok := v.(map[string]any); ok {
			out = m
		} else {
			out["result"] = v
		}
	}
	for _, ct := range res.Content {
		switch x := ct.(type) {
		case mcp.ImageContent:
			out["image"] = map[string]any{"mime_type": x.MIMEType, "base64_bytes": len(x.Data)}
		case mcp.TextContent:
			if res.StructuredContent == nil {
				out["text"] = x.Text
			}
		}
	}
	if res.IsError {
		out["is_error"] = true
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func toolErrorText(res *mcp.CallToolResult) string {
	for _, ct := range res.Content {
		if t, ok := ct.(mcp.TextContent); ok {
			return t.Text
		}
	}
	return "the tool reported an error"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}
