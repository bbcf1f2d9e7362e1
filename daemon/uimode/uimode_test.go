package uimode

import (
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// esSaved is es_settings.cfg as ES's Settings::saveFile writes it
// (pugixml's default indent: a tab).
const esSaved = `<?xml version="1.0"?>
<config>
	<bool name="ShowHelpPrompts" value="false" />
	<int name="ScreenSaverTime" value="300000" />
	<string name="LastSystem" value="nes" />
	<string name="UIMode" value="Kiosk" />
	<string name="UIMode_passkey" value="uudd" />
</config>
`

func TestParseSettings(t *testing.T) {
	for _, tt := range []struct {
		name, data, mode, passkey string
	}{
		{"ES's file", esSaved, "Kiosk", "uudd"},
		{"empty", "", "Full", DefaultPasskey},
		{"no UIMode", `<config><string name="LastSystem" value="snes"/></config>`, "Full", DefaultPasskey},
		{"the last one wins", `<config><string name="UIMode" value="Kid"/><string name="UIMode" value="Kiosk"/></config>`, "Kiosk", DefaultPasskey},
		{"no config root (old files)", `<?xml version="1.0"?><string name="UIMode" value="Kid" />`, "Kid", DefaultPasskey},
		{"Basic is not offered", `<config><string name="UIMode" value="Basic"/></config>`, "Full", DefaultPasskey},
		{"case matters to ES", `<config><string name="UIMode" value="kid"/></config>`, "Full", DefaultPasskey},
		{"nested elements are not settings", `<config><x><string name="UIMode" value="Kid"/></x></config>`, "Full", DefaultPasskey},
		{"a bad passkey is ignored", `<config><string name="UIMode_passkey" value="abc;rm"/></config>`, "Full", DefaultPasskey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSettings([]byte(tt.data))
			if err != nil || s.Mode != tt.mode || s.Passkey != tt.passkey {
				t.Errorf("ParseSettings = %+v, %v; want mode %s passkey %s", s, err, tt.mode, tt.passkey)
			}
		})
	}
	if _, err := ParseSettings([]byte("<config><string name=")); err == nil || !strings.Contains(err.Error(), "not valid XML") {
		t.Errorf("a broken file: %v, want an error saying so", err)
	}
}

func TestSetMode(t *testing.T) {
	kid, err := SetMode([]byte(esSaved), haentities.UIModeKid)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(esSaved, "\t<string name=\"UIMode\" value=\"Kiosk\" />\n", "", 1)
	want = strings.Replace(want, "</config>", "\t<string name=\"UIMode\" value=\"Kid\" />\n</config>", 1)
	if string(kid) != want {
		t.Errorf("Kid:\n%s\nwant\n%s", kid, want)
	}
	full, err := SetMode(kid, haentities.UIModeFull)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(esSaved, "\t<string name=\"UIMode\" value=\"Kiosk\" />\n", "", 1); string(full) != want {
		t.Errorf("Full (ES writes no default):\n%s\nwant\n%s", full, want)
	}
	for _, tt := range []struct{ name, data, want string }{
		{"no file", "", "<?xml version=\"1.0\"?>\n<config>\n\t<string name=\"UIMode\" value=\"Kid\" />\n</config>\n"},
		{"one line", `<config><string name="UIMode" value="Kiosk"/><string name="A" value="b"/></config>`,
			"<config><string name=\"A\" value=\"b\"/>\n\t<string name=\"UIMode\" value=\"Kid\" />\n</config>"},
		{"no config root", `<string name="UIMode" value="Full" />`, "<string name=\"UIMode\" value=\"Kid\" />\n"},
		{"two of them", "<config>\n\t<string name=\"UIMode\" value=\"Kiosk\" />\n\t<string name=\"UIMode\" value=\"Full\"></string>\n</config>\n",
			"<config>\n\t<string name=\"UIMode\" value=\"Kid\" />\n</config>\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SetMode([]byte(tt.data), haentities.UIModeKid)
			if err != nil || string(got) != tt.want {
				t.Errorf("SetMode = %q, %v; want %q", got, err, tt.want)
			}
			if s, err := ParseSettings(got); err != nil || s.Mode != haentities.UIModeKid {
				t.Errorf("reads back %+v, %v", s, err)
			}
		})
	}
	if _, err := SetMode([]byte(esSaved), "Basic"); err == nil {
		t.Error("Basic accepted")
	}
	if _, err := SetMode([]byte("<config>"), haentities.UIModeKid); err == nil {
		t.Error("a broken file rewritten")
	}
}

func TestForced(t *testing.T) {
	for _, tt := range []struct{ conf, want string }{
		{"", ""},
		{"es.customsargs=--force-kid\n", "Kid"},
		{"es.customsargs=--windowed --force-kiosk\n", "Kiosk"},
		{"es.customsargs=--force-kiosk --force-kid\n", "Kid"},
		{"#es.customsargs=--force-kid\n", ""},
		{"es.customsargs=--force-kids\n", ""},
	} {
		if got := Forced([]byte(tt.conf)); got != tt.want {
			t.Errorf("Forced(%q) = %q, want %q", tt.conf, got, tt.want)
		}
	}
}

// FuzzSettings: any file either reads as a mode ES offers or is refused, and
// SetMode on it reads back as the mode set, with every other setting kept.
func FuzzSettings(f *testing.F) {
	f.Add([]byte(esSaved))
	f.Add([]byte(`<string name="UIMode" value="Kid" />`))
	f.Add([]byte("<config><!-- c --><string name='UIMode' value='Kiosk'></string></config>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings(data)
		if err != nil {
			return
		}
		if _, err := haentities.ParseUIMode([]byte(s.Mode)); err != nil {
			t.Fatalf("mode %q", s.Mode)
		}
		for _, m := range haentities.UIModes {
			out, err := SetMode(data, m)
			if err != nil {
				continue
			}
			back, err := ParseSettings(out)
			if err != nil || back.Mode != m || back.Passkey != s.Passkey {
				t.Fatalf("SetMode %s on %q = %q reads back %+v, %v", m, data, out, back, err)
			}
		}
	})
}
