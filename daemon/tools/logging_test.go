package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	store "github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// logLine is one notifications/message a client received.
type logLine struct{ level, logger, text string }

func (l logLine) String() string { return l.level + " " + l.logger + ": " + l.text }

// barrierMethod is the notification a logClient waits for to know every
// notification sent before it has arrived: a session's notifications
// arrive in order.
const barrierMethod = "notifications/cabinet_test_barrier"

// logClient is an in-process MCP client of srv that records the log
// notifications it receives.
type logClient struct {
	t   *testing.T
	srv *Server
	c   *client.Client

	mu       sync.Mutex
	lines    []logLine
	barriers int
}

// newLogClient connects to srv in protocol (the client's default, the
// modern 2026-07-28, when "").
func newLogClient(t *testing.T, srv *Server, protocol string) *logClient {
	t.Helper()
	var opts []client.ClientOption
	if protocol != "" {
		opts = append(opts, client.WithProtocolVersion(protocol))
	}
	c, err := client.NewInProcessClientWithOptions(srv.MCP(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	lc := &logClient{t: t, srv: srv, c: c}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		switch n.Method {
		case barrierMethod:
			lc.barriers++
		case string(mcp.MethodNotificationMessage):
			f := n.Params.AdditionalFields
			lc.lines = append(lc.lines, logLine{fmt.Sprint(f["level"]), fmt.Sprint(f["logger"]), fmt.Sprint(f["data"])})
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "logging-test", Version: "0"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if want := cmpOr(protocol, mcp.ProtocolVersion20260728); res.ProtocolVersion != want {
		t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, want)
	}
	if res.Capabilities.Logging == nil {
		t.Errorf("the server does not advertise the logging capability")
	}
	t.Cleanup(func() { c.Close() })
	return lc
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// setLevel is logging/setLevel (2025-11-25), or the level every later
// request carries (2026-07-28: mcp-go's client puts it in _meta).
func (lc *logClient) setLevel(level mcp.LoggingLevel) {
	lc.t.Helper()
	if err := lc.c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
		lc.t.Fatalf("setLevel %s: %v", level, err)
	}
}

// call calls a tool (with meta, when not nil) and returns the log lines it
// brought, once every one has arrived.
func (lc *logClient) call(name string, args map[string]any, meta *mcp.Meta) (*mcp.CallToolResult, []logLine) {
	lc.t.Helper()
	lc.mu.Lock()
	from := len(lc.lines)
	lc.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments, req.Params.Meta = name, args, meta
	res, err := lc.c.CallTool(ctx, req)
	if err != nil {
		lc.t.Fatalf("call %s: %v", name, err)
	}
	lc.barrier()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return res, slices.Clone(lc.lines[from:])
}

// barrier waits until a notification sent now arrives: the ones sent
// before it have arrived then.
func (lc *logClient) barrier() {
	lc.t.Helper()
	lc.mu.Lock()
	want := lc.barriers + 1
	lc.mu.Unlock()
	lc.srv.MCP().SendNotificationToAllClients(barrierMethod, nil)
	cabinettest.Await(lc.t, "the barrier notification", nil, func() bool {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		return lc.barriers >= want
	})
}

// levels lists the lines' levels.
func levels(lines []logLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.level)
	}
	return out
}

// logRig is a cabinet on the simulator, with its fake RomM and the real
// installer: the tools server the daemon builds.
type logRig struct {
	cab *simulator.Cabinet
	srv *Server
}

func newLogRig(t *testing.T) *logRig {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{RomM: true, Dir: t.TempDir(), LaunchDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	cab.ES.Start()
	st, err := store.Open(filepath.Join(t.TempDir(), "cabinet.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// The server as daemon/links builds it for the daemon (which tests of package tools cannot
	// import): the real ES, RetroArch and RomM clients and the real installer.
	esc, err := es.New(es.Config{URL: cab.ESURL()})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := romm.New(romm.Config{URL: cab.RomMURL(), Token: cab.RomM.Token()})
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(p string) string { return filepath.Join(cab.Root, p) }
	inst := &install.Installer{RomM: rc, RomMURL: cab.RomMURL(), ES: esc, Meta: es.NewMetadataWriter(esc), Records: install.Kept{DB: st},
		Platforms: platforms.Default(), Path: resolve, LockFile: filepath.Join(t.TempDir(), "install.lock")}
	srv, err := New(Deps{ES: esc, RetroArch: retroarch.New(cab.RetroArchAddr()), Paths: DefaultPaths().Resolve(cab.Path),
		Name: "Game Room", Version: "1.2.3", ResolvePath: resolve, Installs: install.Kept{DB: st},
		Library: Library{RomM: rc, Platforms: platforms.Default(), RomMURL: cab.RomMURL(), Installer: inst}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &logRig{cab: cab, srv: srv}
}

// installPhases are the info lines of library_install of Cosmic Crusade.
var installPhases = []string{
	"Reading ROM 3 from RomM.",
	"Downloading Cosmic Crusade (USA).sfc from RomM (file 1 of 1;",
	"Verifying Cosmic Crusade (USA).sfc against RomM's hashes (file 1 of 1).",
	"Moving Cosmic Crusade into place (1 file(s),",
	"Having EmulationStation list Cosmic Crusade with RomM's metadata and cover.",
	"Installed Cosmic Crusade (snes).",
}

// exercise makes the calls of TestLogLevels: a refused action (warning),
// an item RomM does not have (warning), RomM refusing the token (error) and
// an install (info), and returns the lines of each.
func (r *logRig) exercise(t *testing.T, lc *logClient) (refused, notFound, rommDown, installed []logLine) {
	t.Helper()
	if res, lines := lc.call("batocera_launch_game", map[string]any{"system": "nes", "game_id": "00000000000000000000000000000000"}, nil); !res.IsError {
		t.Fatalf("launch of an unknown game: %s", text(res))
	} else {
		refused = lines
	}
	if res, lines := lc.call("romm_get_rom", map[string]any{"rom_id": 9999}, nil); !res.IsError {
		t.Fatalf("romm_get_rom 9999: %s", text(res))
	} else {
		notFound = lines
	}
	r.cab.RomM.Revoke()
	res, lines := lc.call("romm_get_rom", map[string]any{"rom_id": fakeromm.ROMAlphaQuest}, nil)
	r.cab.RomM.Restore()
	if !res.IsError {
		t.Fatalf("romm_get_rom with the token revoked: %s", text(res))
	}
	rommDown = lines
	var got InstallResult
	res, installed = lc.call("library_install", map[string]any{"rom_id": fakeromm.ROMCosmicCrusade}, nil)
	if b, _ := json.Marshal(res.StructuredContent); res.IsError || json.Unmarshal(b, &got) != nil || got.Outcome != outcomeDone || !got.Listed {
		t.Fatalf("library_install: %s", text(res))
	}
	for _, all := range [][]logLine{refused, notFound, rommDown, installed} {
		for _, l := range all {
			if strings.Contains(l.text, r.cab.RomM.Token()) || strings.Contains(l.text, strings.TrimPrefix(r.cab.RomM.Token(), "rmm_")) {
				t.Errorf("a log line carries the RomM token: %s", l)
			}
		}
	}
	return refused, notFound, rommDown, installed
}

// TestLogLevels: log notifications arrive at their level, not below the
// level the client asked for, in both protocol eras; a 2025-11-25 session
// that set no level gets errors only (mcp-go's default), a 2026-07-28
// request that carried no level gets nothing (SEP-2575).
func TestLogLevels(t *testing.T) {
	cases := []struct {
		name     string
		protocol string
		level    mcp.LoggingLevel // "": none set
		// the levels of each call's lines; nil: none
		refused, notFound, rommDown []string
		phases                      bool // the install's info lines arrive
	}{
		{name: "2025-11-25 no level", protocol: mcp.ProtocolVersion20251125,
			rommDown: []string{"error"}},
		{name: "2025-11-25 error", protocol: mcp.ProtocolVersion20251125, level: mcp.LoggingLevelError,
			rommDown: []string{"error"}},
		{name: "2025-11-25 warning", protocol: mcp.ProtocolVersion20251125, level: mcp.LoggingLevelWarning,
			refused: []string{"warning"}, notFound: []string{"warning"}, rommDown: []string{"error"}},
		{name: "2025-11-25 info", protocol: mcp.ProtocolVersion20251125, level: mcp.LoggingLevelInfo,
			refused: []string{"warning"}, notFound: []string{"warning"}, rommDown: []string{"error"}, phases: true},
		{name: "2026-07-28 no level"},
		{name: "2026-07-28 critical", level: mcp.LoggingLevelCritical},
		{name: "2026-07-28 warning", level: mcp.LoggingLevelWarning,
			refused: []string{"warning"}, notFound: []string{"warning"}, rommDown: []string{"error"}},
		{name: "2026-07-28 debug", level: mcp.LoggingLevelDebug,
			refused: []string{"warning"}, notFound: []string{"warning"}, rommDown: []string{"error"}, phases: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newLogRig(t)
			lc := newLogClient(t, r.srv, tc.protocol)
			if tc.level != "" {
				lc.setLevel(tc.level)
			}
			refused, notFound, rommDown, installed := r.exercise(t, lc)
			for _, c := range []struct {
				what      string
				got       []logLine
				want      []string
				logger    string
				substring string
			}{
				{"refused launch", refused, tc.refused, loggerCabinet, "batocera_launch_game refused: "},
				{"ROM not in RomM", notFound, tc.notFound, loggerRomM, "romm_get_rom refused: Could not read RomM ROM 9999: RomM has no such item."},
				{"token revoked", rommDown, tc.rommDown, loggerRomM, "romm_get_rom refused: Could not read RomM ROM 1: "},
			} {
				if !slices.Equal(levels(c.got), c.want) {
					t.Errorf("%s: log levels %v, want %v (%q)", c.what, levels(c.got), c.want, c.got)
					continue
				}
				for _, l := range c.got {
					if l.logger != c.logger || !strings.HasPrefix(l.text, c.substring) {
						t.Errorf("%s: %s, want logger %s and %q", c.what, l, c.logger, c.substring)
					}
				}
			}
			if !tc.phases {
				if len(installed) != 0 {
					t.Errorf("install: %q, want no line below %q", installed, tc.level)
				}
				return
			}
			if len(installed) != len(installPhases) {
				t.Fatalf("install: %d lines %q, want %d", len(installed), installed, len(installPhases))
			}
			for i, l := range installed {
				if l.level != "info" || l.logger != loggerInstall || !strings.HasPrefix(l.text, installPhases[i]) {
					t.Errorf("install line %d: %s, want info install %q", i, l, installPhases[i])
				}
			}
		})
	}
}

// TestLogLevelPerRequest: in 2026-07-28 the level is the request's own: a
// request that carries one gets its lines, the next one without gets none.
func TestLogLevelPerRequest(t *testing.T) {
	r := newLogRig(t)
	lc := newLogClient(t, r.srv, "")
	meta := &mcp.Meta{}
	meta.SetLogLevel(mcp.LoggingLevelWarning)
	args := map[string]any{"rom_id": 9999}
	if _, lines := lc.call("romm_get_rom", args, meta); !slices.Equal(levels(lines), []string{"warning"}) {
		t.Errorf("with a level in _meta: %q, want one warning", lines)
	}
	if _, lines := lc.call("romm_get_rom", args, nil); len(lines) != 0 {
		t.Errorf("without: %q, want none", lines)
	}
}

// TestLogLinesCarryNoSecret: a RomM and a ROMarr that quote the token and
// the API key back in their errors: the log lines are RomM's and ROMarr's
// errors without them.
func TestLogLinesCarryNoSecret(t *testing.T) {
	const key = "k-0123456789abcdef"
	token := fakeromm.DefaultToken
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	echo := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/heartbeat" { // RomM's version, asked first and without the token
			fr.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, fmt.Sprintf(`{"error": "bad credentials %s %s", "detail": "Authorization: %s; X-Api-Key: %s"}`,
			r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")))
	}
	url := fakeRommAt(t, http.HandlerFunc(echo))
	rc, err := romm.New(romm.Config{URL: url, Token: token, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ac, err := romarr.New(romarr.Config{URL: url, APIKey: key, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, rigConfig{protocol: mcp.ProtocolVersion20251125, deps: func(d *Deps) {
		d.Library = Library{RomM: rc, ROMarr: ac}
	}})
	lc := newLogClient(t, r.srv, mcp.ProtocolVersion20251125)
	lc.setLevel(mcp.LoggingLevelDebug)
	for _, c := range []struct {
		tool   string
		args   map[string]any
		logger string
	}{
		{"romm_get_rom", map[string]any{"rom_id": 1}, loggerRomM},
		{"library_search", map[string]any{"query": "alpha"}, loggerRomM},
		{"romarr_status", nil, loggerROMarr},
		{"romarr_queue", nil, loggerROMarr},
	} {
		res, lines := lc.call(c.tool, c.args, nil)
		if !res.IsError || len(lines) != 1 || lines[0].level != "error" || lines[0].logger != c.logger {
			t.Errorf("%s: isError %v, lines %q, want one error of %s", c.tool, res.IsError, lines, c.logger)
		}
		for _, l := range lines {
			for _, secret := range []string{token, strings.TrimPrefix(token, "rmm_"), key, strings.TrimPrefix(key, "k-")} {
				if strings.Contains(l.text, secret) {
					t.Errorf("%s: the log line carries a secret: %s", c.tool, l)
				}
			}
			if !strings.Contains(l.text, "[token]") && !strings.Contains(l.text, "[redacted]") {
				t.Errorf("%s: %s does not quote the server's echo, redacted", c.tool, l)
			}
			if len([]rune(l.text)) > maxLogRunes {
				t.Errorf("%s: log line of %d runes", c.tool, len([]rune(l.text)))
			}
		}
	}
}
