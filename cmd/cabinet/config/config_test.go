package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/daemon/household"
)

// load runs Load on an in-memory file system.
func load(t *testing.T, files map[string]string, environ []string, sets ...string) *Loaded {
	t.Helper()
	return Load(Inputs{
		Environ: environ,
		Sets:    sets,
		ReadFile: func(name string) ([]byte, error) {
			if s, ok := files[name]; ok {
				return []byte(s), nil
			}
			return nil, fmt.Errorf("open %s: %w", name, os.ErrNotExist)
		},
	})
}

func TestParseFile(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      []Entry
		wantWarns []string // substrings, in order
	}{
		{"plain", "cabinet.name=Game Room\n", []Entry{{"cabinet.name", "Game Room", 1}}, nil},
		{"spaces around", "  cabinet.name  =   Game Room  \n", []Entry{{"cabinet.name", "Game Room  ", 1}}, nil},
		{"comments and blanks", "# cabinet.name=x\n\n   # y\ncabinet.id=abc\n", []Entry{{"cabinet.id", "abc", 4}}, nil},
		{"crlf", "cabinet.name=A\r\ncabinet.id=b\r\n", []Entry{{"cabinet.name", "A", 1}, {"cabinet.id", "b", 2}}, nil},
		{"bom", "\xef\xbb\xbfcabinet.name=A", []Entry{{"cabinet.name", "A", 1}}, nil},
		{"equals in value", "cabinet.mqtt.password=a=b==c\n", []Entry{{"cabinet.mqtt.password", "a=b==c", 1}}, nil},
		{"first wins", "cabinet.name=A\ncabinet.name=B\n", []Entry{{"cabinet.name", "A", 1}}, []string{"line 2: cabinet.name repeated; line 1 wins"}},
		{"quotes kept", `cabinet.name="A"`, []Entry{{"cabinet.name", `"A"`, 1}}, nil},
		{"other keys ignored", "global.retroarch.network_cmd_enable=true\nsystem.hostname=X\n", nil, nil},
		{"garbage cabinet line", "cabinet.name\n", nil, []string{`line 1: "cabinet.name" is not key=value`}},
		{"garbage other line", "hello world\n", nil, nil},
		{"key with space", "cabinet.na me=x\n", nil, []string{"line 1: key"}},
		{"nul in value kept for validation", "cabinet.name=a\x00b\n", []Entry{{"cabinet.name", "a\x00b", 1}}, nil},
		{"long line", "cabinet.name=" + strings.Repeat("x", maxLineBytes) + "\ncabinet.id=ok\n", []Entry{{"cabinet.id", "ok", 2}}, []string{"line 1: longer than 64 KiB"}},
		{"no final newline", "cabinet.id=abc", []Entry{{"cabinet.id", "abc", 1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := ParseFile([]byte(tt.in), "f")
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("entries = %+v, want %+v", got, tt.want)
			}
			if len(warns) != len(tt.wantWarns) {
				t.Fatalf("warnings = %q, want %d matching %q", warns, len(tt.wantWarns), tt.wantWarns)
			}
			for i, w := range tt.wantWarns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warns[i], w)
				}
			}
		})
	}
}

func TestLoadPrecedenceAndSources(t *testing.T) {
	files := map[string]string{DefaultFile: "cabinet.name=File Name\ncabinet.mqtt.broker=tcp://file:1883\ncabinet.log.level=debug\n"}
	l := load(t, files, []string{"CABINET_MQTT_BROKER=tcp://env:1883", "CABINET_LOG_LEVEL=warn", "PATH=/bin"},
		"cabinet.log.level=error")
	if l.Err != nil {
		t.Fatalf("Err = %v", l.Err)
	}
	checks := []struct {
		key, want string
		origin    Origin
	}{
		{"cabinet.name", "File Name", FromFile},
		{"cabinet.mqtt.broker", "tcp://env:1883", FromEnv},
		{"cabinet.log.level", "error", FromFlag},
		{"cabinet.es.url", "http://127.0.0.1:1234", FromDefault},
	}
	rows := map[string][3]string{}
	for _, r := range l.Effective() {
		rows[r[0]] = r
	}
	for _, c := range checks {
		if got := rows[c.key][1]; got != c.want {
			t.Errorf("%s = %q, want %q", c.key, got, c.want)
		}
		if got := l.Sources[c.key].Origin; got != c.origin {
			t.Errorf("%s origin = %s, want %s", c.key, got, c.origin)
		}
	}
	if got := l.Sources["cabinet.name"].Where; got != DefaultFile+" line 1" {
		t.Errorf("name source = %q", got)
	}
	if l.Config.Name != "File Name" || l.Config.LogLevel != "error" || l.Config.MQTT.Broker != "tcp://env:1883" {
		t.Errorf("config = %+v", l.Config)
	}
}

func TestLoadCabinetConfigAndRoot(t *testing.T) {
	files := map[string]string{
		"/tmp/x/cabinet.conf":                  "cabinet.name=Sim\n",
		"/fake/userdata/system/batocera.conf":  "cabinet.name=Rooted\n",
		"/fake/userdata/system/cabinet/secret": "s3cr3t-value\n",
	}
	l := load(t, files, []string{"CABINET_CONFIG=/tmp/x/cabinet.conf"})
	if l.Config.Name != "Sim" || l.File != "/tmp/x/cabinet.conf" {
		t.Errorf("CABINET_CONFIG: name %q file %q", l.Config.Name, l.File)
	}
	l = load(t, files, []string{"CABINET_PATHS_ROOT=/fake"}, "cabinet.mqtt.password_file=/userdata/system/cabinet/secret")
	if l.Err != nil {
		t.Fatal(l.Err)
	}
	if l.Config.Name != "Rooted" {
		t.Errorf("root: name %q, want Rooted (file %s)", l.Config.Name, l.File)
	}
	if got := l.Config.MQTT.Password.Reveal(); got != "s3cr3t-value" {
		t.Errorf("password from file = %q", got)
	}
	if got := l.Config.StatePath(); got != "/fake/userdata/system/cabinet" {
		t.Errorf("StatePath = %q", got)
	}
	if got := l.Config.RunDir(); got != "/fake/var/run/cabinet" {
		t.Errorf("RunDir = %q", got)
	}
}

func TestLoadBadValues(t *testing.T) {
	tests := []struct {
		line     string
		wantKey  string
		wantText string
	}{
		{"cabinet.tracker.min_session_seconds=abc", "cabinet.tracker.min_session_seconds", `"abc"`},
		{"cabinet.tracker.min_session_seconds=-5", "cabinet.tracker.min_session_seconds", "from 0 to 86400"},
		{"cabinet.mcp.read_only=maybe", "cabinet.mcp.read_only", "1/0, true/false"},
		{"cabinet.selected.settle_ms=0.3", "cabinet.selected.settle_ms", "milliseconds from 1 to 10000"},
		{"cabinet.selected.settle_ms=0", "cabinet.selected.settle_ms", "milliseconds from 1 to 10000"},
		{"cabinet.selected.screensaver_picks=sometimes", "cabinet.selected.screensaver_picks", "1/0, true/false"},
		{"cabinet.mqtt.broker=ha.lan:1883", "cabinet.mqtt.broker", "tcp://host:1883"},
		{"cabinet.es.url=ftp://x", "cabinet.es.url", "http://"},
		{"cabinet.retroarch.addr=localhost", "cabinet.retroarch.addr", "host:port"},
		{"cabinet.id=Has-Caps", "cabinet.id", "[a-z0-9_]"},
		{"cabinet.state_dir=relative/dir", "cabinet.state_dir", "absolute"},
		{"cabinet.log.level=loud", "cabinet.log.level", "trace, debug"},
		{"cabinet.mqtt.base_topic=a/+/b", "cabinet.mqtt.base_topic", "without wildcards"},
		{"cabinet.name=a\x00b", "cabinet.name", "printable"},
		{"cabinet.name=\xff\xfe", "cabinet.name", "printable"},
		{"cabinet.mcp.allowed_origins=not a url", "cabinet.mcp.allowed_origins", "origins"},
	}
	for _, tt := range tests {
		t.Run(tt.wantKey, func(t *testing.T) {
			l := load(t, map[string]string{DefaultFile: "# c\n" + tt.line + "\n"}, nil)
			if l.Err == nil {
				t.Fatalf("no error for %q", tt.line)
			}
			msg := l.Err.Error()
			for _, want := range []string{tt.wantKey, tt.wantText, "line 2"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			// The bad value never replaces the default.
			if def := Default(); fmt.Sprint(l.Config) != fmt.Sprint(def) {
				t.Errorf("config changed by a bad value: %+v", l.Config)
			}
		})
	}
}

func TestUnknownKeySuggestsClosest(t *testing.T) {
	l := load(t, map[string]string{DefaultFile: "cabinet.mqtt.brokr=x\n"}, nil, "cabinet.tracker.min_sesion_seconds=5")
	if l.Err != nil {
		t.Fatalf("unknown keys must be warnings, got error %v", l.Err)
	}
	want := []string{"did you mean cabinet.mqtt.broker?", "did you mean cabinet.tracker.min_session_seconds?"}
	if len(l.Warnings) != len(want) {
		t.Fatalf("warnings = %q", l.Warnings)
	}
	for i, w := range want {
		if !strings.Contains(l.Warnings[i], w) {
			t.Errorf("warning %q, want %q", l.Warnings[i], w)
		}
	}
}

func TestSecretsNeverShown(t *testing.T) {
	const secret = "hunter2-do-not-print"
	l := load(t, map[string]string{DefaultFile: "cabinet.mqtt.password=" + secret + "\ncabinet.romm.token=\x00" + secret + "\n"}, nil)
	if l.Err == nil || strings.Contains(l.Err.Error(), secret) {
		t.Errorf("error must exist and not show the secret: %v", l.Err)
	}
	for _, r := range l.Effective() {
		if strings.Contains(r[1], secret) {
			t.Errorf("Effective shows the secret in %s", r[0])
		}
	}
	c := l.Config
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprintf("%v", c.MQTT.Password)} {
		if strings.Contains(s, secret) {
			t.Errorf("formatting shows the secret: %s", s)
		}
	}
	if c.MQTT.Password.Reveal() != secret {
		t.Errorf("Reveal = %q", c.MQTT.Password.Reveal())
	}
}

func TestSecretFileMissing(t *testing.T) {
	l := load(t, nil, nil, "cabinet.romarr.api_key_file=/nope")
	if l.Err == nil || !strings.Contains(l.Err.Error(), "cabinet.romarr.api_key_file") {
		t.Fatalf("Err = %v", l.Err)
	}
}

func TestDefaultsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Tracker.MinSessionSeconds != 60 || !c.Tracker.IgnoreScreensaverLaunches || c.MCP.Listen != "0.0.0.0:8717" {
		t.Errorf("defaults = %+v", c)
	}
	if c.Selected.SettleMS != 300 || c.Selected.ScreensaverPicks {
		t.Errorf("selection feed defaults = %+v, want 300 ms and the screensaver's picks left out", c.Selected)
	}
	c.Tracker.MinSessionSeconds = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "min_session_seconds") {
		t.Errorf("Validate = %v", err)
	}
}

// TestDocumentedKeys keeps batocera.conf.d/cabinet.conf and the key table in
// step: every key documented with its default, and nothing documented that
// the code does not know.
func TestDocumentedKeys(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "batocera.conf.d", "cabinet.conf"))
	if err != nil {
		t.Fatal(err)
	}
	entries, warns := ParseFile(data, "cabinet.conf")
	if len(warns) > 0 {
		t.Errorf("cabinet.conf warnings: %q", warns)
	}
	documented := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for _, e := range entries {
		documented[e.Key] = e.Value
		if e.Line < 2 || !strings.HasPrefix(lines[e.Line-2], "# ") {
			t.Errorf("%s has no one-line explanation above it", e.Key)
		}
	}
	for _, k := range Keys() {
		v, ok := documented[k.Name]
		if !ok {
			t.Errorf("%s exists in code but not in batocera.conf.d/cabinet.conf", k.Name)
			continue
		}
		if v != k.Default {
			t.Errorf("%s documented default %q, code default %q", k.Name, v, k.Default)
		}
		delete(documented, k.Name)
	}
	for k := range documented {
		t.Errorf("%s is documented but unknown to the code", k)
	}
}

func TestEnsureCabinetID(t *testing.T) {
	c := Default()
	c.Root = t.TempDir()
	id, err := c.EnsureCabinetID()
	if err != nil || !IsCabinetID(id) || len(id) != 12 {
		t.Fatalf("EnsureCabinetID = %q, %v", id, err)
	}
	again, err := c.EnsureCabinetID()
	if err != nil || again != id {
		t.Errorf("second call = %q, %v; want %q", again, err, id)
	}
	c.ID = "fixed_id"
	if got, _ := c.CabinetID(); got != "fixed_id" {
		t.Errorf("cabinet.id override = %q", got)
	}
	c.ID = ""
	if err := os.WriteFile(c.Layout().ID(), []byte("BAD ID"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CabinetID(); err == nil {
		t.Error("a damaged id file must be an error, not a new id")
	}
}

func FuzzParseFile(f *testing.F) {
	f.Add([]byte("cabinet.name=A\r\ncabinet.name=B\n# c\ncabinet.mqtt.brokr=x\n"))
	f.Add([]byte("\xef\xbb\xbfcabinet.id=\xff\x00\n=\n==\ncabinet.\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _ := ParseFile(data, "fuzz")
		seen := map[string]bool{}
		for _, e := range entries {
			if !strings.HasPrefix(e.Key, "cabinet.") || !utf8.ValidString(e.Key) || seen[e.Key] {
				t.Fatalf("bad entry %+v", e)
			}
			seen[e.Key] = true
		}
		// Load on the same text never panics, and a valid result validates.
		l := Load(Inputs{ReadFile: func(string) ([]byte, error) { return data, nil }})
		if l.Err == nil {
			if err := l.Config.Validate(); err != nil {
				t.Fatalf("Load accepted what Validate refuses: %v", err)
			}
		}
	})
}

func TestPlatformMapKey(t *testing.T) {
	for _, tc := range []struct {
		v  string
		ok bool
	}{
		{"", true}, {"gb:gb", true}, {"msx2plus:msx2+", true}, {"sfam:snes, gb:gb", true}, {"gb:gb,gb:gbc", false},
		{"gb", false}, {"gb:", false}, {"GB:gb", false}, {"gb:g b", false}, {"gb:../x", false},
	} {
		if got := platformMap(tc.v); got != tc.ok {
			t.Errorf("platformMap(%q) = %v, want %v", tc.v, got, tc.ok)
		}
	}
	m := parsePlatformMap("sfam:snes,gb:gb")
	if m["sfam"] != "snes" || m["gb"] != "gb" || platformMapText(m) != "gb:gb,sfam:snes" {
		t.Errorf("parsePlatformMap = %v (%q)", m, platformMapText(m))
	}
}

// TestHouseholdKeys: the play-time rules' keys are read and checked like
// the others; profile keys are kept (not applied) with one warning, a bad
// one is a warning naming it; a bad rule value is an error naming the key.
func TestHouseholdKeys(t *testing.T) {
	conf := "cabinet.household.enabled=1\ncabinet.household.minutes.daily=90\ncabinet.household.bedtime=21:00-07:00\n" +
		"cabinet.household.profiles=anna\ncabinet.household.profile.anna.minutes.daily=60\ncabinet.household.profile.anna.bedtime=late\n" +
		"cabinet.household.profile.ben.minutes.daily=30\n"
	l := load(t, map[string]string{DefaultFile: conf}, nil)
	if l.Err != nil {
		t.Fatal(l.Err)
	}
	v := l.Config.Household.Values
	if v["cabinet.household.enabled"] != "1" || v["cabinet.household.minutes.daily"] != "90" || v["cabinet.household.warn_at"] != "15,5,1" {
		t.Errorf("values %v", v)
	}
	if p := l.Config.Household.Profiles; len(p) != 2 || p["cabinet.household.profile.anna.minutes.daily"] != "60" {
		t.Errorf("profiles %v", p)
	}
	warns := strings.Join(l.Warnings, "\n")
	if !strings.Contains(warns, "profile.anna.bedtime") || !strings.Contains(warns, `no profile "ben" in cabinet.household.profiles`) {
		t.Errorf("warnings %q", l.Warnings)
	}
	r, _ := household.Parse(l.Config.Household.Merged())
	if anna := r.For("anna"); anna.Daily != 60 || anna.Bedtime == nil || anna.Bedtime.String() != "21:00-07:00" || !anna.Enabled {
		t.Errorf("anna's rules %+v (her own limit, the cabinet's bedtime: hers was refused)", anna)
	}
	if r.For("").Daily != 90 || r.For("ben").Daily != 90 {
		t.Errorf("the cabinet's rules %+v", r.For(""))
	}
	l = load(t, map[string]string{DefaultFile: "cabinet.household.profiles=alice,bedtime\n"}, nil)
	if l.Err == nil || !strings.Contains(l.Err.Error(), `"bedtime" is the name of a rule`) {
		t.Errorf("a profile named like a rule: %v", l.Err)
	}
	l = load(t, map[string]string{DefaultFile: "cabinet.household.minutes.daily=lots\n"}, nil)
	if l.Err == nil || !strings.Contains(l.Err.Error(), "cabinet.household.minutes.daily") {
		t.Errorf("error %v", l.Err)
	}
}
