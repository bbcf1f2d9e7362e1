package tools

import (
	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
)

// Settings are what a tools server is built from; cmd/cabinet maps the
// cabinet.* keys to them (cabinet.es.url, cabinet.retroarch.addr, the
// system paths under cabinet.paths.root, cabinet.name,
// cabinet.mcp.read_only and cabinet.mcp.dry_run).
type Settings struct {
	ESURL         string
	RetroArchAddr string
	Paths         Paths
	Name          string
	ReadOnly      bool
	DryRun        bool
}

// Build builds the tools server with its own ES and RetroArch clients.
// dryRun forces a dry run (`cabinet call --dry-run`); extra carries the
// daemon's History and DaemonStatus when it builds the server.
func Build(s Settings, version string, dryRun bool, extra Deps) (*Server, error) {
	esc, err := es.New(es.Config{URL: s.ESURL})
	if err != nil {
		return nil, err
	}
	deps := extra
	deps.ES, deps.RetroArch, deps.Paths = esc, retroarch.New(s.RetroArchAddr), s.Paths
	deps.Name, deps.Version = s.Name, version
	return New(deps, Options{ReadOnly: s.ReadOnly, DryRun: s.DryRun || dryRun})
}
