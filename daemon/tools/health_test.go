package tools

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

type fakeDaemon struct {
	h   DaemonHealth
	err error
}

func (f fakeDaemon) DaemonHealth(context.Context) (DaemonHealth, error) { return f.h, f.err }

func TestGetHealth(t *testing.T) {
	r := newRig(t, rigConfig{deps: func(d *Deps) {
		d.Daemon = fakeDaemon{h: DaemonHealth{MQTTConnected: true, OutboxDepth: 3, OutboxDropped: 1}}
	}})
	var h healthResult
	r.ok("batocera_get_health", nil, &h)
	if h.CPUTempC == nil || *h.CPUTempC != 61.2 {
		t.Errorf("cpu: got %v, want the hottest zone, 61.2", h.CPUTempC)
	}
	if h.Load == nil || *h.Load != (loadAvg{0.52, 0.58, 0.59}) {
		t.Errorf("load: got %+v", h.Load)
	}
	if h.Memory == nil || *h.Memory != (memInfo{8048576 * 1024, 6000000 * 1024}) {
		t.Errorf("memory: got %+v", h.Memory)
	}
	if h.DiskFreeBytes == nil || *h.DiskFreeBytes <= 0 {
		t.Errorf("disk: got %v", h.DiskFreeBytes)
	}
	if h.UptimeS == nil || *h.UptimeS != 12345 {
		t.Errorf("uptime: got %v", h.UptimeS)
	}
	v := h.Versions
	if deref(v.Batocera) != "41" || deref(v.ES) != "42" || v.RetroArch != nil || v.Cabinet != "1.2.3" {
		t.Errorf("versions: got batocera %s es %s retroarch %v cabinet %s", deref(v.Batocera), deref(v.ES), v.RetroArch, v.Cabinet)
	}
	if h.MQTT == nil || !h.MQTT.Connected || h.Outbox == nil || *h.Outbox != (outbox{3, 1}) || len(h.Warnings) != 0 {
		t.Errorf("daemon: got %+v %+v, warnings %v", h.MQTT, h.Outbox, h.Warnings)
	}
	r.launch("nes", "Tetris")
	r.ok("batocera_get_health", nil, &h)
	if deref(h.Versions.RetroArch) != "1.14.0" {
		t.Errorf("retroarch version during a game: got %v", h.Versions.RetroArch)
	}
}

func TestGetHealthWithNothingReadable(t *testing.T) {
	r := newRig(t, rigConfig{deps: func(d *Deps) {
		d.Paths = Paths{ThermalZones: "/nonexistent/zone*/temp", LoadAvg: "/nonexistent/loadavg"}
		d.Daemon = fakeDaemon{err: errors.New("daemon socket: connection refused")}
	}})
	r.esDown()
	var h healthResult
	r.ok("batocera_get_health", nil, &h)
	if h.CPUTempC != nil || h.Load != nil || h.Memory != nil || h.DiskFreeBytes != nil || h.UptimeS != nil ||
		h.Versions.Batocera != nil || h.Versions.ES != nil || h.MQTT != nil || len(h.Warnings) != 7 {
		t.Errorf("got %+v, warnings %q", h, h.Warnings)
	}
}

func TestHealthParsers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, err := readLoad(write("load1", "nan 1 2")); err == nil {
		t.Error("load: NaN accepted")
	}
	if _, err := readLoad(write("load2", "1 2")); err == nil {
		t.Error("load: two fields accepted")
	}
	if _, err := readMem(write("mem", "MemTotal: 10 kB\n")); err == nil {
		t.Error("meminfo without MemAvailable accepted")
	}
	if _, err := readUptime(write("up", "-5 1")); err == nil {
		t.Error("negative uptime accepted")
	}
	write("zoneA", "garbage")
	write("zoneB", "-12000")
	if got, err := cpuTemp(dir + "/zone*"); err != nil || *got != -12 {
		t.Errorf("cpu temperature with one unreadable zone: got %v, %v", got, err)
	}
	big := strings.Repeat("9", maxProcFile*2)
	if _, err := readUptime(write("big", big)); err == nil {
		t.Error("a huge uptime file was accepted")
	}
}

func TestPlayHistory(t *testing.T) {
	var got HistoryQuery
	at := func(d, h int) time.Time { return time.Date(2025, 4, d, h, 0, 0, 0, time.UTC) }
	sessions := []Session{
		{ID: "1", Game: "Tetris", System: "nes", ROM: "/r/t.nes", Started: at(28, 10), Ended: at(28, 11), Duration: time.Hour, Source: "hook"},
		{ID: "2", Game: "Galaga", System: "mame", ROM: "/r/g.zip", Started: at(30, 10), Ended: at(30, 10).Add(10 * time.Minute), Duration: 10 * time.Minute, Source: "hook"},
		{ID: "3", Game: "Tetris", System: "nes", ROM: "/r/t.nes", Started: at(30, 20), Duration: 30 * time.Minute, Source: "es-api",
			Profile: "alice"},
	}
	r := newRig(t, rigConfig{deps: func(d *Deps) { d.History = stubHistory{sessions: sessions, got: &got} }})
	var h historyResult
	r.ok("batocera_play_history", map[string]any{"limit": 2}, &h)
	if !got.Since.Equal(at(24, 12)) || !got.Until.Equal(at(1, 12).AddDate(0, 1, 0)) || got.Limit != maxHistorySessions {
		t.Errorf("query: got %+v, want the 7 days before the clock's now", got)
	}
	if len(h.Sessions) != 2 || h.Sessions[0].SessionID != "3" || h.Sessions[0].Ended != nil || h.Sessions[1].SessionID != "2" {
		t.Errorf("sessions: got %+v, want 3 then 2, newest first", h.Sessions)
	}
	if h.Totals.TotalS != 6000 || len(h.Totals.ByGame) != 2 || h.Totals.ByGame[0] != (gameTotal{"Tetris", "nes", 2, 5400}) ||
		h.Totals.BySystem[1] != (systemTotal{"mame", 1, 600}) {
		t.Errorf("totals: got %+v", h.Totals)
	}
	// One player's sessions, and those nobody's profile launched.
	r.ok("batocera_play_history", map[string]any{"profile": "Alice"}, &h)
	if len(h.Sessions) != 1 || h.Sessions[0].Profile == nil || *h.Sessions[0].Profile != "alice" || h.Totals.TotalS != 1800 {
		t.Errorf("alice's: %+v, total %d", h.Sessions, h.Totals.TotalS)
	}
	r.ok("batocera_play_history", map[string]any{"profile": "none"}, &h)
	if len(h.Sessions) != 2 || h.Sessions[0].Profile != nil || h.Totals.TotalS != 4200 {
		t.Errorf("nobody's: %+v, total %d", h.Sessions, h.Totals.TotalS)
	}
	r.ok("batocera_play_history", map[string]any{"since": "today", "system": "nes"}, nil)
	if !got.Since.Equal(at(1, 0).AddDate(0, 1, 0)) || got.System != "nes" {
		t.Errorf("today: got %+v", got)
	}
	for _, bad := range []string{"tomorrowish", "7y", "-3d", "99999999d"} {
		if msg := r.refused("batocera_play_history", map[string]any{"since": bad}); !strings.Contains(msg, "is not a time") {
			t.Errorf("since=%q: got %q", bad, msg)
		}
	}
	if msg := r.refused("batocera_play_history", map[string]any{"since": "now", "until": "1d"}); !strings.Contains(msg, "must be before") {
		t.Errorf("reversed period: got %q", msg)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2025, 5, 1, 12, 30, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     now.Add(-time.Hour),
		"now":                  now,
		"today":                time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC),
		"Yesterday":            time.Date(2025, 4, 30, 0, 0, 0, 0, time.UTC),
		"2025-04-01":           time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC),
		"2025-04-01t10:00:00z": time.Date(2025, 4, 1, 10, 0, 0, 0, time.UTC),
		"24h":                  now.Add(-24 * time.Hour),
		"2w":                   now.AddDate(0, 0, -14),
	} {
		got, err := parseWhen(in, now, now.Add(-time.Hour))
		if err != nil || !got.Equal(want) {
			t.Errorf("parseWhen(%q): got %v, %v; want %v", in, got, err, want)
		}
	}
}

// FuzzHealthFiles feeds arbitrary /proc and /sys contents to the parsers:
// whatever they accept must be a sane figure.
func FuzzHealthFiles(f *testing.F) {
	for _, s := range []string{"0.52 0.58 0.59 1/467 12345\n", "MemTotal: 8048576 kB\nMemAvailable: 6000000 kB\n",
		"12345.67 23456.78\n", "48500\n", "nan nan nan", "1e400 1 1", "-0 0 0", "MemTotal: 99999999999999999999 kB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := t.TempDir() + "/f"
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if l, err := readLoad(p); err == nil && (!(l.Avg1m >= 0) || !(l.Avg5m >= 0) || !(l.Avg15m >= 0) ||
			l.Avg1m > 1e308 || l.Avg5m > 1e308 || l.Avg15m > 1e308) {
			t.Errorf("load %+v from %q", l, s)
		}
		if m, err := readMem(p); err == nil && (m.TotalBytes < 0 || m.AvailableBytes < 0) {
			t.Errorf("memory %+v from %q", m, s)
		}
		if u, err := readUptime(p); err == nil && *u < 0 {
			t.Errorf("uptime %d from %q", *u, s)
		}
		if c, err := cpuTemp(p); err == nil && (*c != *c || *c > 1e4 || *c < -1e4) {
			t.Errorf("temperature %v from %q", *c, s)
		}
	})
}
