package sensors

import "testing"

func TestParseVolume(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"65", 65, true}, {"65.0", 65, true}, {" 5 ", 5, true}, {"0", 0, true}, {"100", 100, true},
		{"62.5", 63, true}, {"101", 0, false}, {"-1", 0, false}, {"NaN", 0, false}, {"", 0, false},
		{"1e2", 100, true}, {"abc", 0, false}, {"5; reboot", 0, false}, {"00000000000000000065", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseVolume([]byte(tt.in))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseVolume(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseSwitch(t *testing.T) {
	for in, want := range map[string]bool{"ON": true, "OFF": false} {
		if got, err := ParseSwitch([]byte(in)); err != nil || got != want {
			t.Errorf("ParseSwitch(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"on", "", "ON\n", "true", "1"} {
		if _, err := ParseSwitch([]byte(in)); err == nil {
			t.Errorf("ParseSwitch(%q) accepted", in)
		}
	}
}

func FuzzParseVolume(f *testing.F) {
	f.Add("65")
	f.Add("65.0")
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParseVolume([]byte(s)); err == nil && (v < 0 || v > 100) {
			t.Fatalf("ParseVolume(%q) = %d", s, v)
		}
	})
}
