package realromarr

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

func get(t *testing.T, s *Server, path string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+path, nil)
	req.Header.Set("X-Api-Key", s.APIKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// TestStartIsContained checks what peers/README promises of start-romarr.sh: ROMarr listens on
// 127.0.0.1 only, every scheduled job (the update check among them) is off, and it makes no
// connection off this machine, as its own socket calls (the audit hook) show.
func TestStartIsContained(t *testing.T) {
	s := Start(t, Options{APIKey: "rig-key-0123456789"})
	if s.APIKey() != "rig-key-0123456789" {
		t.Fatalf("APIKey() = %q", s.APIKey())
	}

	var tasks struct {
		Items []struct {
			Name     string `json:"name"`
			Enabled  bool   `json:"enabled"`
			Interval int    `json:"interval_seconds"`
		} `json:"items"`
	}
	get(t, s, "/api/v1/system/tasks", &tasks)
	names := map[string]bool{}
	for _, j := range tasks.Items {
		names[j.Name] = true
		if j.Enabled || j.Interval != 0 {
			t.Errorf("scheduled job %s is on (interval %ds): start-romarr.sh should switch it off", j.Name, j.Interval)
		}
	}
	for _, want := range []string{"UpdateCheck", "MissingGameSearch", "RssSync", "ListSync", "ImportCompleted"} {
		if !names[want] {
			t.Errorf("ROMarr lists no %s job (got %v): has the scheduler changed?", want, names)
		}
	}

	port := s.URL()[strings.LastIndexByte(s.URL(), ':')+1:]
	listeners := listening(t, port)
	if len(listeners) == 0 {
		t.Fatalf("no socket listens on port %s", port)
	}
	for _, l := range listeners {
		if l != "127.0.0.1" {
			t.Errorf("ROMarr listens on %s:%s; want 127.0.0.1 only", l, port)
		}
	}

	events := s.NetEvents()
	bound := false
	for _, e := range events {
		if e.Op == "bind" && e.Addr == "127.0.0.1:"+port {
			bound = true
		}
	}
	if !bound {
		t.Errorf("the audit hook saw no bind of 127.0.0.1:%s (events %v): is it loaded?", port, events)
	}
	if out := s.Outgoing(); len(out) > 0 {
		t.Errorf("ROMarr reached off the machine: %v", out)
	}
	if !strings.Contains(s.Log(), "ROMarr 0.8.0 listening on http://127.0.0.1:"+port) {
		t.Errorf("log does not show the start line:\n%s", s.Log())
	}
	if _, err := os.Stat(s.DataDir() + "/romarr.json"); err != nil {
		t.Errorf("no state file in DataDir: %v", err)
	}
}

// TestStopKillsTheGroup checks Stop leaves no ROMarr behind.
func TestStopKillsTheGroup(t *testing.T) {
	s := Start(t, Options{})
	pid := s.pid
	s.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		if st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); !strings.Contains(string(st), ") Z ") {
			t.Fatalf("ROMarr pid %d still runs after Stop", pid)
		}
	}
	s.Stop() // idempotent
}

// TestRommOption: RommURL and RommToken reach ROMarr, which then asks that RomM (here a recorder
// on loopback), and the audit hook sees the connection as loopback.
func TestRommOption(t *testing.T) {
	asked := make(chan string, 64)
	romm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization"):
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/platforms":
			io.WriteString(w, `[]`)
		case "/api/roms":
			io.WriteString(w, `{"items": [], "total": 0}`)
		default:
			io.WriteString(w, `{}`)
		}
	}))
	defer romm.Close()
	s := Start(t, Options{RommURL: romm.URL, RommToken: "romm-token-42"})
	select {
	case got := <-asked:
		if !strings.Contains(got, "/api/") {
			t.Fatalf("ROMarr asked the RomM %q", got)
		}
	case <-time.After(cabinettest.Deadline):
		t.Fatalf("ROMarr never asked the RomM at %s; log:\n%s", romm.URL, s.Log())
	}
	port := romm.URL[strings.LastIndexByte(romm.URL, ':')+1:]
	connected := false
	for _, e := range s.NetEvents() {
		if e.Op == "connect" && strings.HasSuffix(e.Addr, ":"+port) && e.Loopback() {
			connected = true
		}
	}
	if !connected {
		t.Errorf("the audit hook saw no connect to the RomM on port %s: %v", port, s.NetEvents())
	}
	if out := s.Outgoing(); len(out) > 0 {
		t.Errorf("ROMarr reached off the machine: %v", out)
	}
}

// listening returns the local addresses of TCP sockets listening on port (from /proc/net).
func listening(t *testing.T, port string) []string {
	t.Helper()
	p, _ := strconv.Atoi(port)
	hexPort := fmt.Sprintf("%04X", p)
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, lport, ok := strings.Cut(fields[1], ":")
			if !ok || lport != hexPort {
				continue
			}
			out = append(out, procAddr(addr))
		}
	}
	return out
}

// procAddr renders /proc/net's little-endian hex address: 0100007F is 127.0.0.1.
func procAddr(h string) string {
	if len(h) == 8 {
		v, _ := strconv.ParseUint(h, 16, 32)
		return fmt.Sprintf("%d.%d.%d.%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24)
	}
	return "[" + h + "]" // IPv6: never expected here, shown raw
}
