package daemon

import (
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestSocketMCPSessionsAtOnce: two MCP clients on the socket at the same time (Claude Desktop
// and Claude Code both through `cabinet mcp`, or `cabinet call` while one is connected) each
// get their answers.
func TestSocketMCPSessionsAtOnce(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := cabinettest.Context(t)
	for i := range 3 {
		conn, err := socket.DialMCP(ctx, r.cfg.Layout.Socket(), false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		c := mcpSession(t, transport.NewIO(conn, conn, io.NopCloser(strings.NewReader(""))))
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_get_status"}})
		if err != nil || res.IsError {
			t.Fatalf("session %d, while %d others are open: %v %+v", i+1, i, err, res)
		}
	}
}
