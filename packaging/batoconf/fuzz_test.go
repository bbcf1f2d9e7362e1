package batoconf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// fuzzTools are the real tools, or a zero Tools when they cannot be built
// here: the fuzz targets then check invariants only (and fail when CI
// demands peers).
func fuzzTools(f *testing.F) batocera.Tools {
	tools, err := batocera.BuildTools()
	if err != nil {
		if os.Getenv(peertest.RequireEnv) == "1" {
			f.Fatalf("required peer missing (%s=1): %v", peertest.RequireEnv, err)
		}
		f.Logf("real tools unavailable, checking invariants only: %v", err)
	}
	return tools
}

// keysOf lists the keys of data's settings lines, as Get reads them.
func keysOf(data []byte) []string {
	var keys []string
	batoconf.RemoveKeys(data, func(k string) bool { keys = append(keys, k); return false })
	return keys
}

func FuzzSet(f *testing.F) {
	for _, tt := range setCases {
		if len(tt.kvs) > 2 {
			continue
		}
		kv2 := batoconf.KV{}
		if len(tt.kvs) == 2 {
			kv2 = tt.kvs[1]
		}
		f.Add(dataOf(tt.data), tt.kvs[0].Key, tt.kvs[0].Value, kv2.Key, kv2.Value)
	}
	f.Add([]byte(batocera.DefaultConf), "system.services", "cabinet", "cabinet.mqtt.broker", "tcp://ha:1883")
	tools := fuzzTools(f)

	f.Fuzz(func(t *testing.T, data []byte, k1, v1, k2, v2 string) {
		kvs := []batoconf.KV{{Key: k1, Value: v1}}
		if k2 != "" {
			kvs = append(kvs, batoconf.KV{Key: k2, Value: v2})
		}
		out, err := batoconf.Set(data, kvs...)
		if err != nil {
			for _, kv := range kvs {
				if batoconf.ValidKey(kv.Key) != nil || batoconf.ValidValue(kv.Value) != nil {
					return
				}
			}
			if len(data) > batoconf.MaxSize {
				return
			}
			t.Fatalf("Set refused valid input: %v", err)
		}

		if len(out) == 0 || out[len(out)-1] != '\n' {
			t.Errorf("output %q does not end with a newline", out)
		}
		if bytes.HasPrefix(out, []byte("\xEF\xBB\xBF")) {
			t.Errorf("output %q starts with a byte order mark", out)
		}
		set := map[string]bool{}
		for _, kv := range kvs {
			if got, ok := batoconf.Get(out, kv.Key); !set[kv.Key] && (!ok || got != kv.Value) {
				t.Errorf("Get(%q) after Set = %q, %v; want %q", kv.Key, got, ok, kv.Value)
			}
			set[kv.Key] = true
		}
		for _, k := range keysOf(data) {
			if set[k] {
				continue
			}
			before, _ := batoconf.Get(data, k)
			if after, ok := batoconf.Get(out, k); !ok || after != before {
				t.Errorf("other key %q: %q before Set, %q (%v) after", k, before, after, ok)
			}
		}
		// A key given twice appends its second value on every Set.
		if len(set) == len(kvs) {
			if again, _ := batoconf.Set(out, kvs...); !bytes.Equal(again, out) {
				t.Errorf("Set is not idempotent:\nonce  %q\ntwice %q", out, again)
			}
		}

		if tools.Set == "" {
			return
		}
		conf := filepath.Join(t.TempDir(), "batocera.conf")
		if err := os.WriteFile(conf, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tools.SetFile(t, conf, flat(kvs)...)
		real, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, real) {
			t.Errorf("Set(%q, %q)\n got %q\nreal %q", data, kvs, out, real)
		}
	})
}

func FuzzGet(f *testing.F) {
	for _, tt := range setCases {
		f.Add(dataOf(tt.data), tt.kvs[0].Key)
	}
	f.Add([]byte("\t a \t=\t v \t\r\n"), "a")
	tools := fuzzTools(f)

	f.Fuzz(func(t *testing.T, data []byte, key string) {
		got, ok := batoconf.Get(data, key)
		if ok && batoconf.ValidKey(key) == nil {
			// What Get found, Set leaves alone when setting another key.
			out, err := batoconf.Set(data, batoconf.KV{Key: key + ".other", Value: "x"})
			if err == nil {
				if again, _ := batoconf.Get(out, key); again != got {
					t.Errorf("Get(%q) = %q, but %q after setting another key", key, got, again)
				}
			}
		}
		// The tool takes the key from argv, a C string; a NUL cuts it.
		if tools.Get == "" || bytes.IndexByte([]byte(key), 0) >= 0 {
			return
		}
		conf := filepath.Join(t.TempDir(), "batocera.conf")
		if err := os.WriteFile(conf, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want, wantOK := tools.GetFile(t, conf, key)
		if got != want || ok != wantOK {
			t.Errorf("Get(%q, %q) = %q, %v; real = %q, %v", data, key, got, ok, want, wantOK)
		}
	})
}
