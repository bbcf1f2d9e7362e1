package reales

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// requestTimeout bounds one API request.
const requestTimeout = 5 * time.Second

// client speaks to ES without keep-alive: cpp-httplib holds an idle
// connection open for 5 s (CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND), and ES's
// exit waits for the server's workers (HttpServerThread's destructor), so
// a test's own idle connection would slow every quit.
var client = &http.Client{Timeout: requestTimeout, Transport: &http.Transport{DisableKeepAlives: true}}

// Launch asks ES to launch rom: POST /launch with the path as raw text.
// ES answers 200 at once whether or not a game matched and launches on its
// UI thread: it fires game-start, then runs the emulator (es-app
// HttpServerThread "/launch", ViewController::launch, FileData::launchGame).
func (e *ES) Launch(rom string) {
	e.t.Helper()
	ctx, cancel := e.ctx(requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, URL+"/launch", strings.NewReader(rom))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatalf("reales: POST /launch %q: %v\n%s", rom, err, e.LogTail())
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("reales: POST /launch %q: %s", rom, resp.Status)
	}
	e.launches++
}

// SetPlayTime makes the next games end by themselves after d (0: they run
// until EndGame).
func (e *ES) SetPlayTime(d time.Duration) {
	e.t.Helper()
	if err := e.l.setPlayTime(d); err != nil {
		e.t.Fatal(err)
	}
}

// RunningGame is what GET /runningGame says: the running game's path, or
// "" (ES answers 201 {"msg":"NO GAME RUNNING"} when none runs).
func (e *ES) RunningGame() (string, error) {
	ctx, cancel := e.ctx(requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL+"/runningGame", nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusCreated {
		return "", nil
	}
	var g struct {
		Path string `json:"path"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&g); err != nil {
		return "", fmt.Errorf("GET /runningGame: %s: %w", resp.Status, err)
	}
	return g.Path, nil
}

// WaitStarted waits until the emulator of the last Launch runs: ES ran its
// command and the configgen gameStart scripts have returned.
func (e *ES) WaitStarted() {
	e.t.Helper()
	e.waitEmulator("started", e.launches)
}

// EndGame ends the running game the way batocera-es-swissknife --emukill
// does on a cabinet (ES's GET /emukill runs exactly that, so it is one of
// the stubs here): the game process is killed, the launcher runs the
// gameStop scripts and exits, and ES fires game-end. It waits until the
// emulator has ended.
func (e *ES) EndGame() {
	e.t.Helper()
	e.WaitStarted()
	b, err := os.ReadFile(e.l.emuPID)
	if err != nil {
		e.t.Fatalf("reales: no game runs (%v)\n%s", err, e.LogTail())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		e.t.Fatalf("reales: bad game pid %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		e.t.Fatalf("reales: kill the game (pid %d): %v", pid, err)
	}
	e.WaitEnded()
}

// WaitEnded waits until the emulator of the last Launch has ended (its
// gameStop scripts returned); ES fires game-end right after.
func (e *ES) WaitEnded() {
	e.t.Helper()
	e.waitEmulator("ended", e.launches)
}

func (e *ES) waitEmulator(what string, n int) {
	e.t.Helper()
	cabinettest.Await(e.t, fmt.Sprintf("the emulator's launch %d to be %s", n, what), nil, func() (bool, string) {
		b, _ := os.ReadFile(e.l.emuLog)
		got := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, what+" ") {
				got++
			}
		}
		return got >= n, fmt.Sprintf("emulator log:\n%s\n%s", b, e.LogTail())
	})
}

// Quit asks ES to quit (GET /quit: quitES(QuitMode::QUIT) pushes SDL_QUIT;
// on its way out processQuitMode fires quit with no argument, waiting for
// the root scripts, and runs no shutdown or reboot: es-core Platform.cpp)
// and waits until it has exited (at most cabinettest.Deadline).
//
// GET /quit is sent again every 5 s until ES exits (a healthy ES is gone
// in half a second): right after a game ES tears its window down and
// builds it again (Window::init), and an SDL_QUIT pushed while SDL's video
// is re-initialised is lost (seen in CI: the request answered, ES stayed).
// A second /quit while ES is already quitting changes nothing.
func (e *ES) Quit() {
	e.t.Helper()
	quit := func() error {
		ctx, cancel := e.ctx(requestTimeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, URL+"/quit", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := quit(); err != nil {
		e.t.Fatalf("reales: GET /quit: %v", err)
	}
	deadline := time.After(cabinettest.Deadline)
	again := time.NewTicker(5 * time.Second)
	defer again.Stop()
	for {
		select {
		case <-e.exited:
			return
		case <-again.C:
			_ = quit() // refused once ES has closed its API on the way out
		case <-deadline:
			e.t.Fatalf("reales: EmulationStation did not exit within %v of GET /quit\n%s", cabinettest.Deadline, e.LogTail())
		}
	}
}

// LogTail is the end of ES's log, of its script and launch stderr, of the
// emulator's log and of xvfb-run's output, for failure messages.
func (e *ES) LogTail() string {
	var b strings.Builder
	for _, f := range []struct {
		path  string
		lines int
	}{
		{filepath.Join(e.l.esDir, "es_log.txt"), 40},
		{filepath.Join(e.l.esDir, "es_script_stderr.log"), 10},
		{filepath.Join(e.l.esDir, "es_launch_stderr.log"), 10},
		{e.l.emuLog, 10},
		{e.l.out, 15},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil || len(data) == 0 {
			continue
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
			if !strings.HasPrefix(l, "ALSA lib ") { // no sound card under Xvfb: noise
				lines = append(lines, l)
			}
		}
		if len(lines) > f.lines {
			lines = append([]string{"…"}, lines[len(lines)-f.lines:]...)
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", f.path, strings.Join(lines, "\n"))
	}
	return b.String()
}
