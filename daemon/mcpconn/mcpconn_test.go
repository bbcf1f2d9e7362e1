package mcpconn

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// kit is an MCP server with a tool that waits until released and one that logs to its caller,
// served over a real unix socket, a session per connection.
type kit struct {
	t       *testing.T
	path    string
	release chan struct{}
}

func newKit(t *testing.T) *kit {
	k := &kit{t: t, path: filepath.Join(t.TempDir(), "mcp.sock"), release: make(chan struct{})}
	s := server.NewMCPServer("test", "1", server.WithLogging())
	s.AddTool(mcp.NewTool("wait"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-k.release:
			return mcp.NewToolResultText("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(mcp.NewTool("hello", mcp.WithString("who")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		who := req.GetString("who", "")
		s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "test", "to "+who))
		return mcp.NewToolResultText("hello " + who), nil
	})
	s.AddTool(mcp.NewTool("ask"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ans := server.ElicitationResponse(req.Params.InputResponses, "q"); ans != nil {
			return mcp.NewToolResultText(string(ans.Action)), nil
		}
		return server.NewInputRequestBuilder("").Elicit("q", mcp.ElicitationParams{Message: "sure?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}).ToolResult(), nil
	})
	ln, err := net.Listen("unix", k.path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				Serve(ctx, s, conn)
			})
		}
	})
	return k
}

// session connects and initializes a client; logs gets the log messages it is sent.
func (k *kit) session(logs chan<- string, opts ...client.ClientOption) *client.Client {
	k.t.Helper()
	conn, err := net.Dial("unix", k.path)
	if err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() { conn.Close() })
	c := client.NewClient(transport.NewIO(conn, conn, io.NopCloser(strings.NewReader(""))), opts...)
	ctx := cabinettest.Context(k.t)
	if err := c.Start(ctx); err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() { c.Close() })
	if logs != nil {
		c.OnNotification(func(n mcp.JSONRPCNotification) {
			if n.Method == "notifications/message" {
				if d, ok := n.Params.AdditionalFields["data"].(string); ok {
					logs <- d
				}
			}
		})
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		k.t.Fatal(err)
	}
	if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		k.t.Fatal(err)
	}
	return c
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	res, err := c.CallTool(cabinettest.Context(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %+v", tool, err, res)
	}
	return res.Content[0].(mcp.TextContent).Text
}

// TestSessionsAtOnce: three connections at once, each its own session: each call answered on its
// own connection, each log message to its own caller only; a slow call does not hold up a quick
// one on the same connection.
func TestSessionsAtOnce(t *testing.T) {
	k := newKit(t)
	var logs [3]chan string
	var cs [3]*client.Client
	for i := range cs {
		logs[i] = make(chan string, 8)
		cs[i] = k.session(logs[i])
	}
	slow := make(chan string, 1)
	go func() {
		res, err := cs[0].CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "wait"}})
		if err != nil || res.IsError {
			slow <- "failed"
			return
		}
		slow <- res.Content[0].(mcp.TextContent).Text
	}()
	for i, c := range cs {
		who := string(rune('a' + i))
		if got := call(t, c, "hello", map[string]any{"who": who}); got != "hello "+who {
			t.Errorf("session %d: %q", i, got)
		}
		select {
		case l := <-logs[i]:
			if l != "to "+who {
				t.Errorf("session %d got the log %q", i, l)
			}
		case <-time.After(cabinettest.Deadline):
			t.Fatalf("session %d: no log message", i)
		}
	}
	close(k.release)
	if got := <-slow; got != "released" {
		t.Errorf("the slow call: %q", got)
	}
	for i := range logs {
		select {
		case l := <-logs[i]:
			t.Errorf("session %d got another's log %q", i, l)
		default:
		}
	}
}

// TestBounds: blank lines and CRLF are taken; a message over MaxMessage is answered with an error
// and ends the connection, not the server.
func TestBounds(t *testing.T) {
	k := newKit(t)
	conn, err := net.Dial("unix", k.path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	io.WriteString(conn, "\n\r\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\r\n")
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) || !strings.Contains(line, `"result"`) {
		t.Fatalf("ping: %q %v", line, err)
	}
	go io.WriteString(conn, `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"`+strings.Repeat("x", MaxMessage)+`"}}`+"\n")
	line, err := r.ReadString('\n')
	if err != nil || !strings.Contains(line, "over 4 MiB") {
		t.Fatalf("a message over the bound: %q %v", line, err)
	}
	if _, err := r.ReadString('\n'); err == nil {
		t.Error("the connection stays open after a message over the bound")
	}
	// The server still serves others.
	if got := call(t, k.session(nil), "hello", map[string]any{"who": "z"}); got != "hello z" {
		t.Errorf("another connection: %q", got)
	}
}

type answer mcp.ElicitationResponseAction

func (a answer) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(a)}}, nil
}

// TestAskOnTheConnection: a tool that asks the person reaches a 2025-11-25 client on its own
// connection (elicitation/create, answered on it) and a 2026-07-28 one as input_required; each
// gets its own answer back.
func TestAskOnTheConnection(t *testing.T) {
	k := newKit(t)
	for _, tc := range []struct {
		era    string
		answer answer
	}{
		{mcp.LATEST_LEGACY_PROTOCOL_VERSION, answer(mcp.ElicitationResponseActionAccept)},
		{mcp.LATEST_LEGACY_PROTOCOL_VERSION, answer(mcp.ElicitationResponseActionDecline)},
		{mcp.LATEST_PROTOCOL_VERSION, answer(mcp.ElicitationResponseActionCancel)},
	} {
		c := k.session(nil, client.WithProtocolVersion(tc.era), client.WithElicitationHandler(tc.answer))
		if got := call(t, c, "ask", nil); got != string(tc.answer) {
			t.Errorf("%s: %q, want %q", tc.era, got, tc.answer)
		}
	}
}
