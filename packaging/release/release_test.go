package release

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestForMachine(t *testing.T) {
	for _, tc := range []struct {
		uname, want string // want "" means refused
	}{
		{"x86_64", "amd64"},
		{"aarch64", "arm64"},
		{"armv7l", "armv7"},
		{"armv6l", "armv6"},
		{"riscv64", "riscv64"},
		{"x86_64\n", "amd64"}, // as `uname -m` prints it
		{"  aarch64 ", "arm64"},
		{"", ""},
		{"i686", ""},
		{"armv8l", ""},
		{"X86_64", ""}, // uname prints lower case; anything else is not a uname
		{"amd64", ""},  // a GOARCH, not a uname
		{"x86_64 aarch64", ""},
		{"\x00\xff garbage", ""},
		{strings.Repeat("x", 500), ""},
	} {
		got, err := ForMachine(tc.uname)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ForMachine(%q) = %s, want an error", tc.uname, got.Name)
				continue
			}
			if msg := err.Error(); !strings.Contains(msg, "x86_64, aarch64, armv7l, armv6l, riscv64") || len(msg) > 200 {
				t.Errorf("ForMachine(%q) error %q: want the supported list, and a bounded message", tc.uname, msg)
			}
			continue
		}
		if err != nil || got.Name != tc.want {
			t.Errorf("ForMachine(%q) = %q, %v; want %q", tc.uname, got.Name, err, tc.want)
		}
	}
}

func TestTargetsNamed(t *testing.T) {
	for _, tc := range []struct {
		list, want string // want "!" means refused
	}{
		{"", "amd64,arm64,armv7,armv6,riscv64"},
		{"all", "amd64,arm64,armv7,armv6,riscv64"},
		{"arm64,amd64", "arm64,amd64"},
		{" amd64 , armv6", "amd64,armv6"},
		{"amd64,amd64", "amd64"},
		{"amd64,x86", "!"},
		{"amd64,", "!"},
	} {
		ts, err := TargetsNamed(tc.list)
		var names []string
		for _, t := range ts {
			names = append(names, t.Name)
		}
		got := strings.Join(names, ",")
		if err != nil {
			got = "!"
			if !strings.Contains(err.Error(), "choose from amd64,arm64") {
				t.Errorf("TargetsNamed(%q) error %q does not list the targets", tc.list, err)
			}
		}
		if got != tc.want {
			t.Errorf("TargetsNamed(%q) = %s, want %s", tc.list, got, tc.want)
		}
	}
}

func TestVerifyChecksum(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "cabinet-linux-arm64")
	if err := os.WriteFile(bin, []byte("a binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum, err := FileSHA256(bin)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, sums string
		want       string // "" ok, else a part of the error
	}{
		{"text mode", sum + "  cabinet-linux-arm64\n", ""},
		{"binary mode", sum + " *cabinet-linux-arm64\n", ""},
		{"upper case", strings.ToUpper(sum) + "  cabinet-linux-arm64\n", ""},
		{"among others", other + "  cabinet-linux-amd64\n" + sum + "  cabinet-linux-arm64\n", ""},
		{"no final newline", sum + "  cabinet-linux-arm64", ""},
		{"wrong sum", other + "  cabinet-linux-arm64\n", "download it again"},
		{"missing line", sum + "  cabinet-linux-amd64\n", ErrNoChecksum.Error()},
		{"prefix of a name", sum + "  cabinet-linux-arm64.tar.gz\n", ErrNoChecksum.Error()},
		{"garbage", "\x00\x01 not a sums file\n\n", ErrNoChecksum.Error()},
		{"empty", "", ErrNoChecksum.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sums := filepath.Join(t.TempDir(), "SHA256SUMS")
			if err := os.WriteFile(sums, []byte(tc.sums), 0o644); err != nil {
				t.Fatal(err)
			}
			err := VerifyChecksum(sums, bin)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("VerifyChecksum: %v, want ok", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("VerifyChecksum: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if err := VerifyChecksum(filepath.Join(dir, "absent"), bin); err == nil {
		t.Error("VerifyChecksum with no sums file: no error")
	}
	sums := filepath.Join(dir, "SHA256SUMS")
	os.WriteFile(sums, []byte("nothing\n"), 0o644)
	if err := VerifyChecksum(sums, bin); !errors.Is(err, ErrNoChecksum) {
		t.Errorf("missing line: %v, want ErrNoChecksum", err)
	}
}

func TestWriteSums(t *testing.T) {
	dir := t.TempDir()
	names := []string{"b.tar.gz", "a", "b.tar.gz"}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("content of "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteSums(dir, names); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, SumsFile))
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "  a") || !strings.HasSuffix(lines[1], "  b.tar.gz") || len(lines[0]) != 64+2+1 {
		t.Errorf("SHA256SUMS, want two sorted sha256sum lines:\n%s", text)
	}
	for _, n := range names {
		if err := VerifyChecksum(filepath.Join(dir, SumsFile), filepath.Join(dir, n)); err != nil {
			t.Error(err)
		}
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "--check", "--strict", SumsFile)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	}
	if err := WriteSums(dir, []string{"../a"}); err == nil {
		t.Error("WriteSums accepted a path outside dir")
	}
}

// gitRepo makes a repository with one commit at a fixed time.
func gitRepo(t *testing.T, when time.Time) (dir string, run func(args ...string) string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir = t.TempDir()
	date := when.Format(time.RFC3339)
	run = func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+date,
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_COMMITTER_DATE="+date)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", "file")
	run("commit", "-q", "-m", "one")
	return dir, run
}

func TestStampFromGit(t *testing.T) {
	ctx := context.Background()
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	dir, git := gitRepo(t, when)
	commit := git("rev-parse", "--short=12", "HEAD")
	check := func(step string, want Stamp) {
		t.Helper()
		got, err := StampFromGit(ctx, dir)
		if err != nil || got != want {
			t.Errorf("%s: StampFromGit = %+v, %v; want %+v", step, got, err, want)
		}
	}

	check("no tag", Stamp{Version: "0.0.0-" + commit, Commit: commit})
	os.WriteFile(filepath.Join(dir, "untracked"), []byte("x"), 0o644)
	check("untracked file", Stamp{Version: "0.0.0-" + commit, Commit: commit})
	git("tag", "v1.2.3")
	check("tag", Stamp{Version: "1.2.3", Commit: commit})
	os.WriteFile(filepath.Join(dir, "file"), []byte("two\n"), 0o644)
	check("dirty, tagged", Stamp{Version: "0.0.0-" + commit + "-dirty", Commit: commit + "-dirty"})

	if got, err := CommitTime(ctx, dir); err != nil || !got.Equal(when) {
		t.Errorf("CommitTime = %v, %v; want %v", got, err, when)
	}
	if _, err := StampFromGit(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "git checkout") {
		t.Errorf("outside a checkout: %v, want advice to build from a checkout", err)
	}
}

func TestBuildRefusesUnquotableStamp(t *testing.T) {
	for _, s := range []Stamp{{Version: "1.2 3", Commit: "abc"}, {Version: "1", Commit: `a"b`}, {Version: "", Commit: "abc"}} {
		// The stamp is checked before go runs, so this needs no toolchain.
		if err := Build(context.Background(), t.TempDir(), Targets()[0], filepath.Join(t.TempDir(), "x"), s); err == nil {
			t.Errorf("Build with stamp %+v: no error", s)
		}
	}
}

// TestBuildStampsVersion builds the real binary for this machine with a
// stamp and checks that `cabinet version --json` reports it, and that the
// build left the demo out.
func TestBuildStampsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cabinet binary (about a minute): skipped with -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("release targets are linux; this machine cannot run them")
	}
	var target Target
	for _, tt := range Targets() {
		if tt.GOARCH == runtime.GOARCH && tt.GOARCH != "arm" {
			target = tt
		}
	}
	if target.Name == "" {
		t.Skipf("no release target runs natively on %s", runtime.GOARCH)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), target.BinaryName())
	stamp := Stamp{Version: "1.2.3-test", Commit: "abc123"}
	if err := Build(ctx, "../..", target, bin, stamp); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var got struct {
		Version, Commit, Go, OS, Arch string
		StoreSchema                   int `json:"store_schema"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	if got.Version != stamp.Version || got.Commit != stamp.Commit || got.OS != "linux" || got.Arch != target.GOARCH ||
		!strings.HasPrefix(got.Go, "go1.") || got.StoreSchema < 1 {
		t.Errorf("version --json = %s, want version %s commit %s on linux/%s", out, stamp.Version, stamp.Commit, target.GOARCH)
	}
	// Built with Tags: the demo is left out and only says where it runs.
	var exit *exec.ExitError
	if err := exec.CommandContext(ctx, bin, "demo").Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("%s demo: %v, want exit status 2 (release builds leave the demo out)", bin, err)
	}
}
