package es

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func TestLaunchGameConfirmed(t *testing.T) {
	f := newFake(t, nil, Config{})
	g, err := f.c.LaunchGame(ctx(t), "nes", smbID)
	if err != nil {
		t.Fatal(err)
	}
	if g.ID != smbID || g.Name != "Super Mario Bros. (World)" {
		t.Errorf("LaunchGame returned %+v", g)
	}
	if running, ok := f.srv.Running(); !ok || running.ID != smbID {
		t.Errorf("fake runs %q %v", running.Name, ok)
	}
	calls := f.srv.Calls()
	if len(calls) != 1 || calls[0].Route != fakees.RouteLaunch || calls[0].Body != "/userdata/roms/nes/Super Mario Bros. (World).nes" {
		t.Errorf("calls %+v, want one POST /launch with ES's own path", calls)
	}
}

func TestLaunchGameRefusedWhileRunning(t *testing.T) {
	f := newFake(t, nil, Config{})
	cx := ctx(t)
	if _, err := f.c.LaunchGame(cx, "nes", plainID); err != nil {
		t.Fatal(err)
	}
	_, err := f.c.LaunchGame(cx, "nes", smbID)
	if !errors.Is(err, ErrGameRunning) || errors.Is(err, ErrLaunchNotConfirmed) {
		t.Errorf("err %v, want ErrGameRunning only", err)
	}
	if n := f.srv.CallCount(fakees.RouteLaunch); n != 1 {
		t.Errorf("%d launches sent, want 1 (the refusal sends nothing)", n)
	}
}

// TestQueuedLaunch shows what LaunchGame protects against: a raw launch
// while a game runs is queued by ES and starts once that game ends.
func TestQueuedLaunch(t *testing.T) {
	f := newFake(t, nil, Config{})
	cx := ctx(t)
	if _, err := f.c.LaunchGame(cx, "nes", plainID); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Launch(cx, "/userdata/roms/nes/Super Mario Bros. (World).nes"); err != nil {
		t.Fatal(err)
	}
	if rg, _ := f.c.RunningGame(cx); rg == nil || rg.ID != plainID {
		t.Fatalf("running %+v, want Plain Game still", rg)
	}
	if err := f.c.EmuKill(cx); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the queued game", nil, func() bool { rg, _ := f.c.RunningGame(cx); return rg != nil && rg.ID == smbID })
}

func TestLaunchGameNotConfirmed(t *testing.T) {
	lib := library.Captured("")
	srv := fakees.New(fakees.Config{Library: lib, LaunchDelay: time.Hour}) // the game never comes up
	ln, err := fakees.Serve("", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := New(Config{URL: ln.URL(), LaunchTimeout: 100 * time.Millisecond, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.LaunchGame(ctx(t), "nes", plainID)
	if !errors.Is(err, ErrLaunchNotConfirmed) || errors.Is(err, ErrGameRunning) {
		t.Errorf("err %v, want ErrLaunchNotConfirmed", err)
	}
	if n := srv.CallCount(fakees.RouteLaunch); n != 1 {
		t.Errorf("%d launches sent, want 1", n)
	}
}

func TestLaunchGameUnknownID(t *testing.T) {
	f := newFake(t, nil, Config{})
	_, err := f.c.LaunchGame(ctx(t), "nes", "00000000000000000000000000000000")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("err %v, want ErrNotFound", err)
	}
	_, err = f.c.LaunchGame(ctx(t), "nes", "/userdata/roms/nes/Plain.nes")
	if !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a path as id: err %v, want invalid argument", err)
	}
	if n := f.srv.CallCount(fakees.RouteLaunch); n != 0 {
		t.Errorf("%d launches sent for unknown games", n)
	}
}

func TestLaunchGameInProgress(t *testing.T) {
	lib := library.Captured("")
	srv := fakees.New(fakees.Config{Library: lib, LaunchDelay: 300 * time.Millisecond})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := New(Config{URL: ln.URL(), PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cx := ctx(t)
	var wg sync.WaitGroup
	wg.Add(1)
	var first error
	go func() {
		defer wg.Done()
		_, first = c.LaunchGame(cx, "nes", plainID)
	}()
	cabinettest.Await(t, "the first launch to be sent", nil, func() bool { return srv.CallCount(fakees.RouteLaunch) == 1 })
	if _, err := c.LaunchGame(cx, "nes", smbID); !errors.Is(err, ErrLaunchInProgress) {
		t.Errorf("second launch: err %v, want ErrLaunchInProgress", err)
	}
	wg.Wait()
	if first != nil {
		t.Errorf("first launch: %v", first)
	}
}

func TestLaunchGameFromCollection(t *testing.T) {
	f := newFake(t, nil, Config{})
	g, err := f.c.LaunchGame(ctx(t), "favorites", plainID)
	if err != nil || g.ID != plainID || g.System != "nes" {
		t.Errorf("LaunchGame via favorites: %+v, %v", g, err)
	}
}

func TestLaunchGameCallerGivesUp(t *testing.T) {
	srv := fakees.New(fakees.Config{Library: library.Captured(""), LaunchDelay: time.Hour})
	ln, err := fakees.Serve("", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := New(Config{URL: ln.URL(), PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cx, cancel := contextWithTimeout(t, 200*time.Millisecond)
	defer cancel()
	_, err = c.LaunchGame(cx, "nes", plainID)
	if !errors.Is(err, ErrLaunchNotConfirmed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want ErrLaunchNotConfirmed wrapping the caller's deadline", err)
	}
}
