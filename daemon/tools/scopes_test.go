package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	store "github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// fullRig is the tools rig with every tool registered: play history, RomM
// (the fake, with its API index), ROMarr, the installer, the request store,
// library writes, the household's rules and the save sync. Actions are dry runs: what is tested is who may call.
func fullRig(t *testing.T) *rig {
	t.Helper()
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rommSrv := httptest.NewServer(fr)
	t.Cleanup(rommSrv.Close)
	mc, err := romm.New(romm.Config{URL: rommSrv.URL, Token: fakeromm.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	raSrv := httptest.NewServer(&requestROMarr{body: grabbed})
	t.Cleanup(raSrv.Close)
	rc, err := romarr.New(romarr.Config{URL: raSrv.URL, APIKey: "k-0123456789", Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newRig(t, rigConfig{opts: Options{DryRun: true, ScreenshotWait: 50 * time.Millisecond}, deps: func(d *Deps) {
		d.History = stubHistory{}
		d.Library = Library{RomM: mc, ROMarr: rc, Platforms: platforms.Default(), AllowWrites: true, Installer: anInstaller{},
			APIIndex: VersionedAPIIndex(filepath.Join(d.Paths.StateDir, "romm-api"), mc)}
		d.Requests, d.Daemon = requests.Kept{DB: st}, aDaemon{}
		d.Household = newFakeHousehold(onAt60())
		d.SaveSync, d.SaveSyncWrites = newFakeSaveSync(), true
		esc := d.ES.(*es.Client)
		d.Power = &power.Runner{ES: esc, Routes: es.NewPowerClient(esc)}
	}})
}

// reservedTools are in the scope table before they are registered
// (mcp-tools.md reserves their names).
var reservedTools = []string{"batocera_set_volume", "batocera_set_ui_mode"}

// callArgs are valid arguments for each tool that requires some, so a call
// passes input validation and reaches the scope check.
var callArgs = map[string]map[string]any{
	"batocera_get_game":         {"system": "nes", "game_id": strings.Repeat("0", 32)},
	"batocera_launch_game":      {"system": "nes", "game_id": strings.Repeat("0", 32)},
	"library_uninstall":         {"system": "nes", "game_id": strings.Repeat("0", 32)},
	"library_saves":             {"system": "nes", "game_id": strings.Repeat("0", 32)},
	"library_resolve_save":      {"system": "nes", "game_id": strings.Repeat("0", 32), "slot": "autosave", "keep": "local"},
	"batocera_show_message":     {"text": "hello"},
	"batocera_change_save_slot": {"direction": "next"},
	"batocera_adjust_volume":    {"action": "up"},
	"batocera_power":            {"action": "shutdown"},
	"batocera_set_limits":       {"daily_minutes": 60},
	"batocera_grant_time":       {"minutes": 15},
	"batocera_pause_play":       {"paused": true},
	"batocera_set_player":       {"player": ""},
	"batocera_set_ui_mode":      {"mode": "Kid"},
	"library_search":            {"query": "alpha"},
	"romm_get_rom":              {"rom_id": 1},
	"library_install":           {"rom_id": 1},
	"romm_get_collection":       {"id": "1", "kind": "regular"},
	"romm_api_describe":         {"operation_id": "x"},
	"romm_api_read":             {"operation_id": "x"},
	"romarr_request_game":       {"game": "Streets of Rage 2", "platform": "megadrive"},
	"library_request":           {"game": "Streets of Rage 2", "platform": "megadrive"},
}

// TestScopeTable: every tool registered in the fullest configuration has a
// scope; read tools (annotated read-only) need read and no other tool
// does; the table names no tool beyond those and the reserved ones; the
// scope names are httpauth's.
func TestScopeTable(t *testing.T) {
	if !slices.Equal(Scopes, httpauth.Scopes) {
		t.Errorf("tools.Scopes %v, httpauth.Scopes %v", Scopes, httpauth.Scopes)
	}
	r := fullRig(t)
	registered := map[string]bool{}
	for _, tl := range r.srv.Tools() {
		registered[tl.Name] = true
		need := ToolScope(tl.Name)
		if need == "" {
			t.Errorf("%s has no scope: add it to toolScopes in scopes.go (and mcp-tools.md's scope table)", tl.Name)
			continue
		}
		read := tl.Annotations.ReadOnlyHint != nil && *tl.Annotations.ReadOnlyHint
		if read != (need == ScopeRead) {
			t.Errorf("%s: read-only %v but scope %s", tl.Name, read, need)
		}
	}
	if len(registered) < 34 {
		t.Errorf("only %d tools registered; the rig should register every one", len(registered))
	}
	for name, scope := range toolScopes {
		if !slices.Contains(Scopes, scope) {
			t.Errorf("%s: unknown scope %q", name, scope)
		}
		if !registered[name] && !slices.Contains(reservedTools, name) {
			t.Errorf("%s is in the scope table but no such tool is registered", name)
		}
	}
}

// scopeRefusal reports whether res is the scope refusal for scope.
func scopeRefusal(res *mcp.CallToolResult, scope string) bool {
	return res != nil && res.IsError && strings.Contains(text(res), "this token lacks the scope "+scope+":")
}

// TestScopesEveryTool walks every tool against every scope, in-process
// with the scopes in the context as the HTTP transport puts them: a token
// holding exactly the tool's scope gets past the check (the call may fail
// for other reasons), one without it gets the scope refusal naming the
// scope and the command that grants it. Without scopes in the context
// (stdio, cabinet call) every tool may be called.
func TestScopesEveryTool(t *testing.T) {
	r := fullRig(t)
	for _, tl := range r.srv.Tools() {
		need := ToolScope(tl.Name)
		args := callArgs[tl.Name]
		for _, scope := range Scopes {
			ctx, cancel := context.WithTimeout(WithScopes(context.Background(), []string{scope}), 20*time.Second)
			res, err := r.client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tl.Name, Arguments: args}})
			cancel()
			if err != nil {
				t.Errorf("%s with %s: %v", tl.Name, scope, err)
				continue
			}
			if res.IsError && strings.Contains(text(res), "input schema validation failed") {
				t.Errorf("%s: the test's arguments %v are invalid (%s): fix callArgs", tl.Name, args, text(res))
				continue
			}
			if refused := scopeRefusal(res, need); refused != (scope != need) {
				t.Errorf("%s with only %s: refused for %s %v (%.200s)", tl.Name, scope, need, refused, text(res))
			}
			if scope != need && !strings.Contains(text(res), "cabinet token new --name NAME --scope "+grantList(scope, need)) {
				t.Errorf("%s with only %s: the refusal does not say how to get %s: %s", tl.Name, scope, need, text(res))
			}
		}
		// No scopes at all, and the local caller with every one.
		ctx, cancel := context.WithTimeout(WithScopes(context.Background(), nil), 20*time.Second)
		res, err := r.client.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tl.Name, Arguments: args}})
		cancel()
		if err != nil || !scopeRefusal(res, need) {
			t.Errorf("%s with no scope: %v, %v", tl.Name, err, res)
		}
		res = r.call(tl.Name, args)
		if scopeRefusal(res, need) || strings.Contains(text(res), "lacks the scope") {
			t.Errorf("%s called locally: %s", tl.Name, text(res))
		}
	}
}

// grantList is the --scope of the command a refusal suggests to a token
// holding have that lacks need.
func grantList(have, need string) string {
	var out []string
	for _, s := range Scopes {
		if s == have || s == need {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// httpRig serves the fullest tools server over Streamable HTTP behind the
// real guard, as the daemon does (daemon/http.go's httpScopes is the same
// one line), with one named token per scope and the default token.
type httpRig struct {
	*rig
	url    string
	tokens map[string]string // scope (or "default") → token
}

func newHTTPRig(t *testing.T) *httpRig {
	t.Helper()
	r := fullRig(t)
	dir := t.TempDir()
	st := httpauth.NewStore(filepath.Join(dir, "token"))
	h := &httpRig{rig: r, tokens: map[string]string{}}
	var err error
	if h.tokens["default"], _, err = st.Create(httpauth.DefaultName, nil); err != nil {
		t.Fatal(err)
	}
	for _, scope := range Scopes {
		if h.tokens[scope], _, err = st.Create("only-"+scope, []string{scope}); err != nil {
			t.Fatal(err)
		}
	}
	guard := httpauth.New(httpauth.Options{TokenPath: st.DefaultPath})
	mcpHTTP := server.NewStreamableHTTPServer(r.srv.MCP(), server.WithHTTPContextFunc(func(ctx context.Context, req *http.Request) context.Context {
		c, _ := httpauth.CallerFrom(req.Context())
		return WithScopes(ctx, c.Scopes)
	}))
	srv := httptest.NewServer(guard.Wrap(mcpHTTP))
	t.Cleanup(srv.Close)
	t.Cleanup(guard.Flush)
	h.url = srv.URL + "/mcp"
	return h
}

func (h *httpRig) client(token, protocol string) *client.Client {
	h.t.Helper()
	tr, err := transport.NewStreamableHTTP(h.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		h.t.Fatal(err)
	}
	var opts []client.ClientOption
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "scopes-test", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		h.t.Fatal(err)
	}
	return c
}

// TestScopesOverHTTP: through the real guard and mcp-go's Streamable HTTP
// client, one tool per scope against a token of every scope, in both
// protocol eras: every tool is listed to every token, a call outside the
// token's scopes is a tool error (not a transport error) naming the scope.
func TestScopesOverHTTP(t *testing.T) {
	h := newHTTPRig(t)
	probe := map[string]string{ScopeRead: "batocera_get_status", ScopePlay: "batocera_pause_game", ScopeLibrary: "romarr_request_game",
		ScopePower: "batocera_power", ScopeHousehold: "batocera_set_limits"}
	for _, protocol := range []string{"", mcp.ProtocolVersion20251125} {
		for holder, tok := range h.tokens {
			c := h.client(tok, protocol)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatalf("%s (%q): list: %v", holder, protocol, err)
			}
			if len(list.Tools) != len(h.srv.Tools()) {
				t.Errorf("%s (%q): %d tools listed, want all %d", holder, protocol, len(list.Tools), len(h.srv.Tools()))
			}
			have := []string{holder}
			if holder == "default" {
				have = httpauth.DefaultTokenScopes
			}
			for need, tool := range probe {
				res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: callArgs[tool]}})
				if err != nil {
					t.Errorf("%s (%q) calls %s: transport error %v", holder, protocol, tool, err)
					continue
				}
				if refused, want := scopeRefusal(res, need), !slices.Contains(have, need); refused != want {
					t.Errorf("%s (%q) calls %s: refused %v, want %v (%.200s)", holder, protocol, tool, refused, want, text(res))
				}
			}
			cancel()
		}
	}
}

// TestNoScopesOverHTTPRefusesAll: a Streamable HTTP server whose context
// func forgot the scopes still refuses every call (the request has
// headers, so it is not local).
func TestNoScopesOverHTTPRefusesAll(t *testing.T) {
	r := fullRig(t)
	srv := httptest.NewServer(server.NewStreamableHTTPServer(r.srv.MCP()))
	t.Cleanup(srv.Close)
	c, err := client.NewStreamableHttpClient(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_get_status"}})
	if err != nil || !scopeRefusal(res, ScopeRead) {
		t.Errorf("get_status over HTTP without scopes: %v, %v", err, res)
	}
}
