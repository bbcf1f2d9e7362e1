package power

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fakeRunner is a Runner over the fake ES on a loopback socket, through the
// real clients.
func fakeRunner(t *testing.T) (*Runner, *fakees.Server, *fakees.Listener, *fakees.Recorder) {
	t.Helper()
	ev := &fakees.Recorder{}
	srv := fakees.New(fakees.Config{Library: library.Captured(""), Events: ev,
		LaunchDelay: 20 * time.Millisecond, ReturnDelay: 5 * time.Millisecond})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); srv.Close() })
	c, err := es.New(es.Config{URL: ln.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return &Runner{ES: c, Routes: es.NewPowerClient(c)}, srv, ln, ev
}

// TestRunOverFakeES: during a game, a reboot quits the game through
// /emukill, waits for /runningGame to clear, then sends /restart; ES fires
// quit reboot and reboot after game-end.
func TestRunOverFakeES(t *testing.T) {
	r, srv, _, ev := fakeRunner(t)
	game := srv.Library().Games("nes")[0]
	if err := srv.Launch("nes", game.ID); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the game to run", nil, func() bool { _, ok := srv.Running(); return ok })

	plan, err := r.Plan(ctx(t), Reboot)
	if err != nil || !strings.Contains(plan, "Would quit "+game.Name+" (nes) first") {
		t.Errorf("Plan = %q, %v", plan, err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Fatalf("Plan sent %d actions", n)
	}
	res, err := r.Do(ctx(t), Reboot)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if _, ok := srv.Running(); ok {
		t.Error("the game still runs")
	}
	var routes []string
	for _, c := range srv.Calls() {
		routes = append(routes, c.Route)
	}
	if got, want := strings.Join(routes, ","), "emukill,restart"; got != want {
		t.Errorf("ES got %s, want %s", got, want)
	}
	if got, want := strings.Join(res.Sent, ","), "GET /emukill,GET /restart"; got != want {
		t.Errorf("Sent %s, want %s", got, want)
	}
	got := strings.Join(ev.List(), ",")
	if !strings.HasSuffix(got, "game-end,quit|reboot,reboot") {
		t.Errorf("ES fired %s; want game-end, then quit reboot and reboot", got)
	}
}

func TestRunFakeESDown(t *testing.T) {
	r, srv, ln, _ := fakeRunner(t)
	ln.Stop()
	_, err := r.Run(ctx(t), Shutdown)
	if !errors.Is(err, ErrESDown) || !strings.Contains(err.Error(), "Quit menu") {
		t.Errorf("Run with ES down = %v, want ErrESDown pointing at the Quit menu", err)
	}
	if n := srv.CallCount(fakees.RouteShutdown); n != 0 {
		t.Errorf("ES got %d shutdowns", n)
	}
}
