package tools

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/batocera-cabinet/cabinet/daemon/sysinfo"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// maxProcFile bounds what is read of one /proc or /sys file.
const maxProcFile = 64 << 10

type healthResult struct {
	Cabinet       string     `json:"cabinet"`
	CPUTempC      *float64   `json:"cpu_temp_c"`
	Load          *loadAvg   `json:"load"`
	Memory        *memInfo   `json:"memory"`
	DiskFreeBytes *int64     `json:"disk_free_bytes"`
	UptimeS       *int64     `json:"uptime_s"`
	Versions      versions   `json:"versions"`
	MQTT          *mqttState `json:"mqtt,omitempty"`
	Outbox        *outbox    `json:"outbox,omitempty"`
	Warnings      []string   `json:"warnings"`
}

type loadAvg struct {
	Avg1m  float64 `json:"avg_1m"`
	Avg5m  float64 `json:"avg_5m"`
	Avg15m float64 `json:"avg_15m"`
}

type memInfo struct {
	TotalBytes     int64 `json:"total_bytes"`
	AvailableBytes int64 `json:"available_bytes"`
}

type versions struct {
	Batocera  *string `json:"batocera"`
	ES        *string `json:"es"`
	RetroArch *string `json:"retroarch"`
	Cabinet   string  `json:"cabinet"`
}

type mqttState struct {
	Connected bool `json:"connected"`
}

type outbox struct {
	Depth   int `json:"depth"`
	Dropped int `json:"dropped"`
}

// healthDeps are what batocera_get_health reads.
type healthDeps struct {
	cabinet, version string
	paths            Paths // all but ScreenshotDir
	es               ES
	ra               raLink
	daemon           DaemonStatus // nil: no MQTT and outbox figures
}

func getHealthTool(d healthDeps) (mcp.Tool, server.ToolHandlerFunc) {
	nint := func(d string) js { return nullable(integer(d)) }
	nstr := func(d string) js { return nullable(str(d)) }
	t := define("batocera_get_health", "Cabinet health",
		"The cabinet's health, read on the cabinet itself: CPU temperature, load, memory, free space for "+
			"Cabinet's data, uptime, and the versions of Batocera, EmulationStation, RetroArch (when a game runs) "+
			"and Cabinet; with the daemon, its MQTT link and outbox. Values that cannot be read are null.",
		reads, true,
		withOutput(
			req("cabinet", str("The cabinet's name.")),
			req("cpu_temp_c", nullable(number("Hottest thermal zone in °C."))),
			req("load", nullable(object("Load averages.", req("avg_1m", number("1 minute.")),
				req("avg_5m", number("5 minutes.")), req("avg_15m", number("15 minutes."))))),
			req("memory", nullable(object("Memory.", req("total_bytes", integer("Total.")),
				req("available_bytes", integer("Available to programs."))))),
			req("disk_free_bytes", nint("Free space on the filesystem of Cabinet's state directory (/userdata).")),
			req("uptime_s", nint("Seconds since boot.")),
			req("versions", object("Versions.", req("batocera", nstr("Batocera, e.g. 41.")),
				req("es", nstr("EmulationStation's /caps version.")),
				req("retroarch", nstr("RetroArch, when it answers (a game runs).")),
				req("cabinet", str("Cabinet.")))),
			opt("mqtt", object("The daemon's MQTT link.", req("connected", boolean("Connected to the broker.")))),
			opt("outbox", object("The daemon's outbox.", req("depth", integer("Messages waiting.")),
				req("dropped", integer("Messages dropped because it was full.")))),
			req("warnings", array("Figures that could not be read, and why.", str("One warning."))),
		))
	return t, typed(d.health)
}

func (d healthDeps) health(ctx context.Context, _ none) (healthResult, error) {
	res := healthResult{Cabinet: d.cabinet, Warnings: []string{}, Versions: versions{Cabinet: d.version}}
	if res.Versions.Cabinet == "" {
		res.Versions.Cabinet = "dev"
	}
	warn := func(what string, err error) {
		res.Warnings = append(res.Warnings, what+": "+untrusted.Clean(err.Error(), 200))
	}
	var err error
	if res.CPUTempC, err = cpuTemp(d.paths.ThermalZones); err != nil {
		warn("CPU temperature", err)
	}
	if res.Load, err = readLoad(d.paths.LoadAvg); err != nil {
		warn("load", err)
	}
	if res.Memory, err = readMem(d.paths.MemInfo); err != nil {
		warn("memory", err)
	}
	if free, err := diskFreeBytes(d.paths.StateDir); err != nil {
		warn("free space", err)
	} else {
		res.DiskFreeBytes = &free
	}
	if res.UptimeS, err = readUptime(d.paths.Uptime); err != nil {
		warn("uptime", err)
	}
	if v, err := readSmall(d.paths.BatoceraVersion); err != nil {
		warn("Batocera version", err)
	} else if f := strings.Fields(v); len(f) > 0 {
		res.Versions.Batocera = ptr(untrusted.Clean(f[0], maxIdent))
	}
	if caps, err := d.es.Caps(ctx); err == nil {
		res.Versions.ES = ptr(untrusted.Clean(caps.Version, maxShort))
	}
	rctx, cancel := d.ra.bounded(ctx)
	if v, err := d.ra.ra.Version(rctx); err == nil {
		res.Versions.RetroArch = ptr(untrusted.Clean(v, maxIdent))
	}
	cancel()
	if d.daemon != nil {
		if dh, err := d.daemon.DaemonHealth(ctx); err != nil {
			warn("daemon", err)
		} else {
			res.MQTT = &mqttState{Connected: dh.MQTTConnected}
			res.Outbox = &outbox{Depth: dh.OutboxDepth, Dropped: dh.OutboxDropped}
		}
	}
	return res, nil
}

// readSmall reads a small system file, bounded.
func readSmall(path string) (string, error) { return sysinfo.ReadSmall(path, maxProcFile) }

// cpuTemp is the hottest zone: the CPU zone's name differs per board.
func cpuTemp(glob string) (*float64, error) {
	c, err := sysinfo.CPUTemperature(glob)
	if err != nil {
		return nil, err
	}
	return ptr(c), nil
}

func readLoad(path string) (*loadAvg, error) {
	s, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(s)
	var v [3]float64
	for i := range v {
		if i >= len(f) {
			return nil, fmt.Errorf("unexpected %s", path)
		}
		if v[i], err = strconv.ParseFloat(f[i], 64); err != nil || !(v[i] >= 0) || math.IsInf(v[i], 0) {
			return nil, fmt.Errorf("unexpected %s", path)
		}
	}
	return &loadAvg{v[0], v[1], v[2]}, nil
}

// readMem reads MemTotal and MemAvailable (kB) from /proc/meminfo.
func readMem(path string) (*memInfo, error) {
	s, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	m := &memInfo{TotalBytes: -1, AvailableBytes: -1}
	for _, line := range strings.Split(s, "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > math.MaxInt64/1024 {
			continue
		}
		switch key {
		case "MemTotal":
			m.TotalBytes = kb * 1024
		case "MemAvailable":
			m.AvailableBytes = kb * 1024
		}
	}
	if m.TotalBytes < 0 || m.AvailableBytes < 0 {
		return nil, fmt.Errorf("MemTotal or MemAvailable missing in %s", path)
	}
	return m, nil
}

func readUptime(path string) (*int64, error) {
	s, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil, fmt.Errorf("unexpected %s", path)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil || !(v >= 0 && v <= 1e12) {
		return nil, fmt.Errorf("unexpected %s", path)
	}
	return ptr(int64(v)), nil
}

func (r healthResult) text() string {
	var parts []string
	if r.CPUTempC != nil {
		parts = append(parts, fmt.Sprintf("CPU %.1f °C", *r.CPUTempC))
	}
	if r.Load != nil {
		parts = append(parts, fmt.Sprintf("load %.2f %.2f %.2f", r.Load.Avg1m, r.Load.Avg5m, r.Load.Avg15m))
	}
	if r.Memory != nil {
		parts = append(parts, fmt.Sprintf("memory %d of %d MiB available", r.Memory.AvailableBytes>>20, r.Memory.TotalBytes>>20))
	}
	if r.DiskFreeBytes != nil {
		parts = append(parts, fmt.Sprintf("%.1f GiB free", float64(*r.DiskFreeBytes)/(1<<30)))
	}
	if r.UptimeS != nil {
		parts = append(parts, fmt.Sprintf("up %dh%02dm", *r.UptimeS/3600, *r.UptimeS/60%60))
	}
	v := r.Versions
	parts = append(parts, fmt.Sprintf("Batocera %s, ES %s, RetroArch %s, Cabinet %s", orNone(v.Batocera), orNone(v.ES),
		orNone(v.RetroArch), v.Cabinet))
	if r.MQTT != nil {
		parts = append(parts, fmt.Sprintf("MQTT connected: %t", r.MQTT.Connected))
	}
	if r.Outbox != nil {
		parts = append(parts, fmt.Sprintf("outbox %d waiting, %d dropped", r.Outbox.Depth, r.Outbox.Dropped))
	}
	t := r.Cabinet + ": " + strings.Join(parts, "; ") + "."
	for _, w := range r.Warnings {
		t += "\nWarning: " + w
	}
	return t
}

func orNone(s *string) string {
	if s == nil {
		return "(unknown)"
	}
	return *s
}

// diskFreeBytes is the free space of the state dir's filesystem.
func diskFreeBytes(path string) (int64, error) {
	if path == "" {
		return 0, fmt.Errorf("no state directory configured")
	}
	free, err := sysinfo.DiskFree(path)
	return int64(min(free, 1<<62)), err
}
