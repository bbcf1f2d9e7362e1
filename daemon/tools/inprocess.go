package tools

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Call runs one tool through the MCP server exactly as a client's
// tools/call would: the read-only filter, input and output schema
// validation and the guard (rate limits, refusals, dry-run) all apply, and
// rate limits are shared with every other client of this Server. The
// daemon's Home Assistant controls use it, so no control can do what the
// tool would refuse. A refusal is a result with IsError set; err is an
// infrastructure failure.
func (s *Server) Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	cl, err := client.NewInProcessClient(s.mcp)
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", name, err)
	}
	defer cl.Close()
	if err := cl.Start(ctx); err != nil {
		return nil, fmt.Errorf("call %s: start: %w", name, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "cabinet-in-process", Version: "1"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := cl.Initialize(ctx, init); err != nil {
		return nil, fmt.Errorf("call %s: initialize: %w", name, err)
	}
	res, err := cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return nil, fmt.Errorf("call %s: %w", name, err)
	}
	return res, nil
}
