package power

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/es"
)

// stubES is the runner's view of ES: a running game (nil: none) that
// EmuKill ends when killEnds.
type stubES struct {
	mu                sync.Mutex
	game              *es.Game
	killEnds          bool
	runningErr, kill  error
	kills, runningAsk int
}

func (s *stubES) RunningGame(context.Context) (*es.Game, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runningAsk++
	return s.game, s.runningErr
}

func (s *stubES) EmuKill(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kills++
	if s.kill != nil {
		return s.kill
	}
	if s.killEnds {
		s.game = nil
	}
	return nil
}

// stubRoutes records the routes called and answers err.
type stubRoutes struct {
	mu     sync.Mutex
	called []string
	err    error
}

func (r *stubRoutes) call(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.called = append(r.called, name)
	return r.err
}
func (r *stubRoutes) RestartES(context.Context) error { return r.call("quit") }
func (r *stubRoutes) Reboot(context.Context) error    { return r.call("restart") }
func (r *stubRoutes) Shutdown(context.Context) error  { return r.call("shutdown") }

func (r *stubRoutes) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.called, ",")
}

var galaga = &es.Game{ID: "0123456789abcdef0123456789abcdef", Name: "Galaga", System: "mame"}

func ctx(t *testing.T) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestRun(t *testing.T) {
	busy := errors.New("a library install is writing to the cabinet: try again when it is done")
	for _, tc := range []struct {
		name   string
		action Action
		es     *stubES
		routes *stubRoutes
		busy   error
		// want
		err    error // errors.Is; nil: success
		sent   string
		routed string
		kills  int
		text   string // a part of the sentence or of the error
	}{
		{name: "shutdown", action: Shutdown, sent: "GET /shutdown", routed: "shutdown",
			text: "Asked EmulationStation to shut down the cabinet, as its Quit menu does"},
		{name: "reboot", action: Reboot, sent: "GET /restart", routed: "restart", text: "restart the cabinet"},
		{name: "restart ES", action: RestartES, sent: "GET /quit", routed: "quit", text: "restart EmulationStation"},
		{name: "a game is quit first", action: Shutdown, es: &stubES{game: galaga, killEnds: true},
			sent: "GET /emukill,GET /shutdown", routed: "shutdown", kills: 1,
			text: "Quit Galaga (mame), then asked EmulationStation to shut down the cabinet"},
		{name: "busy", action: Reboot, es: &stubES{game: galaga, killEnds: true}, busy: busy, err: busy,
			text: "refusing to restart the cabinet: a library install is writing"},
		{name: "ES down", action: Shutdown, es: &stubES{runningErr: fmt.Errorf("GET /runningGame: %w", es.ErrUnavailable)},
			err: ErrESDown, text: "use the Quit menu on the cabinet"},
		{name: "ES down at emukill", action: Shutdown, es: &stubES{game: galaga, kill: es.ErrUnavailable},
			err: ErrESDown, sent: "GET /emukill", kills: 1, text: "cannot quit Galaga (mame) to shut down the cabinet: EmulationStation is not answering"},
		{name: "ES gone before the route", action: Reboot, routes: &stubRoutes{err: fmt.Errorf("GET /restart: nothing was sent: %w", es.ErrUnavailable)},
			err: ErrESDown, sent: "GET /restart", routed: "restart", text: "nothing was sent"},
		{name: "no answer", action: Shutdown, routes: &stubRoutes{err: es.ErrUnconfirmed},
			err: ErrUnconfirmed, sent: "GET /shutdown", routed: "shutdown", text: "probably quitting"},
		{name: "no such route", action: Shutdown, routes: &stubRoutes{err: fmt.Errorf("GET /shutdown: %w", es.ErrNotFound)},
			err: ErrNotOffered, sent: "GET /shutdown", routed: "shutdown", text: "does not offer"},
		{name: "unknown action", action: "halt", text: `power action "halt"`, err: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.es == nil {
				tc.es = &stubES{}
			}
			if tc.routes == nil {
				tc.routes = &stubRoutes{}
			}
			r := &Runner{ES: tc.es, Routes: tc.routes}
			if tc.busy != nil {
				r.Busy = func() error { return tc.busy }
			}
			res, err := r.Do(ctx(t), tc.action)
			switch {
			case tc.err == nil && err != nil:
				t.Fatalf("Do: %v", err)
			case tc.err == errAny && err == nil, tc.err != nil && tc.err != errAny && !errors.Is(err, tc.err):
				t.Fatalf("Do = %v, want %v", err, tc.err)
			}
			msg := res.Text
			if err != nil {
				msg = err.Error()
			}
			if !strings.Contains(msg, tc.text) {
				t.Errorf("Do says %q, want it to contain %q", msg, tc.text)
			}
			if got := strings.Join(res.Sent, ","); got != tc.sent {
				t.Errorf("Sent %q, want %q", got, tc.sent)
			}
			if got := tc.routes.got(); got != tc.routed {
				t.Errorf("routes called %q, want %q", got, tc.routed)
			}
			if tc.es.kills != tc.kills {
				t.Errorf("%d emukills, want %d", tc.es.kills, tc.kills)
			}
			if tc.busy != nil && tc.es.runningAsk != 0 {
				t.Errorf("asked ES %d times while busy, want none", tc.es.runningAsk)
			}
		})
	}
}

// errAny matches any error in TestRun.
var errAny = errors.New("any error")

// TestRunGameDoesNotQuit: the game is still there when QuitWait is up:
// ErrGameStillRunning, and the route is never called.
func TestRunGameDoesNotQuit(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC))
	e, routes := &stubES{game: galaga}, &stubRoutes{}
	r := &Runner{ES: e, Routes: routes, QuitWait: 3 * time.Second, Clock: clk}
	type answer struct {
		res Result
		err error
	}
	done := make(chan answer, 1)
	cx := ctx(t)
	go func() {
		res, err := r.Do(cx, Shutdown)
		done <- answer{res, err}
	}()
	if err := clk.BlockUntil(cx, 2); err != nil { // the wait's timer and ticker
		t.Fatal(err)
	}
	select {
	case a := <-done:
		t.Fatalf("Do returned before the wait was up: %+v", a)
	default:
	}
	clk.Advance(3 * time.Second)
	a := <-done
	if !errors.Is(a.err, ErrGameStillRunning) || !strings.Contains(a.err.Error(), "cannot shut down the cabinet: Galaga (mame) is still running 3s after GET /emukill") {
		t.Errorf("Do = %v, want ErrGameStillRunning naming the game", a.err)
	}
	if got := strings.Join(a.res.Sent, ","); got != "GET /emukill" {
		t.Errorf("Sent %q, want only GET /emukill", got)
	}
	if got := routes.got(); got != "" {
		t.Errorf("routes called %q after the game did not quit", got)
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		action Action
		game   *es.Game
		want   string
		sent   string
	}{
		{"idle", Shutdown, nil, "Would shut down the cabinet, as the Quit menu of EmulationStation does.", "GET /shutdown"},
		{"a game runs", Reboot, galaga, "Would quit Galaga (mame) first (unsaved progress is lost), then restart the cabinet, " +
			"as the Quit menu of EmulationStation does.", "GET /emukill,GET /restart"},
		{"restart ES", RestartES, nil, "Would restart EmulationStation, as the Quit menu of EmulationStation does.", "GET /quit"},
		{"a hostile name", RestartES, &es.Game{Name: "Bad\nName\x1b[31m", System: "nes"}, "Would quit Bad Name[31m (nes) first", "GET /emukill,GET /quit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, routes := &stubES{game: tc.game, killEnds: true}, &stubRoutes{}
			r := &Runner{ES: e, Routes: routes}
			got, err := r.Plan(ctx(t), tc.action)
			if err != nil || !strings.HasPrefix(got, tc.want) {
				t.Errorf("Plan = %q, %v; want %q", got, err, tc.want)
			}
			in, _ := r.Intend(ctx(t), tc.action)
			if s := strings.Join(in.Sent, ","); s != tc.sent || in.Game != tc.game {
				t.Errorf("Intend sent %q game %v, want %q %v", s, in.Game, tc.sent, tc.game)
			}
			if e.kills != 0 || routes.got() != "" {
				t.Errorf("Plan sent something: %d emukills, routes %q", e.kills, routes.got())
			}
		})
	}
	busy := errors.New("an install is writing")
	r := &Runner{ES: &stubES{}, Routes: &stubRoutes{}, Busy: func() error { return busy }}
	if _, err := r.Plan(ctx(t), Shutdown); !errors.Is(err, busy) {
		t.Errorf("Plan while busy = %v, want the busy error", err)
	}
	r = &Runner{ES: &stubES{runningErr: es.ErrUnavailable}, Routes: &stubRoutes{}}
	if _, err := r.Plan(ctx(t), Shutdown); !errors.Is(err, ErrESDown) {
		t.Errorf("Plan with ES down = %v, want ErrESDown", err)
	}
}

func TestParseAction(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Action
		ok   bool
	}{
		{"restart_es", RestartES, true},
		{"reboot", Reboot, true},
		{"shutdown", Shutdown, true},
		{"Shutdown", "", false},
		{"poweroff", "", false},
		{"", "", false},
		{"shutdown ", "", false},
	} {
		got, err := ParseAction(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseAction(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"restart_es", "reboot", "shutdown", "halt", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAction(s)
		if err != nil {
			if a != "" {
				t.Errorf("ParseAction(%q) = %q with an error", s, a)
			}
			return
		}
		if string(a) != s || a.Route() == "" {
			t.Errorf("ParseAction(%q) = %q (route %q)", s, a, a.Route())
		}
	})
}

// TestRunBusyAfterTheGame: an install that starts while the game quits
// stops the action before the route.
func TestRunBusyAfterTheGame(t *testing.T) {
	e, routes := &stubES{game: galaga, killEnds: true}, &stubRoutes{}
	busy := errors.New("an install is writing")
	r := &Runner{ES: e, Routes: routes, Busy: func() error {
		if e.kills > 0 {
			return busy
		}
		return nil
	}}
	res, err := r.Do(ctx(t), Shutdown)
	if !errors.Is(err, busy) || strings.Join(res.Sent, ",") != "GET /emukill" || res.Quit != galaga || routes.got() != "" {
		t.Errorf("Do = %+v, %v; want the game quit, the busy refusal and no route", res, err)
	}
}
