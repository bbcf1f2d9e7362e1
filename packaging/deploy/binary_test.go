package deploy

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/release"
)

// fakeRunner answers every command with out, or err, and records the
// commands.
type fakeRunner struct {
	out      string
	err      error
	commands []string
}

func (f *fakeRunner) run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error {
	f.commands = append(f.commands, command)
	if f.err != nil {
		return f.err
	}
	_, err := io.WriteString(stdout, f.out)
	return err
}

func TestProbe(t *testing.T) {
	down := errors.New("connection lost")
	tests := []struct {
		name, out     string
		err           error
		target, batoc string
		wantErr       string
	}{
		{name: "pc", out: "machine=x86_64\nversion=41 2024/11/20 10:00\n", target: "amd64", batoc: "41"},
		{name: "pi 4", out: "machine=aarch64\nversion=40\n", target: "arm64", batoc: "40"},
		{name: "odroid xu4", out: "machine=armv7l\nversion=39\n", target: "armv7", batoc: "39"},
		{name: "pi zero", out: "machine=armv6l\nversion=39\n", target: "armv6", batoc: "39"},
		{name: "visionfive", out: "machine=riscv64\nversion=41\n", target: "riscv64", batoc: "41"},
		{name: "not batocera", out: "machine=x86_64\nversion=\n", target: "amd64"},
		{name: "login noise ignored", out: "Welcome to the cabinet!\nmachine=aarch64\nversion= 41 \n", target: "arm64", batoc: "41"},
		{name: "odd machine", out: "machine=mips\nversion=41\n", wantErr: `says "mips"; Cabinet is built for x86_64, aarch64`},
		{name: "32-bit pc", out: "machine=i686\nversion=35\n", wantErr: `"i686"`},
		{name: "no answer", out: "", wantErr: "did not say its architecture"},
		{name: "ssh failed", err: down, wantErr: "connection lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &fakeRunner{out: tt.out, err: tt.err}
			cab, err := probe(context.Background(), r, "", nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", cab, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cab.target.Name != tt.target || cab.batocera != tt.batoc {
				t.Errorf("got target %q, Batocera %q; want %q, %q", cab.target.Name, cab.batocera, tt.target, tt.batoc)
			}
		})
	}
}

// TestProbeCommand runs the probe in a real shell on this machine, with the
// version file under a fake root whose name needs quoting.
func TestProbeCommand(t *testing.T) {
	root := filepath.Join(t.TempDir(), "it's a root")
	if err := os.MkdirAll(filepath.Join(root, "usr/share/batocera"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, VersionFile), []byte("41 2024/11/20 10:00\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uname, err := exec.Command("uname", "-m").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ root, version string }{{root, "41"}, {t.TempDir(), ""}} {
		out, err := exec.Command(shell(t), "-c", probeCommand(tt.root)).Output()
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		machine, version, err := parseProbe(string(out))
		if err != nil || machine != strings.TrimSpace(string(uname)) || version != tt.version {
			t.Errorf("root %s: got %q, %q, %v; want %q, %q", tt.root, machine, version, err, strings.TrimSpace(string(uname)), tt.version)
		}
	}
}

func FuzzParseProbe(f *testing.F) {
	f.Add("machine=x86_64\nversion=41 2024\n")
	f.Add("machine=\nversion=\n")
	f.Add("version=41\nmachine=aarch64")
	f.Fuzz(func(t *testing.T, out string) {
		machine, version, err := parseProbe(out)
		if err != nil {
			return
		}
		if machine == "" || strings.ContainsAny(machine, "\n") || strings.ContainsAny(version, " \t\n") {
			t.Fatalf("parseProbe(%q) = %q, %q", out, machine, version)
		}
	})
}

func TestFindSourceTree(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go in PATH")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkout := filepath.Join(dir, "checkout")
	write(filepath.Join(checkout, "go.mod"), "// Cabinet\nmodule github.com/batocera-cabinet/cabinet\n\ngo 1.26\n")
	other := filepath.Join(dir, "other")
	write(filepath.Join(other, "go.mod"), "module github.com/batocera-cabinet/cabinet-tools\n")
	nested := filepath.Join(checkout, "sub", "mod")
	write(filepath.Join(nested, "go.mod"), "module example.com/mod\n")
	tests := []struct{ from, want string }{
		{checkout, checkout},
		{filepath.Join(checkout, "packaging", "deploy"), checkout},
		{nested, checkout}, // another module inside the checkout: keep walking up
		{other, ""},
		{dir, ""},
	}
	for _, tt := range tests {
		os.MkdirAll(tt.from, 0o755)
		if got := FindSourceTree(tt.from); got != tt.want {
			t.Errorf("FindSourceTree(%s) = %q, want %q", tt.from, got, tt.want)
		}
	}
}

// elfHeader is the smallest file debug/elf reads: a header for machine,
// no sections.
func elfHeader(t *testing.T, machine elf.Machine, class elf.Class) []byte {
	t.Helper()
	ident := [elf.EI_NIDENT]byte{0x7f, 'E', 'L', 'F', byte(class), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)}
	var b bytes.Buffer
	var h any
	if class == elf.ELFCLASS64 {
		h = &elf.Header64{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Ehsize: 64}
	} else {
		h = &elf.Header32{Ident: ident, Type: uint16(elf.ET_EXEC), Machine: uint16(machine), Version: uint32(elf.EV_CURRENT), Ehsize: 52}
	}
	if err := binary.Write(&b, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckELF(t *testing.T) {
	dir := t.TempDir()
	target := func(name string) release.Target {
		for _, tg := range release.Targets() {
			if tg.Name == name {
				return tg
			}
		}
		t.Fatalf("no target %s", name)
		return release.Target{}
	}
	tests := []struct {
		name    string
		content []byte
		target  string
		wantErr string
	}{
		{"amd64 for a pc", elfHeader(t, elf.EM_X86_64, elf.ELFCLASS64), "amd64", ""},
		{"arm64 for a pi", elfHeader(t, elf.EM_AARCH64, elf.ELFCLASS64), "arm64", ""},
		{"arm for an odroid", elfHeader(t, elf.EM_ARM, elf.ELFCLASS32), "armv7", ""},
		{"riscv", elfHeader(t, elf.EM_RISCV, elf.ELFCLASS64), "riscv64", ""},
		{"arm64 for a pc", elfHeader(t, elf.EM_AARCH64, elf.ELFCLASS64), "amd64", "built for EM_AARCH64, but the cabinet is x86_64: give it cabinet-linux-amd64"},
		{"amd64 for a pi", elfHeader(t, elf.EM_X86_64, elf.ELFCLASS64), "arm64", "give it cabinet-linux-arm64"},
		{"a script", []byte("#!/bin/sh\necho hi\n"), "amd64", ""},
		{"empty", nil, "amd64", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(name, tt.content, 0o755); err != nil {
				t.Fatal(err)
			}
			err := checkELF(name, target(tt.target))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
	if err := checkELF(filepath.Join(dir, "missing"), target("amd64")); err == nil {
		t.Error("a missing file passed")
	}
}

// TestPickRelease takes the release binary beside the running program, and
// only when SHA256SUMS vouches for it.
func TestPickRelease(t *testing.T) {
	amd64, _ := release.ForMachine("x86_64")
	content := elfHeader(t, elf.EM_X86_64, elf.ELFCLASS64)
	good := func(dir string) {
		os.WriteFile(filepath.Join(dir, "cabinet-linux-amd64"), content, 0o755)
	}
	sums := func(dir, sum string) {
		os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sum+"  cabinet-linux-amd64\n"), 0o644)
	}
	tests := []struct {
		name    string
		setup   func(dir string)
		wantErr string
	}{
		{"verified", func(dir string) {
			good(dir)
			sum, _ := release.FileSHA256(filepath.Join(dir, "cabinet-linux-amd64"))
			sums(dir, sum)
		}, ""},
		{"damaged", func(dir string) { good(dir); sums(dir, strings.Repeat("0", 64)) }, "download it again"},
		{"no checksums", good, "open checksums"},
		{"no binary", func(string) {}, "the cabinet needs cabinet-linux-amd64 and there is none in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(dir)
			o := Options{Executable: filepath.Join(dir, "cabinet")}
			b, err := pickBinary(context.Background(), o, amd64, t.TempDir(), io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", b, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.path != filepath.Join(dir, "cabinet-linux-amd64") || len(b.sha256) != 64 {
				t.Errorf("got %+v", b)
			}
		})
	}
	if _, err := pickBinary(context.Background(), Options{}, amd64, t.TempDir(), io.Discard); err == nil || !strings.Contains(err.Error(), "--binary") {
		t.Errorf("with nothing to pick: %v, want advice naming --binary", err)
	}
}

func TestPathsUnder(t *testing.T) {
	tests := []struct{ root, final string }{
		{"", "/userdata/system/cabinet/bin/.cabinet.deploy"},
		{"/tmp/fake", "/tmp/fake/userdata/system/cabinet/bin/.cabinet.deploy"},
	}
	for _, tt := range tests {
		p := pathsUnder(tt.root)
		if p.final != tt.final || p.tmp != tt.final+".tmp" || p.dir != filepath.Dir(tt.final) {
			t.Errorf("pathsUnder(%q) = %+v", tt.root, p)
		}
	}
}
