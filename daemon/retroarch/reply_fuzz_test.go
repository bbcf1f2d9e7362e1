package retroarch

import (
	"strings"
	"testing"
)

func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{
		"GET_STATUS PLAYING nes,stub,crc32=708c346c\n",
		"GET_STATUS PAUSED Nestopia,stub,crc32=cb2da165\n",
		"GET_STATUS CONTENTLESS",
		"GET_STATUS PLAYING mame,a,b,crc32=1,crc32=ff",
		"GET_STATUS PLAYING ,,crc32=0",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStatus(b)
		if err != nil {
			return
		}
		switch st.State {
		case StatePlaying, StatePaused, StateContentless:
		default:
			t.Fatalf("parseStatus(%q): state %q", b, st.State)
		}
		if strings.Contains(st.System, ",") {
			t.Fatalf("parseStatus(%q): system %q has a comma; it must end at the first one", b, st.System)
		}
		// What RetroArch would print for the parsed status parses back to it.
		again, err := parseStatus([]byte(formatStatus(st)))
		if err != nil || again != st {
			t.Fatalf("round trip of %q: got %+v, %v; want %+v", b, again, err, st)
		}
	})
}

func FuzzParseConfigParam(f *testing.F) {
	f.Add([]byte("GET_CONFIG_PARAM savestate_directory /tmp/ra/states"), "savestate_directory")
	f.Add([]byte("GET_CONFIG_PARAM cache_directory "), "cache_directory")
	f.Add([]byte("GET_CONFIG_PARAM active_replay unsupported"), "active_replay")
	f.Add([]byte("GET_CONFIG_PARAM  unsupported"), "")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		v, err := parseConfigParam(b, name)
		if err != nil {
			if v != "" {
				t.Fatalf("parseConfigParam(%q, %q): value %q with error %v", b, name, v, err)
			}
			return
		}
		if v == unsupported {
			t.Fatalf("parseConfigParam(%q, %q): returned %q as a value", b, name, v)
		}
		if want := configReplyPrefix(name) + v; strings.TrimSuffix(string(b), "\n") != want {
			t.Fatalf("parseConfigParam(%q, %q) = %q: the reply is not prefix+value", b, name, v)
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"1.14.0\n", "1.22.2", "", "GET_STATUS CONTENTLESS", "1.19.1-git\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseVersion(b)
		if err != nil {
			return
		}
		if v == "" || len(v) > maxVersion || strings.ContainsAny(v, " \n\x00") || v[0] < '0' || v[0] > '9' {
			t.Fatalf("parseVersion(%q) = %q: not a version", b, v)
		}
	})
}
