package osupdate

import (
	"github.com/batocera-cabinet/cabinet/daemon/sysexec"

	"errors"
	"testing"
	"unicode"
	"unicode/utf8"
)

func FuzzParseCheck(f *testing.F) {
	for _, s := range []string{"43 2026/05/14 10:00\n", "\n", "", "<html>\n", "43\r\n", "\xff", "4\x00"} {
		for _, code := range []int{0, 12, 2, 10, 1} {
			f.Add([]byte(s), code)
		}
	}
	f.Fuzz(func(t *testing.T, out []byte, code int) {
		res, err := parseCheck(out, code)
		if err != nil {
			if n := utf8.RuneCountInString(err.Error()); n > sysexec.MaxSnippet+200 {
				t.Fatalf("error of %d chars: %q", n, err)
			}
			if errors.Is(err, ErrMalformed) && code != exitUpdate && code != exitUpToDate {
				t.Fatalf("exit %d gave %v: only versions are parsed", code, err)
			}
			return
		}
		if code != exitUpdate && code != exitUpToDate {
			t.Fatalf("exit %d accepted as %+v", code, res)
		}
		v := res.Latest
		if v == "" || len(v) > MaxVersion || !utf8.ValidString(v) || v[0] < '0' || v[0] > '9' {
			t.Fatalf("bad version %q from %q", v, out)
		}
		for _, r := range v {
			if !unicode.IsPrint(r) {
				t.Fatalf("unprintable %q in %q", r, v)
			}
		}
		if res.Available != (code == exitUpdate) {
			t.Fatalf("Available %v for exit %d", res.Available, code)
		}
	})
}
