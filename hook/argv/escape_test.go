package argv

import (
	"strings"
	"testing"
)

// esSpecial are the characters EmulationStation's getEscapedPath puts a
// backslash before (es-core FileSystemUtil.cpp).
const esSpecial = "\\ '\"!$^&*(){}[]?;<>"

// esEscape is ES's getEscapedPath.
func esEscape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if strings.IndexByte(esSpecial, p[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// throughSh is what sh makes of an argument ES built: quoted when it has a
// space (backslash only escapes \ $ " ` inside double quotes), else unquoted
// (every backslash escapes the next character).
func throughSh(arg string) string {
	var b strings.Builder
	quoted := strings.Contains(arg, " ")
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if c == '\\' && i+1 < len(arg) {
			n := arg[i+1]
			if !quoted || strings.IndexByte("\\$\"`", n) >= 0 {
				b.WriteByte(n)
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func TestUnescapePathCaptures(t *testing.T) {
	// As received by real scripts (es-captures/events_launch_*.txt).
	tests := []struct{ arg, want string }{
		{`/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes`, "/userdata/roms/nes/Super Mario Bros. (World).nes"},
		{`/userdata/roms/nes/Tom\'s\ $Game.nes`, "/userdata/roms/nes/Tom's $Game.nes"},
		{`/userdata/roms/nes/Plain.nes`, "/userdata/roms/nes/Plain.nes"},
		{`/userdata/roms/nes/Mario_(USA).nes`, "/userdata/roms/nes/Mario_(USA).nes"},
		{`/userdata/roms/mame/a\b c.zip`, `/userdata/roms/mame/a\b c.zip`},
	}
	for _, tt := range tests {
		if got := UnescapePath(tt.arg); got != tt.want {
			t.Errorf("UnescapePath(%q) = %q, want %q", tt.arg, got, tt.want)
		}
	}
}

func TestUnescapeInvertsES(t *testing.T) {
	names := []string{"Super Mario Bros. (World)", "Tom's $Game", "a & b; c", "[!] {x} <y> ?*^", "Pokémon – Edición", "x\\y z", "plain"}
	for _, n := range names {
		p := "/userdata/roms/snes/" + n + ".sfc"
		if got := UnescapePath(throughSh(esEscape(p))); got != p {
			t.Errorf("round trip of %q = %q", p, got)
		}
	}
}

func FuzzUnescapePath(f *testing.F) {
	f.Add("/userdata/roms/nes/Super Mario Bros. (World).nes")
	f.Add("/a/b c\\d'e")
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsAny(p, "\"`") {
			return // ES deletes " from arguments; ` is command substitution: not invertible by design
		}
		got := UnescapePath(throughSh(esEscape(p)))
		if got != p {
			t.Fatalf("UnescapePath(sh(es(%q))) = %q", p, got)
		}
		_ = UnescapePath(p) // arbitrary input never panics
	})
}
