package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
)

func serverCall(t *testing.T, s *Server, name string, args map[string]any) (ActionResult, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.Call(ctx, name, args)
	if err != nil {
		return ActionResult{}, err.Error(), true
	}
	var a ActionResult
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &a)
	}
	return a, text(res), res.IsError
}

// TestCallSharesTheGuard proves Server.Call is a tools/call like any other:
// it spends the same rate-limit budget as an MCP client, and read-only and
// dry-run hold for it too.
func TestCallSharesTheGuard(t *testing.T) {
	msg := map[string]any{"text": "Dinner is ready", "target": "notification"}
	t.Run("rate limit shared with MCP clients", func(t *testing.T) {
		r := newRig(t, rigConfig{})
		for i := 0; i < DefaultLimits().Message.Burst; i++ {
			r.action("batocera_show_message", msg)
		}
		_, txt, isErr := serverCall(t, r.srv, "batocera_show_message", msg)
		if !isErr || !strings.Contains(txt, "Rate limit") {
			t.Fatalf("Call after the burst: isError=%v %q, want a rate-limit refusal", isErr, txt)
		}
		r.clock.Advance(time.Minute)
		if a, txt, isErr := serverCall(t, r.srv, "batocera_show_message", msg); isErr || a.Outcome != outcomeDone {
			t.Fatalf("Call after the wait: %+v %q", a, txt)
		}
		if got, want := r.es.CallCount(fakees.RouteNotify), DefaultLimits().Message.Burst+1; got != want {
			t.Errorf("ES got %d notifications, want %d", got, want)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		r := newRig(t, rigConfig{opts: Options{ReadOnly: true}})
		if _, txt, isErr := serverCall(t, r.srv, "batocera_show_message", msg); !isErr {
			t.Fatalf("read-only server ran a write tool: %q", txt)
		}
		if a, txt, isErr := serverCall(t, r.srv, "batocera_get_status", nil); isErr {
			t.Fatalf("read tool refused: %+v %q", a, txt)
		}
		if n := r.es.CallCount(fakees.RouteNotify); n != 0 {
			t.Errorf("ES got %d notifications", n)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		r := newRig(t, rigConfig{opts: Options{DryRun: true}})
		a, txt, isErr := serverCall(t, r.srv, "batocera_show_message", msg)
		if isErr || a.Outcome != outcomeDryRun {
			t.Fatalf("dry run: %+v %q", a, txt)
		}
		if n := r.es.CallCount(fakees.RouteNotify); n != 0 {
			t.Errorf("ES got %d notifications in a dry run", n)
		}
	})
}
