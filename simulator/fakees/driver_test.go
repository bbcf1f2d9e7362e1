package fakees

import (
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

func TestDriverEvents(t *testing.T) {
	smb := "nes|" + smbPath + "|Super Mario Bros. (World)"
	for _, tc := range []struct {
		name string
		run  func(s *Server) error
		want []string
	}{
		{"start", func(s *Server) error { s.Start(); return nil }, []string{"start", "system-selected|nes"}},
		{"dim", func(s *Server) error { return s.StartScreensaver("dim") }, []string{"screensaver-start|dim", "sleep"}},
		{"black then stop", func(s *Server) error {
			s.StartScreensaver("black")
			s.StopScreensaver()
			return nil
		}, []string{"screensaver-start|black", "sleep", "screensaver-stop", "wake"}},
		{"start twice fires once", func(s *Server) error {
			s.StartScreensaver("dim")
			return s.StartScreensaver("dim")
		}, []string{"screensaver-start|dim", "sleep"}},
		{"random video picks a game, never sleeps", func(s *Server) error {
			return s.StartScreensaver("random video")
		}, []string{"screensaver-start|random video", "game-selected|nes|/userdata/roms/nes/Mario_(USA).nes|Mario_(USA)"}},
		{"slideshow show and stop", func(s *Server) error {
			s.StartScreensaver("slideshow")
			if err := s.ScreensaverShow("nes", smbID); err != nil {
				return err
			}
			s.StopScreensaver()
			return nil
		}, []string{"screensaver-start|slideshow", "game-selected|nes|/userdata/roms/nes/Mario_(USA).nes|Mario_(USA)",
			"game-selected|" + smb, "screensaver-stop"}},
		{"suspend fires no stop", func(s *Server) error {
			s.StartScreensaver("suspend")
			s.StopScreensaver()
			return nil
		}, []string{"screensaver-start|suspend"}},
		{"sleep wake", func(s *Server) error {
			s.Sleep()
			s.Sleep()
			s.Wake()
			s.Wake()
			return nil
		}, []string{"sleep", "wake"}},
		{"select", func(s *Server) error {
			if err := s.SelectSystem("nes"); err != nil {
				return err
			}
			return s.SelectGame("nes", smbID)
		}, []string{"system-selected|nes", "game-selected|" + smb}},
		{"quit", func(s *Server) error { return s.Quit("") }, []string{"config-changed", "settings-changed", "quit"}},
		{"reboot", func(s *Server) error { return s.Quit("reboot") }, []string{"quit|reboot", "reboot"}},
		{"shutdown", func(s *Server) error { return s.Quit("shutdown") }, []string{"quit|shutdown", "shutdown"}},
		{"reload", func(s *Server) error { s.post(posted{kind: postReload}); return nil }, []string{"system-selected|nes", "system-selected|nes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := capturedEnv(t)
			if err := tc.run(e.srv); err != nil {
				t.Fatal(err)
			}
			if got := e.events.Take(); !equalStrings(got, tc.want) {
				t.Errorf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestScreensaverLaunch(t *testing.T) {
	e := capturedEnv(t)
	e.srv.StartScreensaver(ScreensaverVideo)
	e.srv.ScreensaverShow("nes", smbID)
	e.events.Take()
	if err := e.srv.ScreensaverLaunch(); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second)
	got := e.events.Take()
	want := []string{"game-selected|nes|" + smbPath + "|Super Mario Bros. (World)", "screensaver-stop", "config-changed", "settings-changed"}
	if len(got) != 5 || !equalStrings(got[:4], want) || !strings.HasPrefix(got[4], "game-start|") {
		t.Errorf("events %q, want %q then game-start", got, want)
	}
	if g, ok := e.srv.Running(); !ok || g.ID != smbID {
		t.Errorf("running %q, want the screensaver's game", g.Name)
	}
	if e.srv.Screensaver() != "" {
		t.Error("screensaver still active")
	}
}

func TestDriverErrors(t *testing.T) {
	e := capturedEnv(t)
	for name, err := range map[string]error{
		"unknown behaviour":   e.srv.StartScreensaver("matrix"),
		"show without saver":  e.srv.ScreensaverShow("nes", smbID),
		"launch without game": e.srv.ScreensaverLaunch(),
		"quit mode":           e.srv.Quit("halt"),
		"unknown system":      e.srv.SelectSystem("psx"),
		"unknown game":        e.srv.SelectGame("nes", "nope"),
		"launch unknown":      e.srv.Launch("nes", "nope"),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	e.srv.Launch("nes", smbID)
	e.clock.Advance(time.Second)
	for name, err := range map[string]error{
		"screensaver while playing": e.srv.StartScreensaver("dim"),
		"sleep while playing":       e.srv.Sleep(),
		"launch while playing":      e.srv.Launch("nes", plainID),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if got := e.events.Take(); len(got) != 3 {
		t.Errorf("events %q: refused actions fired something", got)
	}
}

func TestDriverLaunchWakes(t *testing.T) {
	e := newEnv(t, Config{Library: library.Captured("")})
	e.srv.StartScreensaver(ScreensaverDim)
	e.events.Take()
	e.srv.Launch("nes", smbID)
	if got := e.events.Take(); !equalStrings(got, []string{"screensaver-stop", "wake"}) {
		t.Errorf("UI launch while asleep: %q, want screensaver-stop and wake (input wakes ES)", got)
	}
}
