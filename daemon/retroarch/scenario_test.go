package retroarch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"image/png"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeretroarch"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

// peer is a RetroArch running the stub NES ROM: the fake or the real one.
// The same scenario runs against both, so the fake is held to the real one.
type peer struct {
	addr          string
	system, game  string
	crc           uint32
	savestateDir  string
	screenshotDir string
	// quitted is closed once the game has gone after QUIT.
	quitted <-chan struct{}
}

func TestScenarioFake(t *testing.T) {
	dir := t.TempDir()
	p := peer{system: "nes", game: realretroarch.DefaultROMName, crc: crc32.ChecksumIEEE(realretroarch.StubROM()),
		savestateDir: filepath.Join(dir, "states"), screenshotDir: filepath.Join(dir, "screenshots")}
	os.Mkdir(p.savestateDir, 0o755)
	os.Mkdir(p.screenshotDir, 0o755)
	quit := make(chan struct{})
	s := &fakeretroarch.Server{SavestateDir: p.savestateDir, ScreenshotDir: p.screenshotDir, OnQuit: func() { close(quit) }}
	if err := s.Load(fakeretroarch.Content{SystemID: p.system, Basename: p.game, CRC32: p.crc}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unload)
	p.addr, p.quitted = s.Addr(), quit
	runScenario(t, p)
}

func TestScenarioRealRetroArch(t *testing.T) {
	in := peertest.RetroArch(t, realretroarch.Options{})
	runScenario(t, peer{addr: in.Addr, system: in.SystemID, game: in.ROMBasename, crc: in.CRC32,
		savestateDir: in.SavestateDir, screenshotDir: in.ScreenshotDir, quitted: in.Done()})
}

// runScenario is the conformance scenario of issue 3.
func runScenario(t *testing.T, p peer) {
	c := New(p.addr)
	ctx := context.Background()
	playing := Status{StatePlaying, p.system, p.game, p.crc}
	paused := Status{StatePaused, p.system, p.game, p.crc}

	if v, err := c.Version(ctx); err != nil || v != "1.14.0" {
		t.Fatalf("Version: got %q, %v; want 1.14.0", v, err)
	}
	if st, err := c.Status(ctx); err != nil || st != playing {
		t.Fatalf("Status: got %+v, %v; want %+v", st, err, playing)
	}
	rawFormats(t, p)

	mustSend(t, c, CmdPauseToggle)
	cabinettest.Await(t, "PAUSED after PAUSE_TOGGLE", nil, func() (bool, string) { return statusIs(c, paused) })
	// RetroArch toggles on a rising edge of its pause input (runloop:
	// pause_pressed && !old_pause_pressed), held for the frame a command
	// arrives in: a toggle in the frame right after the first is dropped,
	// which a loaded machine makes likely. RetroArch exposes no frame
	// counter to wait on, so the second toggle waits a quarter of a second
	// (15 frames at 60 fps): the peer's pace, not a synchronisation.
	<-time.After(250 * time.Millisecond)
	mustSend(t, c, CmdPauseToggle)
	cabinettest.Await(t, "PLAYING after a second PAUSE_TOGGLE", nil, func() (bool, string) { return statusIs(c, playing) })

	mustSend(t, c, CmdScreenshot)
	shot := regexp.MustCompile(`^` + regexp.QuoteMeta(p.game) + `-\d{6}-\d{6}\.png$`)
	cabinettest.Await(t, "a PNG screenshot", nil, func() (bool, string) { return newPNG(p.screenshotDir, shot) })

	mustSend(t, c, CmdSaveState)
	state := filepath.Join(p.savestateDir, p.game+".state")
	cabinettest.Await(t, "the state file "+state, nil, func() (bool, string) {
		fi, err := os.Stat(state)
		return err == nil && fi.Size() > 0, fmt.Sprint(err)
	})

	if err := c.ShowMessage(ctx, "Cabinet says hi ✓"); err != nil {
		t.Fatalf("ShowMessage: %v", err)
	}
	if v, err := c.ConfigParam(ctx, ConfigSavestateDirectory); err != nil || v != p.savestateDir {
		t.Errorf("ConfigParam(savestate_directory): got %q, %v; want %q", v, err, p.savestateDir)
	}
	if _, err := c.ConfigParam(ctx, ConfigActiveReplay); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ConfigParam(active_replay): got %v, want ErrUnsupported on 1.14", err)
	}

	// An unknown command gets silence, which times out cleanly as guidance.
	_, err := c.request(ctx, "NOT_A_COMMAND", func([]byte) bool { return true })
	notAnswering(t, err, false)

	// QUIT closes the game; afterwards the port is refused: guidance again.
	if err := New(p.addr, WithQuitInterval(50*time.Millisecond)).Quit(ctx); err != nil {
		t.Fatalf("Quit: %v", err)
	}
	select {
	case <-p.quitted:
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("the game did not end within %v of Quit", cabinettest.Deadline)
	}
	_, err = c.Status(ctx)
	notAnswering(t, err, true)
}

// rawFormats holds the exact reply bytes, quirks included.
func rawFormats(t *testing.T, p peer) {
	t.Helper()
	conn, err := net.Dial("udp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	status := fmt.Sprintf("GET_STATUS PLAYING %s,%s,crc32=%x\n", p.system, p.game, p.crc)
	tests := []struct {
		send string
		want []string
	}{
		{"VERSION", []string{"1.14.0\n"}},
		{"GET_STATUS", []string{status}},
		{"GET_CONFIG_PARAM savestate_directory", []string{"GET_CONFIG_PARAM savestate_directory " + p.savestateDir}},
		{"GET_CONFIG_PARAM", []string{"GET_CONFIG_PARAM savestate_directory " + p.savestateDir}}, // stale argument
		{"GET_CONFIG_PARAM screenshot_directory", []string{"GET_CONFIG_PARAM screenshot_directory unsupported"}},
		{"GET_CONFIG_PARAM cache_directory", []string{"GET_CONFIG_PARAM cache_directory "}},
		{"GET_CONFIG_PARAM video_fullscreen", []string{"GET_CONFIG_PARAM video_fullscreen false"}},
		{"GET_CONFIG_PARAM\nVERSION", []string{"GET_CONFIG_PARAM VERSION unsupported", "1.14.0\n"}},
		{"VERSION\nGET_STATUS", []string{"1.14.0\n", status}},
		{"version", nil},
		{"PAUSE_TOGGLE ", nil},
		{"LOAD_STATE_SLOT 1", nil},
	}
	buf := make([]byte, 64*1024)
	for _, tt := range tests {
		// VERSION after each command proves there was no other reply.
		conn.Write([]byte(tt.send))
		conn.Write([]byte("VERSION"))
		for i, want := range append(tt.want, "1.14.0\n") {
			conn.SetReadDeadline(time.Now().Add(cabinettest.Deadline))
			n, err := conn.Read(buf)
			if err != nil || string(buf[:n]) != want {
				t.Fatalf("raw %q reply %d: got %q, %v; want %q", tt.send, i, buf[:n], err, want)
			}
		}
	}
}

func mustSend(t *testing.T, c *Client, cmd Command) {
	t.Helper()
	if err := c.Send(context.Background(), cmd); err != nil {
		t.Fatalf("Send(%s): %v", cmd, err)
	}
}

func statusIs(c *Client, want Status) (bool, string) {
	st, err := c.Status(context.Background())
	return err == nil && st == want, fmt.Sprintf("%+v, %v", st, err)
}

func newPNG(dir string, name *regexp.Regexp) (bool, string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err.Error()
	}
	var seen []string
	for _, e := range entries {
		seen = append(seen, e.Name())
		if !name.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if _, err := png.Decode(bytes.NewReader(b)); err == nil {
			return true, ""
		}
	}
	return false, fmt.Sprintf("files %q", seen)
}
