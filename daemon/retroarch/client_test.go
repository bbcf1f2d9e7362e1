package retroarch

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func startFake(t *testing.T) *fakeretroarch.Server {
	t.Helper()
	s := &fakeretroarch.Server{SavestateDir: t.TempDir(), ScreenshotDir: t.TempDir()}
	if err := s.Load(fakeretroarch.Content{SystemID: "nes", Basename: "stub", CRC32: 0x708c346c}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unload)
	return s
}

func ctxWithin(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func notAnswering(t *testing.T, err error, refused bool) {
	t.Helper()
	var na *NotAnsweringError
	if !errors.As(err, &na) || !errors.Is(err, ErrNotRunning) {
		t.Fatalf("got error %v, want a NotAnsweringError matching ErrNotRunning", err)
	}
	if na.Refused != refused {
		t.Fatalf("got Refused=%v, want %v (%v)", na.Refused, refused, err)
	}
	if !strings.HasPrefix(err.Error(), Guidance) {
		t.Fatalf("message %q does not start with the guidance", err)
	}
}

func TestNewDefaults(t *testing.T) {
	if got := New("").Addr(); got != DefaultAddr {
		t.Errorf("New(\"\").Addr() = %q, want %q", got, DefaultAddr)
	}
	if got := ErrNotRunning.Error(); got != "RetroArch is not running a game, or network commands are off — add `global.retroarch.network_cmd_enable=true` to /userdata/system/batocera.conf" {
		t.Errorf("ErrNotRunning message: got %q", got)
	}
}

func TestQueriesAgainstFake(t *testing.T) {
	s := startFake(t)
	c := New(s.Addr())
	ctx := context.Background()
	if v, err := c.Version(ctx); err != nil || v != "1.14.0" {
		t.Errorf("Version: got %q, %v", v, err)
	}
	want := Status{StatePlaying, "nes", "stub", 0x708c346c}
	if st, err := c.Status(ctx); err != nil || st != want {
		t.Errorf("Status: got %+v, %v; want %+v", st, err, want)
	}
	if v, err := c.ConfigParam(ctx, ConfigSavestateDirectory); err != nil || v != s.SavestateDir {
		t.Errorf("ConfigParam(savestate_directory): got %q, %v; want %q", v, err, s.SavestateDir)
	}
	if v, err := c.ConfigParam(ctx, ConfigCacheDirectory); err != nil || v != "" {
		t.Errorf("ConfigParam(cache_directory): got %q, %v; want empty", v, err)
	}
	if _, err := c.ConfigParam(ctx, ConfigActiveReplay); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ConfigParam(active_replay) on 1.14: got %v, want ErrUnsupported", err)
	}
}

func TestInvalidInputIsNeverSent(t *testing.T) {
	s := startFake(t)
	c := New(s.Addr())
	ctx := context.Background()
	if err := c.Send(ctx, Command(0)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("Send(Command(0)): got %v, want ErrInvalidCommand", err)
	}
	if _, err := c.ConfigParam(ctx, ConfigName(42)); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("ConfigParam(42): got %v, want ErrInvalidCommand", err)
	}
	for _, text := range []string{"", " ", "two\nlines", strings.Repeat("x", 201)} {
		if err := c.ShowMessage(ctx, text); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("ShowMessage(%.20q): got %v, want ErrInvalidMessage", text, err)
		}
	}
	if got := s.Snapshot().Datagrams; got != 0 {
		t.Errorf("datagrams received: got %d, want 0", got)
	}
}

func TestSendAndShowMessage(t *testing.T) {
	s := startFake(t)
	c := New(s.Addr())
	ctx := context.Background()
	for _, cmd := range []Command{CmdPauseToggle, CmdMute, CmdVolumeUp, CmdStateSlotPlus, CmdReset} {
		if err := c.Send(ctx, cmd); err != nil {
			t.Fatalf("Send(%s): %v", cmd, err)
		}
	}
	if err := c.ShowMessage(ctx, "Dinner is ready — save now"); err != nil {
		t.Fatalf("ShowMessage: %v", err)
	}
	snap, err := s.WaitFor(cabinettest.Context(t), func(sn fakeretroarch.Snapshot) bool { return len(sn.Messages) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Paused || !snap.Muted || snap.VolumeDB != 0.5 || snap.Slot != 1 || snap.Resets != 1 || snap.Messages[0] != "Dinner is ready — save now" {
		t.Errorf("fake state: got %+v", snap)
	}
}

func TestQuit(t *testing.T) {
	quit := make(chan struct{})
	s := &fakeretroarch.Server{OnQuit: func() { close(quit) }}
	if err := s.Load(fakeretroarch.Content{SystemID: "nes", Basename: "stub"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unload)
	c := New(s.Addr(), WithQuitInterval(10*time.Millisecond))
	// The fake quits on the first QUIT, like Batocera (quit_press_twice off):
	// the second one is refused, which Quit treats as success.
	if err := c.Quit(context.Background()); err != nil {
		t.Fatalf("Quit: %v", err)
	}
	select {
	case <-quit:
	case <-time.After(cabinettest.Deadline):
		t.Fatal("the fake did not quit")
	}
	notAnswering(t, c.Quit(context.Background()), true)
}

func TestFaults(t *testing.T) {
	tests := []struct {
		name    string
		fault   func(*fakeretroarch.Server)
		refused bool
	}{
		{"latency beyond the deadline", func(s *fakeretroarch.Server) { s.SetLatency(time.Hour) }, false},
		{"request lost", func(s *fakeretroarch.Server) { s.DropNext(1) }, false},
		{"all lost", func(s *fakeretroarch.Server) { s.SetLoss(1) }, false},
		{"down", func(s *fakeretroarch.Server) { s.SetDown(true) }, true},
		{"unloaded", func(s *fakeretroarch.Server) { s.Unload() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startFake(t)
			tt.fault(s)
			c := New(s.Addr(), WithTimeout(150*time.Millisecond))
			_, err := c.Status(context.Background())
			notAnswering(t, err, tt.refused)
			if tt.refused {
				notAnswering(t, c.Send(context.Background(), CmdPauseToggle), true)
				notAnswering(t, c.ShowMessage(context.Background(), "hello"), true)
			}
		})
	}
}

func TestContextDeadlineWins(t *testing.T) {
	s := startFake(t)
	s.SetLatency(300 * time.Millisecond)
	// A default timeout shorter than the latency, but the context allows more.
	c := New(s.Addr(), WithTimeout(10*time.Millisecond))
	if _, err := c.Version(cabinettest.Context(t)); err != nil {
		t.Fatalf("Version with a longer context deadline: %v", err)
	}
	// And a context deadline shorter than the latency gives the guidance.
	_, err := New(s.Addr()).Version(ctxWithin(t, 20*time.Millisecond))
	notAnswering(t, err, false)
}

func TestCancelIsNotGuidance(t *testing.T) {
	s := startFake(t)
	s.SetLatency(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		s.WaitFor(cabinettest.Context(t), func(sn fakeretroarch.Snapshot) bool { return sn.Datagrams == 1 })
		cancel()
	}()
	_, err := New(s.Addr(), WithTimeout(cabinettest.Deadline)).Status(ctx)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNotRunning) {
		t.Fatalf("cancelled Status: got %v, want context.Canceled and not the guidance", err)
	}
	if _, err := New(s.Addr()).Status(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Status with a dead context: got %v, want context.Canceled", err)
	}
}

func TestNoServerAtAll(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	_, err = New(addr).Status(context.Background())
	notAnswering(t, err, true)
	if !strings.Contains(err.Error(), addr) {
		t.Errorf("message %q does not name %s", err, addr)
	}
}

// TestStaleRepliesAreSkipped uses a hand-made peer that answers with a stray
// datagram before the real reply.
func TestStaleRepliesAreSkipped(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			req := string(buf[:n])
			pc.WriteTo([]byte("GET_CONFIG_PARAM log_dir /stale"), from)
			pc.WriteTo([]byte("READ_CORE_RAM 10 42\n"), from)
			switch {
			case req == "VERSION":
				pc.WriteTo([]byte("1.14.0\n"), from)
			case req == "GET_STATUS":
				pc.WriteTo([]byte("GET_STATUS CONTENTLESS"), from)
			case strings.HasPrefix(req, "GET_CONFIG_PARAM "):
				pc.WriteTo([]byte(req+" /fresh"), from)
			}
		}
	}()
	c := New(pc.LocalAddr().String())
	ctx := cabinettest.Context(t)
	if v, err := c.Version(ctx); err != nil || v != "1.14.0" {
		t.Errorf("Version: got %q, %v", v, err)
	}
	if st, err := c.Status(ctx); err != nil || st.State != StateContentless {
		t.Errorf("Status: got %+v, %v", st, err)
	}
	if v, err := c.ConfigParam(ctx, ConfigSavestateDirectory); err != nil || v != "/fresh" {
		t.Errorf("ConfigParam: got %q, %v; want /fresh", v, err)
	}
}

func TestConcurrentCallers(t *testing.T) {
	s := startFake(t)
	c := New(s.Addr())
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := c.Status(context.Background()); err != nil {
					t.Error(err)
					return
				}
				if err := c.Send(context.Background(), CmdPauseToggle); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// 100 toggles, an even number: running again.
	if _, err := s.WaitFor(cabinettest.Context(t), func(sn fakeretroarch.Snapshot) bool { return sn.Datagrams == 200 }); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Status(context.Background()); err != nil || st.State != StatePlaying {
		t.Errorf("after 100 toggles: got %+v, %v; want playing", st, err)
	}
}
