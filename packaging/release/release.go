// Package release knows Cabinet's build targets and how to build, stamp and
// check a static binary for one of them. The release program
// (packaging/release/cmd/release) builds all of them for CI; `cabinet
// deploy` builds or picks the one a cabinet needs.
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
	"strings"
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
	return Target{}, fmt.Errorf("this machine reports architecture %q; Cabinet is built for %s only", m, strings.Join(known, ", "))
}

// BinaryName is the release file name of the target's binary.
func (t Target) BinaryName() string { return "cabinet-linux-" + t.Name }

// Stamp is what a build links into `cabinet version`.
type Stamp struct {
	Version string // the git tag, else 0.0.0-<commit>
	Commit  string // short commit; "-dirty" when the tree had changes
}

// StampFromGit reads the version and commit of the checkout at dir: the
// tag on HEAD when there is exactly one, else 0.0.0-<commit>.
func StampFromGit(ctx context.Context, dir string) (Stamp, error) {
	gitOut := func(args ...string) (string, error) {
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
	commit, err := gitOut("rev-parse", "--short=12", "HEAD")
	if err != nil {
		return Stamp{}, fmt.Errorf("read the commit (build from a git checkout): %w", err)
	}
	if st, err := gitOut("status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
		commit += "-dirty"
	}
	s := Stamp{Version: "0.0.0-" + commit, Commit: commit}
	if tag, err := gitOut("describe", "--tags", "--exact-match", "HEAD"); err == nil && tag != "" && !strings.HasSuffix(commit, "-dirty") {
		s.Version = strings.TrimPrefix(tag, "v")
	}
	return s, nil
}

// Build builds the static binary for t from the module at srcDir into out.
func Build(ctx context.Context, srcDir string, t Target, out string, s Stamp) error {
	ldflags := "-s -w -X main.version=" + s.Version + " -X main.commit=" + s.Commit
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/cabinet")
	cmd.Dir = srcDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+t.GOARCH, "GOARM="+t.GOARM)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %v: %s", t.BinaryName(), err, strings.TrimSpace(stderr.String()))
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
