package sizes

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSymbolPackage(t *testing.T) {
	for _, tc := range []struct{ sym, want string }{
		{"runtime.mallocgc", "runtime"},
		{"net/http.(*Transport).dialConn", "net/http"},
		{"github.com/rs/zerolog.(*Event).Str", "github.com/rs/zerolog"},
		{"github.com/mochi-mqtt/server/v2/packets.init", "github.com/mochi-mqtt/server/v2/packets"},
		{"go.etcd.io/bbolt.(*DB).Update.func1", "go.etcd.io/bbolt"},
		{"gopkg.in/yaml%2ev3.Marshal", "gopkg.in/yaml.v3"},
		{"crypto/internal/entropy/v1%2e0%2e0.SHA384", "crypto/internal/entropy/v1.0.0"},
		{"slices.SortFunc[go.shape.struct { Name string }]", "slices"},
		{"sync/atomic.(*Pointer[net/http.Server]).Load", "sync/atomic"},
		{"vendor/golang.org/x/net/idna.idnaValues", "vendor/golang.org/x/net/idna"},
		{"crypto/sha256.block.abi0", "crypto/sha256"},
		{"type:.eq.github.com/batocera-cabinet/cabinet/daemon/es.Game", "github.com/batocera-cabinet/cabinet/daemon/es"},
		{"type:.eq.[8]internal/cpu.option", "internal/cpu"},
		{"type:.eq.*[2]net/netip.Addr", "net/netip"},
		{"type:.eq.go.shape.299ff469", "(generic shapes)"},
		{"go:func.*", linkerTables},
		{"go:itab.*os.File,io.Reader", linkerTables},
		{"type:*", linkerTables},
		{"$f64.3fe0000000000000", "(constants)"},
		{"_rt0_amd64_linux", "(other)"},
		{".hidden", "(other)"},
		{"", "(other)"},
	} {
		if got := symbolPackage(tc.sym); got != tc.want {
			t.Errorf("symbolPackage(%q) = %q, want %q", tc.sym, got, tc.want)
		}
	}
}

func TestByModule(t *testing.T) {
	pkgs := []Part{
		{"runtime", 50},
		{"github.com/a/b", 10},
		{"github.com/a/b/c", 5},
		{"github.com/a/b/v2/x", 7}, // a nested module wins over its parent
		{"github.com/a/bc", 3},     // not within github.com/a/b
		{"main", 4},                // the main module's
		{"(constants)", 2},
	}
	got := byModule(pkgs, "github.com/a/b", []string{"github.com/a/b", "github.com/a/b/v2", ""})
	want := []Part{{"std", 53}, {"github.com/a/b", 19}, {"github.com/a/b/v2", 7}, {"(constants)", 2}}
	if len(got) != len(want) {
		t.Fatalf("byModule = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("byModule[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// smallProgram builds a tiny linux program (a second or two: the
// standard library is in the build cache), stripped or not.
func smallProgram(t *testing.T, strip bool) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/small\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hi\") }\n"), 0o644)
	ldflags := ""
	if strip {
		ldflags = "-s -w"
	}
	bin := filepath.Join(dir, "small")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestReadBreakdown(t *testing.T) {
	b, err := ReadBreakdown(smallProgram(t, false))
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	found := map[string]bool{}
	for _, p := range append(b.Packages, b.Shared...) {
		sum += p.Bytes
		found[p.Name] = true
	}
	if b.Loaded <= 0 || sum != b.Loaded {
		t.Errorf("packages and shared tables add up to %d, want the loaded %d", sum, b.Loaded)
	}
	for _, want := range []string{"runtime", "fmt", "main", "(function and line tables: .gopclntab)"} {
		if !found[want] {
			t.Errorf("no part %q in %v", want, b.Packages[:min(len(b.Packages), 20)])
		}
	}
	var mods []string
	for _, m := range b.Modules {
		mods = append(mods, m.Name)
	}
	if !strings.Contains(strings.Join(mods, " "), "std") {
		t.Errorf("modules %v: no std", mods)
	}
	if !strings.Contains(strings.Join(mods, " "), "example.com/small") {
		t.Errorf("modules %v: package main is not counted to its module", mods)
	}

	var out bytes.Buffer
	if err := WriteBreakdown(&out, b, 3); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"loaded sections:", "package", "module", "runtime", "more)", "%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("breakdown table has no %q:\n%s", want, out.String())
		}
	}

	if _, err := ReadBreakdown(smallProgram(t, true)); err == nil || !strings.Contains(err.Error(), "without -s") {
		t.Errorf("ReadBreakdown of a stripped binary: %v, want advice to build without -s", err)
	}
	if _, err := ReadBreakdown(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("ReadBreakdown of a missing file: no error")
	}
}
