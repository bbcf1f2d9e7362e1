package tools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Asking the person (issue 31). The tools that lose something — quit, load a state, reset,
// power, uninstall, the household's rules — ask the person a yes/no with what will happen, when
// their client can ask: 2025-11-25's elicitation/create (mcp-go sends it and calls the handler
// again with the answer), 2026-07-28's input_required result (the client asks and calls again
// with the answer and our requestState). A client that cannot ask sees the tools exactly as
// before (batocera_power keeps its confirm: true). A "no", a dismissed question or an answer to
// another question does nothing and says so. The dry-run server asks nothing: it changes nothing.

// confirmKey is the input request's key (one question per call).
const confirmKey = "confirm"

// askLife is how long a question stands: an answer after it is asked again.
const askLife = 10 * time.Minute

// asker says what one call will do, as a question to the person; "" asks nothing (the call will
// be refused anyway, or changes nothing).
type asker func(ctx context.Context, args map[string]any) string

// confirmer is the tool middleware that asks.
type confirmer struct {
	asks map[string]asker
	key  [32]byte // the requestState's HMAC key, this server's own
	now  func() time.Time
}

func newConfirmer(asks map[string]asker, now func() time.Time) *confirmer {
	c := &confirmer{asks: asks, now: now}
	rand.Read(c.key[:])
	return c
}

// confirmAsks are the questions of the tools that lose something.
func confirmAsks(w wiring) map[string]asker {
	d := w.deps
	cabinet := d.Name
	if cabinet == "" {
		cabinet = "the cabinet"
	}
	running := func(ctx context.Context) string {
		g, err := d.ES.RunningGame(ctx)
		if err != nil || g == nil {
			return ""
		}
		name := untrusted.Clean(g.Name, 100)
		if name == "" {
			name = "the running game"
		}
		return name
	}
	asks := map[string]asker{
		"batocera_quit_game": func(ctx context.Context, _ map[string]any) string {
			if g := running(ctx); g != "" {
				return fmt.Sprintf("Quit %s on %s? Progress the game has not saved is lost.", g, cabinet)
			}
			return ""
		},
		"batocera_load_state": func(ctx context.Context, _ map[string]any) string {
			if g := running(ctx); g != "" {
				return fmt.Sprintf("Load the state saved in the current slot into %s? Progress since that save is lost.", g)
			}
			return ""
		},
		"batocera_reset_game": func(ctx context.Context, _ map[string]any) string {
			if g := running(ctx); g != "" {
				return fmt.Sprintf("Reset %s, like the console's reset button? Progress the game has not saved is lost.", g)
			}
			return ""
		},
		"library_uninstall": func(ctx context.Context, args map[string]any) string {
			system, _ := args["system"].(string)
			id, _ := args["game_id"].(string)
			g, err := d.ES.Game(ctx, system, id)
			if err != nil {
				return ""
			}
			return fmt.Sprintf("Remove %s (%s) from %s? The files Cabinet installed are deleted; saves stay.",
				untrusted.Clean(g.Name, 100), untrusted.Clean(system, 40), cabinet)
		},
		"batocera_set_limits": func(_ context.Context, args map[string]any) string {
			return fmt.Sprintf("Change the play-time rules on %s: %s?", cabinet, ruleChanges(args))
		},
		"batocera_grant_time": func(_ context.Context, args map[string]any) string {
			return fmt.Sprintf("Give %s more minutes of play today on %s?", numberText(args["minutes"]), cabinet)
		},
		"batocera_set_player": func(_ context.Context, args map[string]any) string {
			if p, _ := args["player"].(string); strings.TrimSpace(p) != "" {
				return fmt.Sprintf("Let %s play on %s from the next game, with their own rules and time?", untrusted.Clean(p, 32), cabinet)
			}
			return fmt.Sprintf("Play on %s with no profile (the cabinet's own rules) from the next game?", cabinet)
		},
		"batocera_set_ui_mode": func(_ context.Context, args map[string]any) string {
			m, _ := args["mode"].(string)
			return fmt.Sprintf("Restart EmulationStation on %s in %s mode? Its menus are gone for a few seconds.", cabinet, untrusted.Clean(m, 16))
		},
		"batocera_pause_play": func(_ context.Context, args map[string]any) string {
			if p, _ := args["paused"].(bool); p {
				return fmt.Sprintf("Pause play on %s now? No game can be played until play is resumed.", cabinet)
			}
			return fmt.Sprintf("Resume play on %s?", cabinet)
		},
	}
	if d.Power != nil {
		asks["batocera_power"] = func(ctx context.Context, args map[string]any) string {
			s, _ := args["action"].(string)
			act, err := power.ParseAction(s)
			if err != nil {
				return ""
			}
			in, err := d.Power.Intend(ctx, act)
			if err != nil {
				return ""
			}
			return in.Text + " Go ahead?"
		}
	}
	return asks
}

// numberText is a numeric argument as text ("?" when it is not one: the input schema refuses it).
func numberText(v any) string {
	switch n := v.(type) {
	case float64, int, int64, json.Number:
		return fmt.Sprint(n)
	}
	return "?"
}

// ruleChanges is batocera_set_limits' arguments as the person reads them: "daily_minutes 60,
// bedtime 21:00-07:00".
func ruleChanges(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, _ := json.Marshal(args[k])
		parts = append(parts, k+" "+string(v))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return untrusted.Clean(strings.Join(parts, ", "), 400)
}

// canAsk is whether the caller's client can be asked a form question: the capability it declares
// on this request (2026-07-28) or at initialize (2025-11-25), as the spec reads it ({} is form).
func canAsk(ctx context.Context) bool {
	var caps *mcp.ClientCapabilities
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		caps = info.ClientCapabilities
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		if _, elicits := s.(server.SessionWithElicitation); !elicits {
			return false
		}
		c := s.GetClientCapabilities()
		caps = &c
	}
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// middleware asks before next runs, when the tool has a question and the client can ask.
func (c *confirmer) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ask := c.asks[req.Params.Name]
		if ask == nil || !canAsk(ctx) {
			return next(ctx, req)
		}
		args := req.GetArguments()
		digest := c.digest(ctx, req.Params.Name, args)
		if ans := server.ElicitationResponse(req.Params.InputResponses, confirmKey); ans != nil && c.valid(req.Params.RequestState, digest) {
			switch {
			case ans.Action == mcp.ElicitationResponseActionAccept && accepted(ans.Content):
				if req.Params.Name == "batocera_power" {
					// The question was the confirmation.
					yes := make(map[string]any, len(args)+1)
					for k, v := range args {
						yes[k] = v
					}
					yes["confirm"] = true
					req.Params.Arguments, req.Params.RawArguments = yes, nil
				}
				return next(ctx, req)
			case ans.Action == mcp.ElicitationResponseActionCancel:
				return mcp.NewToolResultError("Not done: the question was dismissed without an answer. Nothing was sent."), nil
			default:
				return mcp.NewToolResultError("Not done: the person said no. Nothing was sent."), nil
			}
		}
		q := ask(ctx, args)
		if q == "" {
			return next(ctx, req)
		}
		return server.NewInputRequestBuilder(c.state(digest)).Elicit(confirmKey, mcp.ElicitationParams{
			Message: q,
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					confirmKey: map[string]any{"type": "boolean", "title": "Yes, do it", "default": false},
				},
				"required": []string{confirmKey},
			},
		}).ToolResult(), nil
	}
}

// accepted is whether an accepted form says yes.
func accepted(content any) bool {
	m, ok := content.(map[string]any)
	if !ok {
		return false
	}
	yes, _ := m[confirmKey].(bool)
	return yes
}

// digest binds a question to its call: the tool, its arguments (but confirm, which the question
// replaces) and the caller's scopes.
func (c *confirmer) digest(ctx context.Context, tool string, args map[string]any) []byte {
	a := make(map[string]any, len(args))
	for k, v := range args {
		if k != "confirm" {
			a[k] = v
		}
	}
	b, _ := json.Marshal(a) // sorted keys
	scopes, local := scopesFrom(ctx)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%v\x00%s", tool, b, local, strings.Join(scopes, ","))
	return h.Sum(nil)
}

// state is the requestState of a question: its expiry and an HMAC of it and the call's digest.
// The client hands it back with the answer; mcp.mdx treats it as the client's to tamper with,
// so an answer counts only for the call it was asked about, and only for askLife.
func (c *confirmer) state(digest []byte) string {
	exp := make([]byte, 8)
	binary.BigEndian.PutUint64(exp, uint64(c.now().Add(askLife).Unix()))
	return base64.RawURLEncoding.EncodeToString(append(exp, c.mac(exp, digest)...))
}

func (c *confirmer) valid(state string, digest []byte) bool {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) != 8+sha256.Size {
		return false
	}
	exp, mac := raw[:8], raw[8:]
	if !hmac.Equal(mac, c.mac(exp, digest)) {
		return false
	}
	return c.now().Unix() <= int64(binary.BigEndian.Uint64(exp))
}

func (c *confirmer) mac(exp, digest []byte) []byte {
	m := hmac.New(sha256.New, c.key[:])
	m.Write(exp)
	m.Write(digest)
	return m.Sum(nil)
}
