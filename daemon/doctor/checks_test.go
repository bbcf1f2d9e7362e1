package doctor

import "testing"

func TestModelessFS(t *testing.T) {
	for _, tc := range []struct {
		magic int64
		want  bool
	}{{0x4d44, true}, {0x2011bab0, true}, {0x65735546, true}, {0xef53, false}, {0x9123683e, false}, {0x01021994, false}} {
		if got := modelessFS(tc.magic) != ""; got != tc.want {
			t.Errorf("modelessFS(%#x) = %q", tc.magic, modelessFS(tc.magic))
		}
	}
}
