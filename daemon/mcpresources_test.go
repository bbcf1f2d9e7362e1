package daemon

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/hook/socket"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// resWatcher keeps the resources/updated one client gets.
type resWatcher struct {
	name string
	mu   sync.Mutex
	got  []string
	more chan struct{}
}

func watch(name string, c *client.Client) *resWatcher {
	w := &resWatcher{name: name, more: make(chan struct{}, 1)}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationResourceUpdated) {
			return
		}
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		w.mu.Lock()
		w.got = append(w.got, uri)
		w.mu.Unlock()
		select {
		case w.more <- struct{}{}:
		default:
		}
	})
	return w
}

// await waits until the client was told of uri, and forgets what came until then.
func (w *resWatcher) await(t *testing.T, uri string) {
	t.Helper()
	deadline := time.After(cabinettest.Deadline)
	for {
		w.mu.Lock()
		for i, u := range w.got {
			if u == uri {
				w.got = w.got[i+1:]
				w.mu.Unlock()
				return
			}
		}
		w.mu.Unlock()
		select {
		case <-w.more:
		case <-deadline:
			w.mu.Lock()
			defer w.mu.Unlock()
			t.Fatalf("%s: never told of %s (told of %q since)", w.name, uri, w.got)
		}
	}
}

// socketMCP is an MCP client on the daemon's socket (as `cabinet mcp` bridges one).
func (r *rig) socketMCP(opts ...client.ClientOption) *client.Client {
	r.t.Helper()
	conn, err := socket.DialMCP(cabinettest.Context(r.t), r.cfg.Layout.Socket(), false)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { conn.Close() })
	return mcpSession(r.t, transport.NewIO(conn, conn, io.NopCloser(strings.NewReader(""))), opts...)
}

// httpMCP is an MCP client over HTTP with the default token.
func (r *rig) httpMCP(topts []transport.StreamableHTTPCOption, opts ...client.ClientOption) *client.Client {
	r.t.Helper()
	tok, err := httpauth.ReadToken(r.cfg.Layout.Token())
	if err != nil {
		r.t.Fatal(err)
	}
	tr, err := transport.NewStreamableHTTP("http://"+r.d.HTTPAddr()+"/mcp",
		append(topts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}))...)
	if err != nil {
		r.t.Fatal(err)
	}
	return mcpSession(r.t, tr, opts...)
}

// TestMCPResourceUpdates: clients of both eras, on the socket and over HTTP, are told when the
// engine sees a game start and end — now-playing, and the day's play history once the session is
// logged — and read what changed.
func TestMCPResourceUpdates(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := cabinettest.Context(t)
	socketClient := func(protocol string) *client.Client { return r.socketMCP(client.WithProtocolVersion(protocol)) }
	httpClient := func(protocol string, opts ...transport.StreamableHTTPCOption) *client.Client {
		return r.httpMCP(opts, client.WithProtocolVersion(protocol))
	}
	watched := []string{tools.ResourceNowPlaying, tools.ResourcePlayedToday}
	subscribe := func(c *client.Client) {
		for _, uri := range watched {
			if err := c.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	listen := func(c *client.Client) {
		stop, err := c.ListenAsync(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: watched}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	var ws []*resWatcher
	legacySocket := socketClient(mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	ws = append(ws, watch("socket 2025-11-25", legacySocket))
	subscribe(legacySocket)
	modernSocket := socketClient(mcp.LATEST_PROTOCOL_VERSION)
	ws = append(ws, watch("socket 2026-07-28", modernSocket))
	listen(modernSocket)
	legacyHTTP := httpClient(mcp.LATEST_LEGACY_PROTOCOL_VERSION, transport.WithContinuousListening())
	ws = append(ws, watch("HTTP 2025-11-25", legacyHTTP))
	subscribe(legacyHTTP)
	modernHTTP := httpClient(mcp.LATEST_PROTOCOL_VERSION)
	ws = append(ws, watch("HTTP 2026-07-28", modernHTTP))
	listen(modernHTTP)
	cabinettest.Await(t, "the four subscribers", nil, func() bool { return r.d.mcpServer(false).Subscribers() == 4 })

	name := r.play(0)
	for _, w := range ws {
		w.await(t, tools.ResourceNowPlaying)
	}
	var np struct {
		Playing bool   `json:"playing"`
		Game    string `json:"game"`
		GameID  string `json:"game_id"`
	}
	readJSON(t, modernHTTP, tools.ResourceNowPlaying, &np)
	if !np.Playing || np.Game != name || np.GameID == "" {
		t.Errorf("now-playing while %s runs: %+v", name, np)
	}

	r.clock.Advance(3 * time.Minute)
	res, err := modernSocket.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_quit_game"}})
	if err != nil || res.IsError {
		t.Fatalf("quit: %v %+v", err, res)
	}
	r.ended()
	r.clock.Advance(time.Minute) // past the reorder window: the session is final, and logged
	for _, w := range ws {
		w.await(t, tools.ResourceNowPlaying)
		w.await(t, tools.ResourcePlayedToday)
	}
	readJSON(t, legacySocket, tools.ResourceNowPlaying, &np)
	if np.Playing {
		t.Errorf("now-playing after the game: %+v", np)
	}
	var today struct {
		Sessions []struct {
			Game string `json:"game"`
		} `json:"sessions"`
	}
	readJSON(t, legacyHTTP, tools.ResourcePlayedToday, &today)
	if len(today.Sessions) != 1 || today.Sessions[0].Game != name {
		t.Errorf("played today: %+v", today)
	}
}

func readJSON(t *testing.T, c *client.Client, uri string, v any) {
	t.Helper()
	res, err := c.ReadResource(cabinettest.Context(t), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	text, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		t.Fatalf("%s: %+v", uri, res.Contents)
	}
	if err := json.Unmarshal([]byte(text.Text), v); err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
}

// yesNo answers every question with one action (and yes when it accepts).
type yesNo struct {
	action mcp.ElicitationResponseAction
	asked  chan string
}

func (a yesNo) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked <- req.Params.Message
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a.action,
		Content: map[string]any{"confirm": a.action == mcp.ElicitationResponseActionAccept}}}, nil
}

// TestMCPAsksOverTransports: mcp-go's client asks the person when quitting, in 2026-07-28
// (input_required, retried with the answer) on the socket and over HTTP, and in 2025-11-25 over
// HTTP (elicitation/create on the call's stream): no keeps the game, yes quits it.
func TestMCPAsksOverTransports(t *testing.T) {
	r := newRig(t, nil, nil)
	ctx := cabinettest.Context(t)
	for _, tc := range []struct {
		name, transport, protocol string
		action                    mcp.ElicitationResponseAction
	}{
		{"socket 2026-07-28, no", "socket", mcp.LATEST_PROTOCOL_VERSION, mcp.ElicitationResponseActionDecline},
		{"HTTP 2026-07-28, no", "http", mcp.LATEST_PROTOCOL_VERSION, mcp.ElicitationResponseActionDecline},
		{"HTTP 2025-11-25, no", "http", mcp.LATEST_LEGACY_PROTOCOL_VERSION, mcp.ElicitationResponseActionDecline},
		{"socket 2025-11-25, yes", "socket", mcp.LATEST_LEGACY_PROTOCOL_VERSION, mcp.ElicitationResponseActionAccept},
		{"HTTP 2026-07-28, yes", "http", mcp.LATEST_PROTOCOL_VERSION, mcp.ElicitationResponseActionAccept},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, running := r.cab.ES.Running(); !running {
				// ES alone: the tools ask ES what runs; the tracker plays no part here.
				g := r.cab.Library.Games("nes")[0]
				cabinettest.Await(t, "ES launching "+g.Name, nil, func() (bool, string) {
					if err := r.cab.ES.Launch("nes", g.ID); err != nil {
						return false, err.Error()
					}
					return true, ""
				})
				cabinettest.Await(t, "ES running "+g.Name, nil, func() bool { _, running := r.cab.ES.Running(); return running })
			}
			a := yesNo{action: tc.action, asked: make(chan string, 4)}
			opts := []client.ClientOption{client.WithProtocolVersion(tc.protocol), client.WithElicitationHandler(a)}
			var c *client.Client
			if tc.transport == "socket" {
				c = r.socketMCP(opts...)
			} else {
				c = r.httpMCP(nil, opts...)
			}
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_quit_game"}})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case q := <-a.asked:
				if !strings.HasPrefix(q, "Quit ") {
					t.Errorf("asked %q", q)
				}
			default:
				t.Fatal("not asked")
			}
			yes := tc.action == mcp.ElicitationResponseActionAccept
			if res.IsError == yes {
				t.Errorf("result %+v", res)
			}
			if yes {
				cabinettest.Await(t, "ES showing no game", nil, func() bool { _, running := r.cab.ES.Running(); return !running })
			} else if _, running := r.cab.ES.Running(); !running {
				t.Error("quit after a no")
			}
		})
	}
}
