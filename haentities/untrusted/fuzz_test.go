package untrusted

import "testing"

var fuzzSeeds = []string{
	"", "Plain Game", "  a\t\tb  ", "evil\u202egnp.exe", "\xff\xfe\xfd", "a\r\n\r\nb", "\U000E0041tag",
	"z\u200bw\u200dj", "ééééééé", "a\u2028b\u2029c\u0085d", "\ufeff\u00ad", "x\n \n \n y",
}

func FuzzClean(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 255)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 300 // keep caps in a range that actually cuts
		checkInvariants(t, Clean, s, max, false)
	})
}

func FuzzCleanText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, 4096)
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 300
		checkInvariants(t, CleanText, s, max, true)
		if out := CleanText(s, max); out != "" && (out[0] == '\n' || out[len(out)-1] == '\n') {
			t.Fatalf("CleanText output %q starts or ends with a line break", out)
		}
	})
}
