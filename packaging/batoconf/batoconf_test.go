package batoconf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
)

const bom = "\xEF\xBB\xBF"

// setCases are batocera.conf files and settings; want, where given, is
// what Set must return (checked without the real tool too), and every case
// is checked against the real batocera-settings-set.
var setCases = []struct {
	name string
	data *string // nil: no file
	kvs  []batoconf.KV
	want string
}{
	{name: "missing file", data: nil, kvs: kvs("a", "1"), want: "a=1\n"},
	{name: "empty file", data: ptr(""), kvs: kvs("a", "1"), want: "a=1\n"},
	{name: "update", data: ptr("a=1\nb=2\n"), kvs: kvs("a", "3"), want: "a=3\nb=2\n"},
	{name: "append in argument order", data: ptr("x=1\n"), kvs: kvs("c", "1", "a", "2", "x", "3"), want: "x=3\nc=1\na=2\n"},
	{name: "duplicates all rewritten", data: ptr("a=1\nb=2\na=3\n"), kvs: kvs("a", "9"), want: "a=9\nb=2\na=9\n"},
	{name: "commented key uncommented", data: ptr("#a=1\n"), kvs: kvs("a", "2"), want: "a=2\n"},
	{name: "commented with spaces", data: ptr("  #  a  =  1\n"), kvs: kvs("a", "2"), want: "a=2\n"},
	{name: "commented and set both rewritten", data: ptr("#a=x\na=1\n#a=y\n"), kvs: kvs("a", "2"), want: "a=2\na=2\na=2\n"},
	{name: "double comment kept", data: ptr("##a=1\n"), kvs: kvs("a", "2"), want: "##a=1\na=2\n"},
	{name: "comment mentioning key kept", data: ptr("# exampe: system.services=a b\n#system.services=\n"), kvs: kvs("system.services", "x"), want: "# exampe: system.services=a b\nsystem.services=x\n"},
	{name: "spaces around equals", data: ptr("  a \t= 1\n"), kvs: kvs("a", "2"), want: "a=2\n"},
	{name: "similar prefix", data: ptr("cabinet.mqtt.broker_x=1\ncabinet.mqtt.broker=2\ncabinet.mqtt=3\n"), kvs: kvs("cabinet.mqtt.broker", "tcp://h:1883"), want: "cabinet.mqtt.broker_x=1\ncabinet.mqtt.broker=tcp://h:1883\ncabinet.mqtt=3\n"},
	{name: "value with equals quotes spaces", data: ptr("a=old\n"), kvs: kvs("a", `x=y "q" 'r'  s  `), want: "a=x=y \"q\" 'r'  s  \n"},
	{name: "empty value", data: ptr("a=1\n"), kvs: kvs("a", ""), want: "a=\n"},
	{name: "bom dropped", data: ptr(bom + "a=1\nb=2\n"), kvs: kvs("b", "3"), want: "a=1\nb=3\n"},
	{name: "bom dropped untouched", data: ptr(bom + "a=1\n"), kvs: kvs("z", "1"), want: "a=1\nz=1\n"},
	{name: "bom not at start kept", data: ptr("a=1\n" + bom + "b=2\n"), kvs: kvs("b", "3"), want: "a=1\n" + bom + "b=2\nb=3\n"},
	{name: "crlf kept except rewritten", data: ptr("a=1\r\nb=2\r\n"), kvs: kvs("a", "3"), want: "a=3\nb=2\r\n"},
	{name: "no trailing newline", data: ptr("a=1\nb=2"), kvs: kvs("c", "3"), want: "a=1\nb=2\nc=3\n"},
	{name: "no trailing newline rewritten", data: ptr("a=1\nb=2"), kvs: kvs("b", "3"), want: "a=1\nb=3\n"},
	{name: "lines without equals kept", data: ptr("junk\n  \n\t\n#\n# \nnot a key\n"), kvs: kvs("a", "1"), want: "junk\n  \n\t\n#\n# \nnot a key\na=1\n"},
	{name: "blank lines kept", data: ptr("\n\na=1\n\n"), kvs: kvs("a", "2"), want: "\n\na=2\n\n"},
	{name: "tabs", data: ptr("\ta\t=\t1\t\n\t#\tb\t=2\n"), kvs: kvs("a", "x", "b", "y"), want: "a=x\nb=y\n"},
	{name: "key given twice present", data: ptr("a=1\n"), kvs: kvs("a", "2", "a", "3"), want: "a=2\na=3\n"},
	{name: "key given twice absent", data: ptr(""), kvs: kvs("a", "2", "a", "3"), want: "a=2\na=3\n"},
	{name: "key with inner space", data: ptr("a b=1\n"), kvs: kvs("a b", "2"), want: "a b=2\n"},
	{name: "empty key line kept", data: ptr("=1\n =2\n#=3\n"), kvs: kvs("a", "1"), want: "=1\n =2\n#=3\na=1\n"},
	{name: "per game key", data: ptr("snes[\"Some Game.sfc\"].ratio=4/3\n"), kvs: kvs(`snes["Some Game.sfc"].ratio`, "16/9"), want: "snes[\"Some Game.sfc\"].ratio=16/9\n"},
	{name: "nul and high bytes kept", data: ptr("a=\x00\xff\nb=\xc3\xa9\n"), kvs: kvs("b", "é"), want: "a=\x00\xff\nb=é\n"},
	{name: "value with cr inside", data: ptr("a=1\n"), kvs: kvs("a", "x\ry")},
	{name: "only newline", data: ptr("\n"), kvs: kvs("a", "1"), want: "\na=1\n"},
	{name: "only bom", data: ptr(bom), kvs: kvs("a", "1"), want: "a=1\n"},
	{name: "cr lines kept", data: ptr("\r\na\r=1\r\n"), kvs: kvs("b", "2"), want: "\r\na\r=1\r\nb=2\n"},
	{name: "many", data: ptr(batocera.DefaultConf), kvs: kvs("system.services", "cabinet", "kodi.enabled", "0", "cabinet.mqtt.broker", "tcp://ha.local:1883", "wifi.ssid", "my net")},
}

func ptr(s string) *string { return &s }

func kvs(pairs ...string) []batoconf.KV {
	var out []batoconf.KV
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, batoconf.KV{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func flat(kvs []batoconf.KV) []string {
	var out []string
	for _, kv := range kvs {
		out = append(out, kv.Key, kv.Value)
	}
	return out
}

func dataOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func TestSet(t *testing.T) {
	for _, tt := range setCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := batoconf.Set(dataOf(tt.data), tt.kvs...)
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if tt.want != "" && string(got) != tt.want {
				t.Errorf("Set(%q, %q)\n got %q\nwant %q", dataOf(tt.data), tt.kvs, got, tt.want)
			}
		})
	}
}

// realSet is what the real batocera-settings-set makes of data (nil: no
// file).
func realSet(t *testing.T, tools batocera.Tools, data []byte, kvs []batoconf.KV) []byte {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "batocera.conf")
	if data != nil {
		if err := os.WriteFile(conf, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools.SetFile(t, conf, flat(kvs)...)
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSetMatchesRealTool(t *testing.T) {
	t.Parallel()
	tools := batocera.Build(t)
	for _, tt := range setCases {
		t.Run(tt.name, func(t *testing.T) {
			got, err := batoconf.Set(dataOf(tt.data), tt.kvs...)
			if err != nil {
				t.Fatalf("Set: %v", err)
			}
			if want := realSet(t, tools, dataOf(tt.data), tt.kvs); !bytes.Equal(got, want) {
				t.Errorf("Set(%q, %q)\n got %q\nreal %q", dataOf(tt.data), tt.kvs, got, want)
			}
		})
	}
}

func TestGetMatchesRealTool(t *testing.T) {
	t.Parallel()
	tools := batocera.Build(t)
	files := []string{
		"a=1\nb=2\n",
		"a=1\na=2\n",
		"#a=1\na=2\n",
		"  # a=1\n",
		"\t a \t=\t v \t\r\n",
		"a=v\r\r\n",
		"a=\r\n",
		"a=   \n",
		"a",
		"a=1",
		bom + "a=bom\n",
		bom + bom + "a=1\n",
		"x\n" + bom + "a=1\n",
		"a==b\n",
		"a=\"quoted\" \n",
		"cabinet.mqtt.broker_x=1\ncabinet.mqtt.broker=2\n",
		"=empty key\na=1\n",
		"junk line\na=after junk\n",
		"a=x\x00y\n",
		"a b=spaced key\n",
		"\n\n\na=late\n",
		batocera.DefaultConf,
	}
	keys := []string{"a", "b", "a b", "cabinet.mqtt.broker", "system.hostname", "system.services", "kodi.enabled", "wifi.ssid", "missing"}
	dir := t.TempDir()
	for i, data := range files {
		conf := filepath.Join(dir, "batocera.conf")
		if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			got, gotOK := batoconf.Get([]byte(data), key)
			want, wantOK := tools.GetFile(t, conf, key)
			if got != want || gotOK != wantOK {
				t.Errorf("file %d %q key %q: Get = %q, %v; real = %q, %v", i, data, key, got, gotOK, want, wantOK)
			}
		}
	}
}

func TestGet(t *testing.T) {
	tests := []struct {
		data, key, want string
		ok              bool
	}{
		{"a=1\na=2\n", "a", "1", true},
		{"#a=1\na=2\n", "a", "2", true},
		{"  # a=1\n", "a", "", false},
		{"\t a \t=\t v \t\r\n", "a", "v \t", true},
		{"a=v\r\r\n", "a", "v\r", true},
		{bom + "a=bom\n", "a", "bom", true},
		{"a", "a", "", false},
		{"a=", "a", "", true},
		{"cabinet.mqtt.broker_x=1\n", "cabinet.mqtt.broker", "", false},
	}
	for _, tt := range tests {
		if got, ok := batoconf.Get([]byte(tt.data), tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("Get(%q, %q) = %q, %v; want %q, %v", tt.data, tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSetRefuses(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		kv   batoconf.KV
		want string // in the error
	}{
		{"newline in value", nil, batoconf.KV{Key: "a", Value: "1\nb=2"}, "newline"},
		{"nul in value", nil, batoconf.KV{Key: "a", Value: "1\x00"}, "NUL"},
		{"newline in key", nil, batoconf.KV{Key: "a\nb", Value: "1"}, "newline"},
		{"nul in key", nil, batoconf.KV{Key: "a\x00", Value: "1"}, "NUL"},
		{"equals in key", nil, batoconf.KV{Key: "a=b", Value: "1"}, "'='"},
		{"empty key", nil, batoconf.KV{Key: "", Value: "1"}, "empty key"},
		{"spaced key", nil, batoconf.KV{Key: " a", Value: "1"}, "trim"},
		{"comment key", nil, batoconf.KV{Key: "#a", Value: "1"}, "comment"},
		{"leading space value", nil, batoconf.KV{Key: "a", Value: " 1"}, "trim"},
		{"trailing cr value", nil, batoconf.KV{Key: "a", Value: "1\r"}, "carriage return"},
		{"too large", make([]byte, batoconf.MaxSize+1), batoconf.KV{Key: "a", Value: "1"}, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := batoconf.Set(tt.data, tt.kv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Set(%q) = %q, %v; want an error about %q", tt.kv, out, err, tt.want)
			}
		})
	}
}

func TestRemoveKeys(t *testing.T) {
	isCabinet := func(k string) bool { return strings.HasPrefix(k, "cabinet.") }
	tests := []struct{ name, data, want string }{
		{"none", "a=1\n#x\n", "a=1\n#x\n"},
		{"some", "a=1\ncabinet.x=2\nb=3\ncabinet.y=4\n", "a=1\nb=3\n"},
		{"indented and spaced", "  cabinet.x =2\n\tcabinet.y\t= 3\nc=1\n", "c=1\n"},
		{"commented kept", "#cabinet.x=1\n# cabinet.y=2\n", "#cabinet.x=1\n# cabinet.y=2\n"},
		{"crlf", "a=1\r\ncabinet.x=2\r\nb=3\r\n", "a=1\r\nb=3\r\n"},
		{"last line without newline", "a=1\ncabinet.x=2", "a=1\n"},
		{"kept last line without newline", "cabinet.x=2\na=1", "a=1"},
		{"bom kept", bom + "cabinet.x=1\na=2\n", bom + "a=2\n"},
		{"no equals kept", "cabinet.x\n", "cabinet.x\n"},
		{"similar prefix kept", "cabinetx=1\nmy.cabinet.x=2\n", "cabinetx=1\nmy.cabinet.x=2\n"},
		{"blank lines kept", "\n\ncabinet.a=1\n\n", "\n\n\n"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batoconf.RemoveKeys([]byte(tt.data), isCabinet); string(got) != tt.want {
				t.Errorf("RemoveKeys(%q) = %q, want %q", tt.data, got, tt.want)
			}
		})
	}
}
