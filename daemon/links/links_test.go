package links

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
)

// TestPowerSwitch: batocera_power is registered with cabinet.mcp.power, and never in read-only
// mode.
func TestPowerSwitch(t *testing.T) {
	for _, tc := range []struct {
		power, readOnly, want bool
	}{{false, false, false}, {true, false, true}, {true, true, false}} {
		l, err := Build(Settings{ESURL: "http://127.0.0.1:9", RetroArchAddr: "127.0.0.1:9", Power: tc.power, ReadOnly: tc.readOnly}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Tools("1.2.3", false, tools.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(s.ToolNames(), "batocera_power"); got != tc.want {
			t.Errorf("Power %v, ReadOnly %v: batocera_power registered %v, want %v", tc.power, tc.readOnly, got, tc.want)
		}
	}
}

// TestOneOfEach: one configuration's links are one ES client, one RetroArch client, one RomM
// and one ROMarr client, one installer and one search index, whatever number of tools servers
// is built over them (the daemon builds a normal and a dry-run one).
func TestOneOfEach(t *testing.T) {
	s := Settings{ESURL: "http://127.0.0.1:9", RetroArchAddr: "127.0.0.1:9", RomM: RomMSettings{URL: "http://127.0.0.1:9"},
		ROMarr: ROMarrSettings{URL: "http://127.0.0.1:9", APIKey: "k"}, AllowInstall: true,
		InstallLock: filepath.Join(t.TempDir(), "install.lock")}
	l, err := Build(s, noRecords{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.ES == nil || l.RetroArch == nil || l.RomM == nil || l.ROMarr == nil || l.Installer == nil || l.Games == nil {
		t.Fatalf("links %+v: want every client", l)
	}
	normal, err := l.Tools("1", false, tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := l.Tools("1", true, tools.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(normal.ToolNames(), "library_install") || slices.Contains(dry.ToolNames(), "batocera_power") {
		t.Errorf("tools: %v / %v", normal.ToolNames(), dry.ToolNames())
	}
	// Without install records there is no installer.
	if l, err := Build(s, nil, nil); err != nil || l.Installer != nil {
		t.Errorf("without records: installer %v, %v", l.Installer, err)
	}
}

// noRecords keeps nothing.
type noRecords struct{}

func (noRecords) PutInstall(install.Install) error { return nil }
func (noRecords) InstallAt(string) (install.Install, error) {
	return install.Install{}, install.ErrNoInstall
}
func (noRecords) Installs() ([]install.Install, error) { return nil, nil }
func (noRecords) DeleteInstall(string) error           { return nil }
