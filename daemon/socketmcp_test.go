package daemon

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestSocketMCPSessionsAtOnce: two MCP clients on the socket at the same time (Claude Desktop
// and Claude Code both through `cabinet mcp`, or `cabinet call` while one is connected) each
// get their answers.
func TestSocketMCPSessionsAtOnce(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := cabinettest.Context(t)
	for i := range 3 {
		c := r.socketMCP()
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_get_status"}})
		if err != nil || res.IsError {
			t.Fatalf("session %d, while %d others are open: %v %+v", i+1, i, err, res)
		}
	}
}
