package esevents

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	tests := []struct {
		name, script, event string
		args                []string
		want                string
	}{
		{"per-event, no args", "/s/game-end/log.sh", "", nil, "/s/game-end/log.sh"},
		{"root, event first", "/s/logall.sh", "sleep", nil, "/s/logall.sh sleep"},
		{"script with space quoted", "/s/my hook.sh", "wake", nil, `"/s/my hook.sh" wake`},
		{"space arg quoted", "/s/x", "", []string{"random video"}, `/s/x "random video"`},
		{
			"game-start smb",
			"/s/log.sh", "game-start",
			GameStartArgs("/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"),
			`/s/log.sh game-start "/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes" "Super Mario Bros. (World)" "Super Mario Bros. (World)"`,
		},
		{
			"game-start mario: unquoted parentheses",
			"/s/log.sh", "",
			GameStartArgs("/userdata/roms/nes/Mario_(USA).nes", "Mario_(USA)"),
			`/s/log.sh /userdata/roms/nes/Mario_\(USA\).nes Mario_(USA) Mario_(USA)`,
		},
		{"empty stops", "/s/x", "", []string{"a", "", "c"}, "/s/x a"},
		{"leading quote drops last byte too", "/s/x", "", []string{`"abc!`}, "/s/x abc"},
		{"lone quote", "/s/x", "", []string{`"`, "b"}, "/s/x  b"},
		{"inner quotes deleted", "/s/x", "", []string{`a"b"c`}, "/s/x abc"},
		{"quotes deleted then space quoted", "/s/x", "", []string{`"a b"`}, `/s/x "a b"`},
	}
	for _, tt := range tests {
		if got := CommandLine(tt.script, tt.event, tt.args...); got != tt.want {
			t.Errorf("%s: CommandLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestWrap(t *testing.T) {
	got := Wrap("/s/x a", "/l/es_script_stderr.log", "/l/es_script_stdout.log")
	want := "((((/s/x a 2> /l/es_script_stderr.log ; echo $? >&3) | head -300 > /l/es_script_stdout.log) 3>&1) | (read xs; exit $xs))"
	if got != want {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
}

func TestEscapedPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/userdata/roms/nes/Plain.nes", "/userdata/roms/nes/Plain.nes"},
		{"/userdata/roms/nes/Super Mario Bros. (World).nes", `/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes`},
		{"/userdata/roms/nes/Tom's $Game.nes", `/userdata/roms/nes/Tom\'s\ \$Game.nes`},
		{`/a/"!^&*{}[]?;<>`, `/a/\"\!\^\&\*\{\}\[\]\?\;\<\>`},
		{`/a\b//c/`, "/a/b/c"}, // made generic first
		{`\\?\x`, "x"},
		{"", ""},
		{"((", `\(\(`},
	}
	for _, tt := range tests {
		if got := EscapedPath(tt.in); got != tt.want {
			t.Errorf("EscapedPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/userdata/roms/nes/Super Mario Bros. (World).nes", "Super Mario Bros. (World)"},
		{"/r/a.tar.gz", "a.tar"},
		{"/r.d/noext", "noext"},
		{"/r/.nes", ""},
		{`C:\x\y.z`, "y"},
		{"plain", "plain"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Stem(tt.in); got != tt.want {
			t.Errorf("Stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// esEscapedPath is a literal port of getEscapedPath's loops (FileSystemUtil.cpp:679-701),
// kept to hold the single-pass EscapedPath to it.
func esEscapedPath(path string) string {
	p := []byte(GenericPath(path))
	for _, c := range []byte(escapedChars) {
		start := 0
		for {
			off := indexFrom(p, c, start)
			if off < 0 {
				break
			}
			start = off + 1
			if off == 0 || p[off-1] != '\\' {
				p = append(p[:off], append([]byte{'\\'}, p[off:]...)...)
				start++
			}
		}
	}
	return string(p)
}

func indexFrom(p []byte, c byte, start int) int {
	for i := start; i < len(p); i++ {
		if p[i] == c {
			return i
		}
	}
	return -1
}

// unescape is es-events.md §4 (a): drop a backslash before any byte getEscapedPath escapes.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(escapedChars, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func FuzzEscapedPath(f *testing.F) {
	for _, s := range []string{"/userdata/roms/nes/Tom's $Game.nes", `a\\b`, `\\?\c:\x`, "//x//", "(())", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		got := EscapedPath(path)
		// The literal port is quadratic; long inputs would only slow the fuzzer down.
		if len(path) > 4096 {
			path = path[:4096]
			got = EscapedPath(path)
		}
		if want := esEscapedPath(path); got != want {
			t.Fatalf("EscapedPath(%q) = %q, ES's algorithm gives %q", path, got, want)
		}
		if g := GenericPath(path); unescape(got) != g {
			t.Fatalf("unescape(EscapedPath(%q)) = %q, want the generic path %q", path, unescape(got), g)
		}
		_ = Stem(path)
		_ = rootScriptExtension(path)
	})
}

// plainByte: bytes that mean themselves to sh outside quotes and never get quoted by ES.
func plainByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/._-+,:@%=", c) >= 0
}

// splitPlain is the subset of sh word splitting that applies when every byte is plain or a
// space: words split on spaces, double quotes group and are removed.
func splitPlain(s string) []string {
	var out []string
	var cur strings.Builder
	inWord, inQuote := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			inQuote, inWord = !inQuote, true
		case c == ' ' && !inQuote:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

func FuzzCommandLine(f *testing.F) {
	f.Add("/s/log.sh", "game-start", "/r/Super Mario.nes", "Super Mario", "x")
	f.Add("/s/my hook", "", `"quoted"`, `"`, "")
	f.Add("/s/x", "quit", "reboot", "", "ignored")
	f.Add("/s/x", "e", "a\x00b", "$HOME", "(x)")
	f.Fuzz(func(t *testing.T, script, event, a1, a2, a3 string) {
		args := []string{a1, a2, a3}
		got := CommandLine(script, event, args...)

		prefix := script
		if strings.Contains(script, " ") {
			prefix = `"` + script + `"`
		}
		if !strings.HasPrefix(got, prefix) {
			t.Fatalf("CommandLine = %q does not start with the script %q", got, prefix)
		}

		// Arguments contribute no '"' except the pair around one containing a space.
		live := args
		for i, a := range args {
			if a == "" {
				live = args[:i]
				break
			}
		}
		quotes := strings.Count(prefix, `"`) + strings.Count(event, `"`)
		for _, a := range live {
			d := a
			if d[0] == '"' {
				d = d[min(1, len(d)):max(1, len(d)-1)]
			}
			if strings.Contains(strings.ReplaceAll(d, `"`, ""), " ") {
				quotes += 2
			}
		}
		if n := strings.Count(got, `"`); n != quotes {
			t.Fatalf("CommandLine = %q has %d '\"', want %d", got, n, quotes)
		}

		// With plain bytes and spaces only, sh's word splitting gives the arguments back.
		allPlain := func(s string, spaces bool) bool {
			for i := 0; i < len(s); i++ {
				if !plainByte(s[i]) && !(spaces && s[i] == ' ') {
					return false
				}
			}
			return true
		}
		if script == "" || !allPlain(script, true) || !allPlain(event, false) {
			return
		}
		want := []string{script}
		if event != "" {
			want = append(want, event)
		}
		for _, a := range live {
			if !allPlain(a, true) {
				return
			}
			want = append(want, a)
		}
		words := splitPlain(got)
		if strings.Join(words, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("CommandLine(%q, %q, %q) = %q splits into %q, want %q", script, event, args, got, words, want)
		}
	})
}

// TestEscapedPathArrivesAsPredicted fires game-start for random ROM names and checks arg1 as
// the hook receives it against es-events.md §4: with a space the escaped path is double-quoted,
// so every inserted backslash arrives literally; without one it is unquoted and sh removes them.
func TestEscapedPathArrivesAsPredicted(t *testing.T) {
	const (
		letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
		quoted  = letters + " '()[]{}!^&*?;<>" // literal inside double quotes (no $ ` \ ")
	)
	cases := 40
	if testing.Short() {
		cases = 12 // each fires ES's command line through sh
	}
	rng := rand.New(rand.NewPCG(3, 4)) // fixed seed: the same names every run
	gen := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}

	tr := newTree(t)
	tr.addRecorder(t, "game-start", "log")
	type want struct{ arg1, path string }
	wants := map[string]want{} // by name, which arrives as arg3
	for len(wants) < cases {
		var name string
		if len(wants)%4 == 3 {
			name = gen(letters, 1+rng.IntN(20)) // unquoted case
		} else {
			name = gen(quoted, rng.IntN(10)) + " " + gen(quoted, rng.IntN(10)) // quoted case
		}
		if strings.Trim(name, " ") == "" || name[0] == '.' || strings.Contains(name, "..") {
			continue
		}
		path := "/userdata/roms/nes/" + name + ".nes"
		w := want{arg1: EscapedPath(path), path: path}
		if !strings.Contains(name, " ") {
			w.arg1 = path
		}
		wants[name] = w
		tr.firer.Fire("game-start", GameStartArgs(path, name)...)
	}
	tr.wait(t)
	recs := tr.takeRecords(t)
	if len(recs) != cases {
		t.Fatalf("got %d invocations, want %d", len(recs), cases)
	}
	for _, r := range recs {
		argv := r.argv()
		if len(argv) != 3 {
			t.Errorf("argv = %q, want 3 arguments", argv)
			continue
		}
		w, ok := wants[argv[2]]
		if !ok {
			t.Errorf("arg3 %q is none of the names fired", argv[2])
			continue
		}
		if argv[0] != w.arg1 {
			t.Errorf("name %q: arg1 = %q, want %q", argv[2], argv[0], w.arg1)
		}
		if argv[1] != argv[2] {
			t.Errorf("name %q: stem = %q", argv[2], argv[1])
		}
		if got := unescape(argv[0]); got != w.path {
			t.Errorf("name %q: de-escaped arg1 = %q, want the path %q", argv[2], got, w.path)
		}
	}
}
