package tools

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// answerer answers every question with one action, and keeps the questions.
type answerer struct {
	action mcp.ElicitationResponseAction
	yes    bool
	mu     sync.Mutex
	asked  []string
}

func (a *answerer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params.Message)
	a.mu.Unlock()
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a.action}}
	if a.action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"confirm": a.yes}
	}
	return res, nil
}

func (a *answerer) questions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

// TestConfirmQuit: in both eras a client that can ask is asked before a game is quit, with the
// game's name; yes quits, no and a dismissed question quit nothing and say so; a client that
// cannot ask quits as before, unasked.
func TestConfirmQuit(t *testing.T) {
	for _, era := range []string{"", mcp.LATEST_LEGACY_PROTOCOL_VERSION} {
		for _, tc := range []struct {
			name   string
			answer *answerer // nil: the client cannot ask
			quits  bool
			says   string
		}{
			{"yes", &answerer{action: mcp.ElicitationResponseActionAccept, yes: true}, true, ""},
			{"no", &answerer{action: mcp.ElicitationResponseActionDecline}, false, "the person said no"},
			{"unchecked", &answerer{action: mcp.ElicitationResponseActionAccept, yes: false}, false, "the person said no"},
			{"dismissed", &answerer{action: mcp.ElicitationResponseActionCancel}, false, "dismissed without an answer"},
			{"cannot ask", nil, true, ""},
		} {
			t.Run(era+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, rigConfig{})
				var c *client.Client
				if tc.answer != nil {
					c = r.connect(era, client.WithElicitationHandler(tc.answer))
				} else {
					c = r.connect(era)
				}
				r.launch("nes", "Tetris")
				res, err := c.CallTool(cabinettest.Context(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_quit_game"}})
				if err != nil {
					t.Fatal(err)
				}
				quit := r.es.CallCount(fakees.RouteEmuKill) > 0
				if quit != tc.quits || res.IsError != !tc.quits || (tc.says != "" && !strings.Contains(text(res), tc.says)) {
					t.Errorf("quit %v, result %v %q", quit, res.IsError, text(res))
				}
				if tc.answer != nil {
					if q := tc.answer.questions(); len(q) != 1 || !strings.Contains(q[0], "Quit Tetris") {
						t.Errorf("asked %q", q)
					}
				}
			})
		}
	}
}

// TestConfirmPower: a client that can ask is asked instead of needing confirm: true (yes sends
// the shutdown, whatever confirm says); one that cannot keeps confirm exactly as before.
func TestConfirmPower(t *testing.T) {
	r, _ := powerRig(t, Options{})
	yes := &answerer{action: mcp.ElicitationResponseActionAccept, yes: true}
	asking := r.connect("", client.WithElicitationHandler(yes))
	res, err := asking.CallTool(cabinettest.Context(t), mcp.CallToolRequest{Params: mcp.CallToolParams{
		Name: "batocera_power", Arguments: map[string]any{"action": "restart_es"}}})
	if err != nil || res.IsError {
		t.Fatalf("%v %q", err, text(res))
	}
	if q := yes.questions(); len(q) != 1 || !strings.Contains(q[0], "EmulationStation") || !strings.HasSuffix(q[0], "Go ahead?") {
		t.Errorf("asked %q", q)
	}
	if got := quitRoutes(r); got != fakees.RouteQuit {
		t.Errorf("sent %q (%q)", got, text(res))
	}
	if a := r.action("batocera_power", map[string]any{"action": "restart_es"}); a.Outcome != outcomeDryRun {
		t.Errorf("a client that cannot ask, without confirm: %+v", a)
	}
}

// TestConfirmState: a 2026-07-28 client gets input_required with a requestState; an answer sent
// with another call's state, a forged one, or none at all is not taken: the question comes again.
func TestConfirmState(t *testing.T) {
	r := newRig(t, rigConfig{})
	c := r.connect("", client.WithElicitationHandler(&answerer{}), client.WithManualInputRoundTrips())
	r.launch("nes", "Tetris")
	ctx := cabinettest.Context(t)
	call := func(state string, answer bool) *mcp.CallToolResult {
		t.Helper()
		req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "batocera_quit_game"}}
		if answer {
			req.Params.RequestState = state
			req.Params.InputResponses = mcp.InputResponses{confirmKey: mcp.NewElicitationInputResponse(
				mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
					Content: map[string]any{"confirm": true}}})}
		}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := call("", false)
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests[confirmKey].Elicitation == nil {
		t.Fatalf("first call: %+v", first)
	}
	for name, state := range map[string]string{"none": "", "forged": forge(first.RequestState), "garbage": "%%%"} {
		if res := call(state, true); !res.NeedsInput() {
			t.Errorf("%s state: %+v", name, res)
		}
	}
	if r.es.CallCount(fakees.RouteEmuKill) != 0 {
		t.Fatal("quit without a valid answer")
	}
	if res := call(first.RequestState, true); res.NeedsInput() || res.IsError {
		t.Fatalf("the answer with its state: %+v %q", res, text(res))
	}
	if r.es.CallCount(fakees.RouteEmuKill) == 0 {
		t.Error("not quit")
	}
}

// forge changes one byte of a state's MAC.
func forge(state string) string {
	b := []byte(state)
	i := len(b) - 5
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}
