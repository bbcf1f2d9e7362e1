package osupdate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Scripts for the command choice: only their text and mode matter.
const (
	newUpgrade = "#!/bin/bash\ncase \"${ACTION}\" in\n    --check-upgrade)\n        exit 0\nesac\n"
	// oldUpgrade takes its first argument as a download URL (batocera-upgrade
	// at f14b2ef0): it must never be run for a check.
	oldUpgrade = "#!/bin/bash\ntest $# -eq 1 && DWD_HTTP_DIR=\"$1\"\n"
	config     = "#!/bin/sh\nif [ \"$command\" = \"canupdate\" ];then\n\texit 12\nfi\n"
)

func writeScript(t *testing.T, dir, name, text string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandChoice(t *testing.T) {
	tests := []struct {
		name     string
		upgrade  string // script text, "" for none
		upMode   os.FileMode
		config   string
		wantArgs string // "" for no command
	}{
		{"new batocera-upgrade", newUpgrade, 0o755, config, "batocera-upgrade --check-upgrade"},
		{"new batocera-upgrade alone", newUpgrade, 0o755, "", "batocera-upgrade --check-upgrade"},
		{"old batocera-upgrade falls back", oldUpgrade, 0o755, config, "batocera-config canupdate"},
		{"new but not executable", newUpgrade, 0o644, config, "batocera-config canupdate"},
		{"only batocera-config", "", 0, config, "batocera-config canupdate"},
		{"old batocera-upgrade alone", oldUpgrade, 0o755, "", ""},
		{"nothing", "", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			c := Checker{Upgrade: filepath.Join(dir, "batocera-upgrade"), Config: filepath.Join(dir, "batocera-config")}
			if tt.upgrade != "" {
				writeScript(t, dir, "batocera-upgrade", tt.upgrade, tt.upMode)
			}
			if tt.config != "" {
				writeScript(t, dir, "batocera-config", tt.config, 0o755)
			}
			var got string
			c.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
				got = filepath.Base(name) + " " + strings.Join(args, " ")
				return []byte("43 2026/05/14 10:00\n"), &ExitError{Code: 12}
			}
			_, err := c.Check(context.Background())
			if got != tt.wantArgs {
				t.Errorf("ran %q; want %q", got, tt.wantArgs)
			}
			if tt.wantArgs == "" && !errors.Is(err, ErrUnsupported) {
				t.Errorf("Check error %v; want ErrUnsupported", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		err     error
		want    Result
		wantErr error
		errHas  string
	}{
		{name: "update", out: "44 2026/09/01 10:00\n", want: Result{Latest: "44 2026/09/01 10:00", Available: true}},
		{name: "up to date", out: "43 2026/05/14 10:00\n", err: &ExitError{Code: 12}, want: Result{Latest: "43 2026/05/14 10:00"}},
		{name: "dev build", out: "44-dev-0a1b2c3d 2026/06/01 12:00\n", want: Result{Latest: "44-dev-0a1b2c3d 2026/06/01 12:00", Available: true}},
		{name: "offline batocera-upgrade: empty line, exit 0", out: "\n", wantErr: ErrOffline},
		{name: "offline batocera-config", err: &ExitError{Code: 2, Stderr: "Unable to access the url\n"}, wantErr: ErrOffline, errHas: `"Unable to access the url"`},
		{name: "junk page", err: &ExitError{Code: 2, Stderr: "Unable to retrieve the version\n"}, wantErr: ErrOffline},
		{name: "no canupdate", err: &ExitError{Code: 10}, wantErr: ErrUnsupported},
		{name: "other status", err: &ExitError{Code: 5, Stderr: "boom"}, errHas: `exit status 5: "boom"`},
		{name: "html", out: "<html>\n<body>404</body>\n</html>\n", wantErr: ErrMalformed},
		{name: "not a version", out: "Not Found\n", wantErr: ErrMalformed},
		{name: "too long", out: "4" + strings.Repeat("x", MaxVersion) + "\n", wantErr: ErrMalformed},
		{name: "control", out: "43\x1b[31m\n", wantErr: ErrMalformed},
		{name: "timeout", err: context.DeadlineExceeded, wantErr: ErrOffline, errHas: "no answer within 1m0s"},
		{name: "huge", out: strings.Repeat("4", MaxOutput+1), wantErr: ErrMalformed},
	}
	dir := t.TempDir()
	upgrade := writeScript(t, dir, "batocera-upgrade", newUpgrade, 0o755)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Checker{Upgrade: upgrade, Config: filepath.Join(dir, "none"), Run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("run without a deadline")
				}
				return []byte(tt.out), tt.err
			}}
			got, err := c.Check(context.Background())
			if tt.wantErr == nil && tt.errHas == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Check = %+v, %v; want %+v, nil", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = %+v, nil; want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Check error %q; want errors.Is %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errHas) || !strings.Contains(err.Error(), upgrade+" --check-upgrade") {
				t.Errorf("Check error %q; want the command and %q", err, tt.errHas)
			}
			if len(err.Error()) > 600 {
				t.Errorf("Check error is %d bytes long", len(err.Error()))
			}
		})
	}
}

func TestExecDeadlineKillsWget(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// sleep stands for a wget stuck on the network, holding stdout.
	_, err := Exec(ctx, "/bin/sh", "-c", "sleep 30")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Exec error %v; want context.DeadlineExceeded", err)
	}
}
