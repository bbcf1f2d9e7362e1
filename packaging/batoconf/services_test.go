package batoconf_test

import (
	"bytes"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// serviceCases are service edits checked against the real batocera-services.
var serviceCases = []struct {
	name    string
	data    *string // nil: no batocera.conf
	op      string  // enable or disable
	service string
	want    string // "": no change
}{
	{"enable absent", ptr("a=1\n"), "enable", "cabinet", "a=1\nsystem.services=cabinet\n"},
	{"enable missing file", nil, "enable", "cabinet", "system.services=cabinet\n"},
	{"enable empty file", ptr(""), "enable", "cabinet", "system.services=cabinet\n"},
	{"enable empty value", ptr("system.services=\n"), "enable", "cabinet", "system.services=cabinet\n"},
	{"enable blank value", ptr("system.services= \t\r\n"), "enable", "cabinet", "system.services=cabinet\n"},
	{"enable commented template", ptr("# exampe: system.services=service1 service2\n#system.services=\n"), "enable", "cabinet", "# exampe: system.services=service1 service2\nsystem.services=cabinet\n"},
	{"enable after others", ptr("system.services=a b\n"), "enable", "cabinet", "system.services=a b cabinet\n"},
	{"enable keeps odd spacing", ptr("system.services=a\t b  \n"), "enable", "cabinet", "system.services=a\t b   cabinet\n"},
	{"enable already enabled", ptr("system.services=a cabinet b\n"), "enable", "cabinet", ""},
	{"enable already enabled tab", ptr("system.services=a\tcabinet\n"), "enable", "cabinet", ""},
	{"enable prefix is not enabled", ptr("system.services=cabinet_x\n"), "enable", "cabinet", "system.services=cabinet_x cabinet\n"},
	{"enable duplicated key", ptr("system.services=a\nx=1\nsystem.services=b\n"), "enable", "cabinet", "system.services=a cabinet\nx=1\nsystem.services=a cabinet\n"},
	{"enable crlf", ptr("system.services=a\r\nx=1\r\n"), "enable", "cabinet", "system.services=a cabinet\nx=1\r\n"},
	{"enable invalid dash", ptr("a=1\n"), "enable", "my-daemon", ""},
	{"enable invalid digit", ptr("a=1\n"), "enable", "9lives", ""},
	{"enable invalid empty", ptr("a=1\n"), "enable", "", ""},
	{"enable invalid missing file", nil, "enable", "a.b", ""},
	{"enable underscore", ptr(""), "enable", "_x9", "system.services=_x9\n"},
	{"enable bom", ptr(bom + "system.services=a\n"), "enable", "b", "system.services=a b\n"},
	{"disable only", ptr("system.services=cabinet\n"), "disable", "cabinet", "system.services=\n"},
	{"disable middle", ptr("system.services=a cabinet b\n"), "disable", "cabinet", "system.services=a b\n"},
	{"disable normalises spacing", ptr("system.services=\ta  cabinet\tb \n"), "disable", "cabinet", "system.services=a b\n"},
	{"disable twice listed", ptr("system.services=cabinet a cabinet\n"), "disable", "cabinet", "system.services=a\n"},
	{"disable absent name", ptr("system.services=a b\n"), "disable", "cabinet", ""},
	{"disable absent key", ptr("a=1\n"), "disable", "cabinet", ""},
	{"disable missing file", nil, "disable", "cabinet", ""},
	{"disable prefix", ptr("system.services=cabinet_x\n"), "disable", "cabinet", ""},
	{"disable invalid name listed", ptr("system.services=my-daemon a\n"), "disable", "my-daemon", "system.services=a\n"},
	{"disable empty name", ptr("system.services=a\n"), "disable", "", ""},
	{"disable duplicated key", ptr("#system.services=x\nsystem.services=a b\nsystem.services=c\n"), "disable", "a", "system.services=b\nsystem.services=b\nsystem.services=b\n"},
	{"disable keeps cr word", ptr("system.services=cabinet a\r\r\n"), "disable", "cabinet", "system.services=a\r\n"},
	{"disable no trailing newline", ptr("x=1\nsystem.services=cabinet"), "disable", "cabinet", "x=1\nsystem.services=\n"},
}

func edit(op string) func([]byte, string) ([]byte, bool) {
	if op == "enable" {
		return batoconf.EnableService
	}
	return batoconf.DisableService
}

func TestServices(t *testing.T) {
	for _, tt := range serviceCases {
		t.Run(tt.name, func(t *testing.T) {
			data := dataOf(tt.data)
			got, changed := edit(tt.op)(data, tt.service)
			if changed != (tt.want != "") {
				t.Errorf("%s %q: changed = %v, want %v", tt.op, tt.service, changed, tt.want != "")
			}
			want := tt.want
			if want == "" {
				want = string(data)
			}
			if string(got) != want {
				t.Errorf("%s %q on %q\n got %q\nwant %q", tt.op, tt.service, data, got, want)
			}
		})
	}
}

func TestServicesMatchRealScript(t *testing.T) {
	cabinettest.Long(t, "Batocera's own services script for every case (TestGetMatchesRealTool stays in -short)")
	t.Parallel()
	tr := batocera.New(t)
	for _, tt := range serviceCases {
		t.Run(tt.name, func(t *testing.T) {
			data := dataOf(tt.data)
			tr.SetConf(t, data)
			tr.Services(t, tt.op, tt.service)
			real := tr.Conf(t)
			got, changed := edit(tt.op)(data, tt.service)
			if !bytes.Equal(got, real) || (real == nil) != (got == nil) {
				t.Errorf("%s %q on %q\n got %q\nreal %q", tt.op, tt.service, data, got, real)
			}
			if changed == bytes.Equal(real, data) {
				t.Errorf("changed = %v, but the real script made %q of %q", changed, real, data)
			}
		})
	}
}

func TestValidServiceName(t *testing.T) {
	tests := map[string]bool{
		"cabinet": true, "cabinet_daemon": true, "_x": true, "X9": true, "custom_service": true,
		"": false, "9x": false, "my-daemon": false, "daemon.sh": false, "a b": false, "é": false, "a\n": false, "a*": false,
	}
	for name, want := range tests {
		if got := batoconf.ValidServiceName(name); got != want {
			t.Errorf("ValidServiceName(%q) = %v, want %v", name, got, want)
		}
	}
}

// The names checked against the script's own is_valid_service_name,
// taken out of the tree's batocera-services.
func TestValidServiceNameMatchesScript(t *testing.T) {
	cabinettest.Long(t, "every name through Batocera's services script")
	t.Parallel()
	tr := batocera.New(t)
	names := []string{"cabinet", "_", "_9", "A_b", "9x", "my-daemon", "daemon.sh", "a b", "é", "ａ", "a\n", "\na", "a$", "-", "a\tb", "ß"}
	for _, name := range names {
		r := tr.Run(t, "bash", "-c", `eval "$(sed -n '/^is_valid_service_name() {/,/^}/p' "$0")" && is_valid_service_name "$1"`,
			tr.Path("usr/bin/batocera-services"), name)
		if r.ExitCode > 1 || r.Stderr != "" {
			t.Fatalf("is_valid_service_name %q: exit %d: %s", name, r.ExitCode, r.Stderr)
		}
		if got, want := batoconf.ValidServiceName(name), r.ExitCode == 0; got != want {
			t.Errorf("ValidServiceName(%q) = %v, the script says %v", name, got, want)
		}
	}
}
