package faketools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/osupdate"
	"github.com/batocera-cabinet/cabinet/daemon/sysaudio"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
)

// fakeShells are the shells the fakes must run under: /bin/sh, dash (the
// strictest common POSIX sh) and bash (Batocera's own scripts' shell),
// those present.
// absPath finds absolute paths in a script (as
// simulator/testpeers/batocera's test).
var absPath = regexp.MustCompile(`(?m)(?:^|[\s"'=(<>!])(/[^\s"';|)&<>]*)`)

// shellSafeTempDir is a fresh directory the scripts can use unquoted.
func shellSafeTempDir(t *testing.T, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cabinet-faketools-"+what+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := shellSafe(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fakeShells(t *testing.T) []string {
	t.Helper()
	shells := []string{"/bin/sh"}
	for _, group := range [][]string{{"/usr/bin/dash", "/bin/dash"}, {"/bin/bash", "/usr/bin/bash"}} {
		for _, p := range group {
			if _, err := os.Stat(p); err == nil {
				shells = append(shells, p)
				break
			}
		}
	}
	if len(shells) < 2 {
		t.Logf("no dash: the fakes run under %v only", shells)
	}
	return shells
}

// under runs a script through shell, whatever its #! line says; ""
// runs it as it is, by its #! line.
func under(shell string, exec func(context.Context, string, ...string) ([]byte, error)) func(context.Context, string, ...string) ([]byte, error) {
	if shell == "" {
		return exec
	}
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		return exec(ctx, shell, append([]string{name}, args...)...)
	}
}

// Result is what a script printed and its exit status.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

func runScript(t *testing.T, shell, script string, args ...string) Result {
	t.Helper()
	name := script
	if shell != "" {
		name, args = shell, append([]string{script}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", name, err)
	}
	return res
}

func TestFakeAudioClient(t *testing.T) {
	for _, shell := range append([]string{""}, fakeShells(t)...) {
		name := "by its #! line"
		if shell != "" {
			name = "under " + filepath.Base(shell)
		}
		t.Run(name, func(t *testing.T) {
			root := shellSafeTempDir(t, "audio")
			if err := InstallAudio(root, 80, false); err != nil {
				t.Fatal(err)
			}
			a := sysaudio.Audio{Bin: filepath.Join(root, AudioBin), Run: under(shell, sysaudio.Exec)}
			ctx := context.Background()
			if !a.Available() {
				t.Fatal("Available = false for the installed fake")
			}
			want := func(step string, level int, muted bool) {
				t.Helper()
				got, err := a.Get(ctx)
				if err != nil || got != (sysaudio.State{Level: level, Muted: muted}) {
					t.Fatalf("%s: Get = %+v, %v; want {%d %v}", step, got, err, level, muted)
				}
				if l, m, err := ReadAudio(root); err != nil || l != level || m != muted {
					t.Fatalf("%s: ReadAudio = %d, %v, %v; want %d, %v", step, l, m, err, level, muted)
				}
			}
			want("installed", 80, false)
			if err := a.SetLevel(ctx, 35); err != nil {
				t.Fatal(err)
			}
			want("SetLevel 35", 35, false)
			if err := a.SetMute(ctx, true); err != nil {
				t.Fatal(err)
			}
			want("SetMute true", 35, true)
			if err := a.SetLevel(ctx, 0); err != nil {
				t.Fatal(err)
			}
			want("SetLevel 0 keeps the mute", 0, true)
			if err := SetAudio(root, 60, false); err != nil {
				t.Fatal(err)
			}
			want("changed on the cabinet", 60, false)
			if r := runScript(t, shell, a.Bin, "setSystemVolume", "+5"); r.ExitCode != 0 {
				t.Fatalf("setSystemVolume +5: exit %d: %s", r.ExitCode, r.Stderr)
			}
			want("setSystemVolume +5 on the cabinet", 65, false)

			if err := StopAudioServer(root); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Get(ctx); !errors.Is(err, sysaudio.ErrNoAudio) {
				t.Errorf("Get with PipeWire down: %v; want ErrNoAudio", err)
			}
			err := a.SetLevel(ctx, 50)
			if err == nil || !strings.Contains(err.Error(), "exit status 1") || !strings.Contains(err.Error(), "Connection refused") {
				t.Errorf("SetLevel with PipeWire down: %v; want exit status 1 and pactl's complaint", err)
			}
			if err := a.SetMute(ctx, false); err == nil {
				t.Error("SetMute with PipeWire down: no error")
			}
			if err := SetAudio(root, 20, true); err != nil {
				t.Fatal(err)
			}
			want("PipeWire back", 20, true)
		})
	}
}

func TestFakeAudioCommands(t *testing.T) {
	tests := []struct {
		name       string
		down       bool // PipeWire down
		args       []string
		wantOut    string
		wantStderr string // a part of it
		wantExit   int
		wantLevel  int // the state after, when up
		wantMuted  bool
	}{
		{name: "get volume", args: []string{"getSystemVolume"}, wantOut: "50\n", wantLevel: 50},
		{name: "get mute", args: []string{"getSystemMute"}, wantOut: "no\n", wantLevel: 50},
		{name: "set", args: []string{"setSystemVolume", "70"}, wantLevel: 70},
		{name: "leading zeros", args: []string{"setSystemVolume", "0080"}, wantLevel: 80},
		{name: "octal-looking", args: []string{"setSystemVolume", "08"}, wantLevel: 8},
		{name: "zero", args: []string{"setSystemVolume", "0"}, wantLevel: 0},
		{name: "up", args: []string{"setSystemVolume", "+30"}, wantLevel: 80},
		{name: "up clamps", args: []string{"setSystemVolume", "+300"}, wantLevel: 100},
		{name: "down clamps", args: []string{"setSystemVolume", "-200"}, wantLevel: 0},
		{name: "mute", args: []string{"setSystemVolume", "mute"}, wantLevel: 50, wantMuted: true},
		{name: "toggle", args: []string{"setSystemVolume", "mute-toggle"}, wantLevel: 50, wantMuted: true},
		{name: "too high", args: []string{"setSystemVolume", "101"}, wantStderr: "invalid volume value", wantExit: 1, wantLevel: 50},
		{name: "huge", args: []string{"setSystemVolume", "99999999999999999999"}, wantStderr: "invalid volume value", wantExit: 1, wantLevel: 50},
		{name: "word", args: []string{"setSystemVolume", "loud"}, wantStderr: "invalid volume value", wantExit: 1, wantLevel: 50},
		{name: "sign only", args: []string{"setSystemVolume", "+"}, wantStderr: "invalid volume value", wantExit: 1, wantLevel: 50},
		{name: "nothing", args: []string{"setSystemVolume"}, wantStderr: "invalid volume value", wantExit: 1, wantLevel: 50},
		{name: "unknown prints usage", args: []string{"frobnicate"}, wantOut: "batocera-audio list\n", wantLevel: 50},
		{name: "list", args: []string{"list"}, wantOut: "auto\tauto\nalsa_output.fake.analog-stereo\tFake Analog Stereo\n", wantLevel: 50},
		{name: "down: volume", down: true, args: []string{"getSystemVolume"}, wantOut: "\n", wantStderr: "Connection refused"},
		{name: "down: mute", down: true, args: []string{"getSystemMute"}, wantOut: "", wantStderr: "Connection refused"},
		{name: "down: set", down: true, args: []string{"setSystemVolume", "10"}, wantStderr: "Connection refused", wantExit: 1},
		{name: "down: mute set", down: true, args: []string{"setSystemVolume", "mute"}, wantStderr: "Connection refused", wantExit: 1},
	}
	for _, shell := range fakeShells(t) {
		t.Run(filepath.Base(shell), func(t *testing.T) {
			root := shellSafeTempDir(t, "audio")
			bin := filepath.Join(root, AudioBin)
			for _, tt := range tests {
				if err := InstallAudio(root, 50, false); err != nil {
					t.Fatal(err)
				}
				if tt.down {
					if err := StopAudioServer(root); err != nil {
						t.Fatal(err)
					}
				}
				r := runScript(t, shell, bin, tt.args...)
				out := r.Stdout
				if tt.name == "unknown prints usage" {
					out, _, _ = strings.Cut(out, "\n")
					out += "\n"
				}
				if out != tt.wantOut || r.ExitCode != tt.wantExit || !strings.Contains(r.Stderr, tt.wantStderr) {
					t.Errorf("%s: %q = %q, exit %d, stderr %q; want %q, exit %d, stderr with %q",
						tt.name, tt.args, r.Stdout, r.ExitCode, r.Stderr, tt.wantOut, tt.wantExit, tt.wantStderr)
				}
				if tt.wantStderr == "" && r.Stderr != "" {
					t.Errorf("%s: stderr %q", tt.name, r.Stderr)
				}
				if tt.down {
					if _, _, err := ReadAudio(root); err == nil {
						t.Errorf("%s: the fake wrote a state with PipeWire down", tt.name)
					}
					continue
				}
				if l, m, err := ReadAudio(root); err != nil || l != tt.wantLevel || m != tt.wantMuted {
					t.Errorf("%s: state %d, %v, %v; want %d, %v", tt.name, l, m, err, tt.wantLevel, tt.wantMuted)
				}
			}
		})
	}
}

func TestFakeUpdateCheckClient(t *testing.T) {
	const newer = "44 2026/09/01 10:00"
	installs := []struct {
		name    string
		install func(root, latest string, fail bool) error
		ran     string // the command the client must pick
	}{
		{"batocera-upgrade", InstallUpdateCheck, UpgradeBin + " --check-upgrade"},
		{"batocera-config", InstallLegacyUpdateCheck, ConfigBin + " canupdate"},
	}
	for _, shell := range fakeShells(t) {
		for _, in := range installs {
			t.Run(filepath.Base(shell)+"/"+in.name, func(t *testing.T) {
				root := shellSafeTempDir(t, "update")
				var ran string
				c := osupdate.Checker{
					Upgrade: filepath.Join(root, UpgradeBin),
					Config:  filepath.Join(root, ConfigBin),
					Timeout: 10 * time.Second,
					Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
						ran = strings.TrimPrefix(name, root+"/") + " " + strings.Join(args, " ")
						return under(shell, osupdate.Exec)(ctx, name, args...)
					},
				}
				ctx := context.Background()
				check := func(latest string, fail bool) (osupdate.Result, error) {
					t.Helper()
					if err := in.install(root, latest, fail); err != nil {
						t.Fatal(err)
					}
					res, err := c.Check(ctx)
					if ran != in.ran {
						t.Errorf("ran %q; want %q", ran, in.ran)
					}
					return res, err
				}
				if res, err := check(newer, false); err != nil || res != (osupdate.Result{Latest: newer, Available: true}) {
					t.Errorf("newer published: %+v, %v", res, err)
				}
				if res, err := check("", false); err != nil || res != (osupdate.Result{Latest: defaultVersion}) {
					t.Errorf("installed version published: %+v, %v; want {%s false}", res, err, defaultVersion)
				}
				if res, err := check(newer, true); !errors.Is(err, osupdate.ErrOffline) {
					t.Errorf("offline: %+v, %v; want ErrOffline", res, err)
				}
				if res, err := check("4"+strings.Repeat("9", osupdate.MaxVersion), false); err == nil {
					t.Errorf("junk published: %+v, nil; want an error", res)
				}
			})
		}
	}
}

// TestFakeUpdateCheckOffline holds the fakes to what the real scripts do
// offline, which is what the client has to cope with.
func TestFakeUpdateCheckOffline(t *testing.T) {
	for _, shell := range fakeShells(t) {
		t.Run(filepath.Base(shell), func(t *testing.T) {
			root := shellSafeTempDir(t, "update")
			if err := InstallUpdateCheck(root, "44 2026/09/01 10:00", true); err != nil {
				t.Fatal(err)
			}
			if err := InstallLegacyUpdateCheck(root, "44 2026/09/01 10:00", true); err != nil {
				t.Fatal(err)
			}
			if r := runScript(t, shell, filepath.Join(root, UpgradeBin), "--check-upgrade"); r.Stdout != "\n" || r.ExitCode != 0 {
				t.Errorf("batocera-upgrade --check-upgrade offline = %q, exit %d; want \"\\n\", exit 0 (the real one's bug)", r.Stdout, r.ExitCode)
			}
			r := runScript(t, shell, filepath.Join(root, ConfigBin), "canupdate")
			if r.Stdout != "" || r.ExitCode != 2 || r.Stderr != "Unable to access the url\n" {
				t.Errorf("batocera-config canupdate offline = %q, exit %d, stderr %q", r.Stdout, r.ExitCode, r.Stderr)
			}
			if r := runScript(t, shell, filepath.Join(root, UpgradeBin), "--upgrade"); r.ExitCode != 1 {
				t.Errorf("batocera-upgrade --upgrade: exit %d; want 1 (the fake upgrades nothing)", r.ExitCode)
			}
			if r := runScript(t, shell, filepath.Join(root, ConfigBin), "storage", "list"); r.ExitCode != 10 {
				t.Errorf("batocera-config storage list: exit %d; want 10", r.ExitCode)
			}
		})
	}
}

// TestFakeUpdateCheckInTree installs the fake into
// simulator/testpeers/batocera's tree, where Batocera's own scripts run.
func TestFakeUpdateCheckInTree(t *testing.T) {
	tr := batocera.New(t)
	if err := InstallUpdateCheck(tr.Root(), "", false); err != nil {
		t.Fatal(err)
	}
	r := tr.Run(t, "batocera-upgrade", "--check-upgrade")
	if r.Stdout != batocera.Version+"\n" || r.ExitCode != 12 {
		t.Errorf("batocera-upgrade --check-upgrade in the tree = %q, exit %d; want %q, exit 12", r.Stdout, r.ExitCode, batocera.Version+"\n")
	}
}

func TestFakesStayInTheRoot(t *testing.T) {
	root := shellSafeTempDir(t, "paths")
	for _, install := range []func() error{
		func() error { return InstallAudio(root, 1, false) },
		func() error { return InstallUpdateCheck(root, "", false) },
		func() error { return InstallLegacyUpdateCheck(root, "", false) },
	} {
		if err := install(); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{AudioBin, UpgradeBin, ConfigBin} {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range absPath.FindAllStringSubmatch(string(b), -1) {
			if p := m[1]; p != "/bin/sh" && !strings.HasPrefix(p, root+"/") {
				t.Errorf("%s uses %s, outside the root", rel, p)
			}
		}
		if strings.Contains(string(b), "@ROOT@") {
			t.Errorf("%s: @ROOT@ left", rel)
		}
	}
}

func TestFakeHelpersRefuse(t *testing.T) {
	root := shellSafeTempDir(t, "refuse")
	tests := []struct {
		name string
		err  error
	}{
		{"unsafe root", InstallAudio(filepath.Join(root, "a b"), 1, false)},
		{"relative root", InstallAudio("relative/root", 1, false)},
		{"level above 100", SetAudio(root, 101, false)},
		{"negative level", SetAudio(root, -1, false)},
		{"two-line version", InstallUpdateCheck(root, "44\n45", false)},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "var/run"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"", "50\n", "50 no", "x no\n", "50 maybe\n", "101 no\n", "50 no extra\n"} {
		if err := os.WriteFile(filepath.Join(root, audioState), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
		if l, m, err := ReadAudio(root); err == nil {
			t.Errorf("ReadAudio of %q = %d, %v, nil; want an error", state, l, m)
		}
	}
}

// TestFakeScriptsParse checks the scripts' syntax with each shell's -n,
// which also covers branches the other tests do not take.
func TestFakeScriptsParse(t *testing.T) {
	root := shellSafeTempDir(t, "parse")
	if err := InstallAudio(root, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := InstallUpdateCheck(root, "", false); err != nil {
		t.Fatal(err)
	}
	if err := InstallLegacyUpdateCheck(root, "", false); err != nil {
		t.Fatal(err)
	}
	for _, shell := range fakeShells(t) {
		for _, rel := range []string{AudioBin, UpgradeBin, ConfigBin} {
			if out, err := exec.Command(shell, "-n", filepath.Join(root, rel)).CombinedOutput(); err != nil {
				t.Errorf("%s -n %s: %v\n%s", shell, rel, err, out)
			}
		}
	}
}
