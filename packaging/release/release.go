// Package release knows Cabinet's build targets and how to build, stamp and
// check a static binary for one of them, and makes the release files: one
// deterministic archive per target, SHA256SUMS, and a breakdown of what a
// binary's bytes are. The release program (packaging/release/cmd/release)
// builds all of them for CI; `cabinet deploy` builds or picks the one a
// cabinet needs.
package release

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Target is one platform Batocera runs on (batocera-layout.md §7).
type Target struct {
	Name    string // amd64, arm64, armv7, armv6, riscv64
	GOARCH  string
	GOARM   string // "" unless GOARCH is arm
	Machine string // what `uname -m` prints on such a board
}

// Targets are the five static builds, the common boards first.
func Targets() []Target {
	return []Target{
		{Name: "amd64", GOARCH: "amd64", Machine: "x86_64"},
		{Name: "arm64", GOARCH: "arm64", Machine: "aarch64"},
		{Name: "armv7", GOARCH: "arm", GOARM: "7", Machine: "armv7l"},
		{Name: "armv6", GOARCH: "arm", GOARM: "6", Machine: "armv6l"},
		{Name: "riscv64", GOARCH: "riscv64", Machine: "riscv64"},
	}
}

// ForMachine maps `uname -m` to a target. Anything else is refused with the
// list of what Cabinet is built for.
func ForMachine(unameM string) (Target, error) {
	m := strings.TrimSpace(unameM)
	for _, t := range Targets() {
		if m == t.Machine {
			return t, nil
		}
	}
	var known []string
	for _, t := range Targets() {
		known = append(known, t.Machine)
	}
	if len(m) > 40 {
		m = m[:40] + "…"
	}
	return Target{}, fmt.Errorf("`uname -m` says %q; Cabinet is built for %s only", m, strings.Join(known, ", "))
}

// TargetsNamed is the targets of a comma-separated list of names such as
// "amd64,arm64", in the list's order; "" or "all" is every target.
func TargetsNamed(list string) ([]Target, error) {
	if strings.TrimSpace(list) == "" || list == "all" {
		return Targets(), nil
	}
	var out []Target
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		t, ok := targetNamed(name)
		if !ok {
			var known []string
			for _, t := range Targets() {
				known = append(known, t.Name)
			}
			return nil, fmt.Errorf("unknown target %q: choose from %s", name, strings.Join(known, ","))
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func targetNamed(name string) (Target, bool) {
	for _, t := range Targets() {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// BinaryName is the release file name of the target's binary.
func (t Target) BinaryName() string { return "cabinet-linux-" + t.Name }

// Stamp is what a build links into `cabinet version`.
type Stamp struct {
	Version string // the git tag, else 0.0.0-<commit>
	Commit  string // short commit; "-dirty" when the tree had changes
}

// StampFromGit reads the version and commit of the checkout at dir: the
// tag on HEAD (without a leading "v") when the tree is clean, else
// 0.0.0-<commit>, so a build from a modified tree never passes for a
// release.
func StampFromGit(ctx context.Context, dir string) (Stamp, error) {
	commit, err := git(ctx, dir, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return Stamp{}, fmt.Errorf("read the commit (build from a git checkout): %w", err)
	}
	st, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return Stamp{}, fmt.Errorf("read whether the tree is modified: %w", err)
	}
	if st != "" {
		commit += "-dirty"
	}
	s := Stamp{Version: "0.0.0-" + commit, Commit: commit}
	if strings.HasSuffix(commit, "-dirty") {
		return s, nil
	}
	// No tag on HEAD is the common case, not an error.
	if tag, err := git(ctx, dir, "describe", "--tags", "--exact-match", "HEAD"); err == nil && tag != "" {
		s.Version = strings.TrimPrefix(tag, "v")
	}
	return s, nil
}

// CommitTime is when HEAD of the checkout at dir was committed: the
// timestamp release archives give their entries, so that rebuilding a
// commit gives the same archives.
func CommitTime(ctx context.Context, dir string) (time.Time, error) {
	out, err := git(ctx, dir, "log", "-1", "--format=%ct", "HEAD")
	if err != nil {
		return time.Time{}, fmt.Errorf("read the commit time: %w", err)
	}
	sec, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the commit time: git printed %q, not seconds", out)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// git runs git in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// Tags are the build tags of a release binary: release leaves out
// `cabinet demo` and `cabinet simulate`, the simulator's fakes and the
// embedded MQTT broker, which run from a checkout of the source only;
// nethttpomithttp2 leaves HTTP/2 out of net/http (half a MiB: MCP over
// HTTP and the RomM and ROMarr clients speak HTTP/1.1, and the TLS
// handshake then offers only that, daemon/tlsconf).
const Tags = "release,nethttpomithttp2"

// notInlined are the packages a release build compiles without inlining: mcp-go and the JSON
// Schema code and text tables it brings, which answer a few MCP calls a minute and are off the
// event hook's path. Inlining there buys nothing a person would notice and costs 0.13 MiB, which
// takes the amd64 binary over 14 MiB (14.09 MiB with it, 13.95 without; measured with Go 1.26).
var notInlined = []string{"github.com/mark3labs/...", "github.com/santhosh-tekuri/...", "github.com/google/jsonschema-go/...", "golang.org/x/text/..."}

// Build builds the static, stripped binary for t from the module at srcDir
// into out, with s linked into `cabinet version`. It builds with the
// release tag (Tags), which leaves out what a cabinet never runs.
func Build(ctx context.Context, srcDir string, t Target, out string, s Stamp) error {
	return goBuild(ctx, srcDir, t, out, s, true)
}

// BuildUnstripped is Build keeping the symbol table and DWARF, which the
// size breakdown (packaging/release/sizes) reads: the layout of everything
// else is the same.
func BuildUnstripped(ctx context.Context, srcDir string, t Target, out string, s Stamp) error {
	return goBuild(ctx, srcDir, t, out, s, false)
}

// goBuild is Build, optionally keeping the symbol table and DWARF.
func goBuild(ctx context.Context, srcDir string, t Target, out string, s Stamp, strip bool) error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("build %s: %w", t.BinaryName(), err)
	}
	ldflags := "-X main.version=" + s.Version + " -X main.commit=" + s.Commit
	if strip {
		ldflags = "-s -w " + ldflags
	}
	args := []string{"build", "-trimpath", "-tags", Tags, "-ldflags", ldflags}
	for _, p := range notInlined {
		args = append(args, "-gcflags", p+"=-l")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "-o", out, "./cmd/cabinet")...)
	cmd.Dir = srcDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+t.GOARCH, "GOARM="+t.GOARM)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %v: %s", t.BinaryName(), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// validate refuses stamps that -ldflags would split or misquote (a value
// with a space would become a second linker flag).
func (s Stamp) validate() error {
	for _, f := range []struct{ name, v string }{{"version", s.Version}, {"commit", s.Commit}} {
		if f.v == "" {
			return fmt.Errorf("the stamp has no %s", f.name)
		}
		if strings.ContainsAny(f.v, " \t\n\r'\"\\") {
			return fmt.Errorf("the stamp's %s %q has a space or quote: use a plain tag such as 1.2.3", f.name, f.v)
		}
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of a file.
func FileSHA256(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ErrNoChecksum says SHA256SUMS has no line for the file.
var ErrNoChecksum = errors.New("no checksum listed")

// VerifyChecksum checks binary against its line in a SHA256SUMS file
// (sha256sum's format: "<hex>  <name>", or "<hex> *<name>").
func VerifyChecksum(sumsFile, binary string) error {
	f, err := os.Open(sumsFile)
	if err != nil {
		return fmt.Errorf("open checksums: %w", err)
	}
	defer f.Close()
	name := filepath.Base(binary)
	want := ""
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		file = strings.TrimPrefix(strings.TrimPrefix(file, " "), "*")
		if file == name {
			want = strings.ToLower(sum)
			break
		}
	}
	if want == "" {
		return fmt.Errorf("%s: %w for %s", sumsFile, ErrNoChecksum, name)
	}
	got, err := FileSHA256(binary)
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s does not match %s (sha256 %s, listed %s): download it again", binary, filepath.Base(sumsFile), got, want)
	}
	return nil
}
