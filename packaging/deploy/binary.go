package deploy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/packaging/release"
)

// Module is the module path FindSourceTree looks for.
const Module = "github.com/batocera-cabinet/cabinet"

// VersionFile is where Batocera says which release it is (its first word).
const VersionFile = "/usr/share/batocera/batocera.version"

// buildTimeout bounds a cross-build; a cold cache takes a minute or two.
const buildTimeout = 10 * time.Minute

// runner runs one shell command line on the cabinet; *sshClient is the
// real one, tests inject their own.
type runner interface {
	run(ctx context.Context, command string, stdin io.Reader, stdout, stderr io.Writer) error
}

// cabinet is what deploy learns about the machine it deploys to.
type cabinet struct {
	target   release.Target
	batocera string // first word of batocera.version; "" when there is none
}

// probeCommand prints the machine and the Batocera version under root, one
// "key=value" line each, so that anything else a login shell prints is
// ignored.
func probeCommand(root string) string {
	return `printf 'machine=%s\n' "$(uname -m)"; printf 'version=%s\n' "$(head -n 1 ` + Quote(path.Join("/", root, VersionFile)) + ` 2>/dev/null)"`
}

// probe reads the cabinet's architecture and Batocera version; ssh's own
// messages go to stderr (nil: nowhere).
func probe(ctx context.Context, r runner, root string, stderr io.Writer) (cabinet, error) {
	var out strings.Builder
	if err := r.run(ctx, probeCommand(root), nil, &out, stderr); err != nil {
		return cabinet{}, err
	}
	machine, version, err := parseProbe(out.String())
	if err != nil {
		return cabinet{}, err
	}
	t, err := release.ForMachine(machine)
	if err != nil {
		return cabinet{}, err
	}
	return cabinet{target: t, batocera: version}, nil
}

// parseProbe reads probeCommand's output: the machine (required) and the
// first word of the version line ("" when the file was absent).
func parseProbe(out string) (machine, version string, err error) {
	seen := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "machine":
			machine, seen = strings.TrimSpace(v), true
		case "version":
			if f := strings.Fields(v); len(f) > 0 {
				version = f[0]
			}
		}
	}
	if !seen || machine == "" {
		return "", "", errors.New("the cabinet did not say its architecture (uname -m printed nothing): is it a Linux machine?")
	}
	return machine, version, nil
}

// FindSourceTree walks up from dir to a go.mod of Cabinet's module and
// returns its directory, or "" when dir is not inside a Cabinet checkout
// or no go toolchain is in PATH (then deploy cannot build, and looks for a
// release binary instead).
func FindSourceTree(dir string) string {
	if _, err := exec.LookPath("go"); err != nil {
		return ""
	}
	for {
		if moduleOf(filepath.Join(dir, "go.mod")) == Module {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// moduleOf is the module path a go.mod declares, "" if none.
func moduleOf(goMod string) string {
	b, err := os.ReadFile(goMod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// binaryFile is the file deploy copies to the cabinet.
type binaryFile struct {
	path   string
	what   string // for messages: where it came from
	sha256 string
}

// pickBinary finds the binary for t: --binary when given, else one built
// from the source tree, else the release binary beside the running
// executable, its checksum verified. Builds go into tmp.
func pickBinary(ctx context.Context, o Options, t release.Target, tmp string, progress io.Writer) (binaryFile, error) {
	var b binaryFile
	switch {
	case o.Binary != "":
		if err := checkELF(o.Binary, t); err != nil {
			return b, err
		}
		b = binaryFile{path: o.Binary, what: o.Binary}
	case o.SourceDir != "":
		stamp, err := release.StampFromGit(ctx, o.SourceDir)
		if err != nil {
			fmt.Fprintf(progress, "warning: %v; building it unversioned\n", err)
			stamp = release.Stamp{Version: "0.0.0-dev", Commit: "unknown"}
		}
		out := filepath.Join(tmp, t.BinaryName())
		fmt.Fprintf(progress, "building %s %s from %s…\n", t.BinaryName(), stamp.Version, o.SourceDir)
		bctx, cancel := context.WithTimeout(ctx, buildTimeout)
		defer cancel()
		if err := release.Build(bctx, o.SourceDir, t, out, stamp); err != nil {
			return b, fmt.Errorf("%w: fix the build, or pass a binary with --binary", err)
		}
		b = binaryFile{path: out, what: fmt.Sprintf("%s %s built from %s", t.BinaryName(), stamp.Version, o.SourceDir)}
	case o.Executable != "":
		dir := filepath.Dir(o.Executable)
		p := filepath.Join(dir, t.BinaryName())
		if _, err := os.Stat(p); err != nil {
			return b, fmt.Errorf("the cabinet needs %s and there is none in %s: download it (and SHA256SUMS) from the same release as this cabinet program, or pass one with --binary", t.BinaryName(), dir)
		}
		if err := release.VerifyChecksum(filepath.Join(dir, "SHA256SUMS"), p); err != nil {
			return b, fmt.Errorf("check %s: %w", t.BinaryName(), err)
		}
		if err := checkELF(p, t); err != nil {
			return b, err
		}
		b = binaryFile{path: p, what: p + " (checksum verified)"}
	default:
		return b, fmt.Errorf("no binary for the cabinet: run deploy from a Cabinet checkout with Go installed, keep %s beside this program, or pass --binary FILE", t.BinaryName())
	}
	sum, err := release.FileSHA256(b.path)
	if err != nil {
		return b, fmt.Errorf("read the binary: %w", err)
	}
	b.sha256 = sum
	return b, nil
}

// elfMachine is an ELF header's e_machine (the values of the ELF specification, as debug/elf
// names them). The header is read by hand: debug/elf, with the zstd reader it needs for
// compressed sections, is an eighth of a MiB of a binary whose every byte goes to a cabinet.
type elfMachine uint16

// The machines Cabinet is built for, by GOARCH.
var elfMachines = map[string]elfMachine{
	"amd64":   62,  // EM_X86_64
	"arm64":   183, // EM_AARCH64
	"arm":     40,  // EM_ARM
	"riscv64": 243, // EM_RISCV
}

func (m elfMachine) String() string {
	switch m {
	case 62:
		return "EM_X86_64"
	case 183:
		return "EM_AARCH64"
	case 40:
		return "EM_ARM"
	case 243:
		return "EM_RISCV"
	case 3:
		return "EM_386"
	case 8:
		return "EM_MIPS"
	case 21:
		return "EM_PPC64"
	}
	return fmt.Sprintf("ELF machine %d", uint16(m))
}

// checkELF refuses a Linux executable built for another processor than t's,
// the mistake that would leave the cabinet with a binary it cannot run. A
// file that is not ELF (a script) is let through: the cabinet decides.
func checkELF(name string, t release.Target) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	defer f.Close()
	// e_ident (16 bytes: the magic, the class, the byte order…), e_type, e_machine.
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil
		}
		return fmt.Errorf("read %s: %w", name, err)
	}
	if string(h[:4]) != "\x7fELF" {
		return nil
	}
	var order binary.ByteOrder
	switch h[5] {
	case 1: // ELFDATA2LSB
		order = binary.LittleEndian
	case 2: // ELFDATA2MSB
		order = binary.BigEndian
	default:
		return nil // not an ELF file the kernel would run either
	}
	machine := elfMachine(order.Uint16(h[18:]))
	if want, ok := elfMachines[t.GOARCH]; ok && machine != want {
		return fmt.Errorf("%s is built for %s, but the cabinet is %s: give it %s instead", name, machine, t.Machine, t.BinaryName())
	}
	return nil
}

// remotePaths are where the binary goes on the cabinet, under root.
type remotePaths struct {
	dir, tmp, final string
}

func pathsUnder(root string) remotePaths {
	dir := path.Join(root, "/userdata/system/cabinet/bin")
	return remotePaths{dir: dir, tmp: path.Join(dir, ".cabinet.deploy.tmp"), final: path.Join(dir, ".cabinet.deploy")}
}
