package tools

import (
	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
)

// FromConfig builds the tools server from the configuration: the ES and
// RetroArch clients at cabinet.es.url and cabinet.retroarch.addr, the
// system paths under cabinet.paths.root (/proc stays the real one: it
// describes this machine), cabinet.mcp.read_only and cabinet.mcp.dry_run
// (or dryRun, for `cabinet call --dry-run`). extra carries the daemon's
// History and DaemonStatus when it builds the server.
func FromConfig(cfg *config.Config, version string, dryRun bool, extra Deps) (*Server, error) {
	esc, err := es.New(es.Config{URL: cfg.ESURL})
	if err != nil {
		return nil, err
	}
	p := DefaultPaths()
	p.ThermalZones = cfg.Path(p.ThermalZones)
	p.BatoceraVersion = cfg.Path(p.BatoceraVersion)
	p.StateDir = cfg.StatePath()
	p.ScreenshotDir = cfg.ScreenshotPath()
	deps := extra
	deps.ES, deps.RetroArch, deps.Paths = esc, retroarch.New(cfg.RetroArchAddr), p
	deps.Name, deps.Version = cfg.Name, version
	return New(deps, Options{ReadOnly: cfg.MCP.ReadOnly, DryRun: cfg.MCP.DryRun || dryRun})
}
