package sysaudio

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// usage is batocera-audio's usage text before getSystemMute existed
// (package/batocera/core/batocera-audio/alsa/batocera-audio at 031bbcc0).
const usage = `batocera-audio list
batocera-audio get
batocera-audio set {auto|<device>}
batocera-audio list-profiles
batocera-audio get-profile
batocera-audio set-profile {auto|<profile>}
batocera-audio getSystemVolume
batocera-audio setSystemVolume {mute|unmute|mute-toggle|[+-]<0...100>}
batocera-audio test
`

// answer is what a fake Run returns for one command line.
type answer struct {
	out string
	err error
}

// fakeRun answers from a table keyed by the arguments joined by spaces and
// records the calls; a missing key is a test failure.
type fakeRun struct {
	t       *testing.T
	answers map[string]answer
	calls   []string
}

func (f *fakeRun) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(args, " ")
	f.calls = append(f.calls, key)
	if _, ok := ctx.Deadline(); !ok {
		f.t.Errorf("%s %s: run without a deadline", name, key)
	}
	a, ok := f.answers[key]
	if !ok {
		f.t.Errorf("unexpected call %s %s", name, key)
		return nil, errors.New("unexpected")
	}
	return []byte(a.out), a.err
}

func TestGet(t *testing.T) {
	tests := []struct {
		name    string
		answers map[string]answer
		want    State
		wantErr error  // errors.Is target, nil: success
		errHas  string // and a part of the message
	}{
		{
			name:    "level and mute",
			answers: map[string]answer{"getSystemVolume": {out: "80\n"}, "getSystemMute": {out: "no\n"}},
			want:    State{Level: 80},
		},
		{
			name:    "muted at zero",
			answers: map[string]answer{"getSystemVolume": {out: "0\n"}, "getSystemMute": {out: "yes\n"}},
			want:    State{Level: 0, Muted: true},
		},
		{
			name:    "boosted above 100",
			answers: map[string]answer{"getSystemVolume": {out: "130\n"}, "getSystemMute": {out: "no\n"}},
			want:    State{Level: 130},
		},
		{
			name:    "pipewire down prints an empty line",
			answers: map[string]answer{"getSystemVolume": {out: "\n"}},
			wantErr: ErrNoAudio,
			errHas:  "getSystemVolume",
		},
		{
			name:    "mute unknown to an older batocera-audio",
			answers: map[string]answer{"getSystemVolume": {out: "55\n"}, "getSystemMute": {out: usage}},
			wantErr: ErrUnsupported,
			errHas:  "getSystemMute",
		},
		{
			name:    "garbage level",
			answers: map[string]answer{"getSystemVolume": {out: `sink="0" name="x" volume="80"` + "\n"}},
			wantErr: ErrMalformed,
			errHas:  `volume=\"80\"`,
		},
		{
			name:    "exit status with stderr",
			answers: map[string]answer{"getSystemVolume": {err: &ExitError{Code: 1, Stderr: "Connection failure: Connection refused\n"}}},
			errHas:  "getSystemVolume: exit status 1: \"Connection failure: Connection refused\"",
		},
		{
			name:    "missing tool",
			answers: map[string]answer{"getSystemVolume": {err: os.ErrNotExist}},
			wantErr: ErrMissing,
		},
		{
			name:    "hung",
			answers: map[string]answer{"getSystemVolume": {err: context.DeadlineExceeded}},
			wantErr: ErrTimeout,
			errHas:  "limit 3s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRun{t: t, answers: tt.answers}
			a := Audio{Bin: "/usr/bin/batocera-audio", Run: f.run}
			got, err := a.Get(context.Background())
			if tt.wantErr == nil && tt.errHas == "" {
				if err != nil || got != tt.want {
					t.Fatalf("Get = %+v, %v; want %+v, nil", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Get = %+v, nil; want an error", got)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Get error %q; want errors.Is %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Errorf("Get error %q; want it to contain %q", err, tt.errHas)
			}
			if !strings.Contains(err.Error(), "/usr/bin/batocera-audio") {
				t.Errorf("Get error %q does not name the command", err)
			}
		})
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name      string
		call      func(a *Audio) error
		wantCalls []string
		wantErr   string
	}{
		{"level", func(a *Audio) error { return a.SetLevel(context.Background(), 42) }, []string{"setSystemVolume 42"}, ""},
		{"level zero", func(a *Audio) error { return a.SetLevel(context.Background(), 0) }, []string{"setSystemVolume 0"}, ""},
		{"level max", func(a *Audio) error { return a.SetLevel(context.Background(), 100) }, []string{"setSystemVolume 100"}, ""},
		{"level too high", func(a *Audio) error { return a.SetLevel(context.Background(), 101) }, nil, "the level must be 0 to 100"},
		{"level negative", func(a *Audio) error { return a.SetLevel(context.Background(), -1) }, nil, "the level must be 0 to 100"},
		{"mute", func(a *Audio) error { return a.SetMute(context.Background(), true) }, []string{"setSystemVolume mute"}, ""},
		{"unmute", func(a *Audio) error { return a.SetMute(context.Background(), false) }, []string{"setSystemVolume unmute"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRun{t: t, answers: map[string]answer{}}
			for _, c := range tt.wantCalls {
				f.answers[c] = answer{}
			}
			err := tt.call(&Audio{Run: f.run})
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v; want %q", err, tt.wantErr)
			}
			if !reflect.DeepEqual(f.calls, tt.wantCalls) {
				t.Errorf("calls %q; want %q", f.calls, tt.wantCalls)
			}
		})
	}
}

func TestSetReportsRefusal(t *testing.T) {
	f := &fakeRun{t: t, answers: map[string]answer{
		"setSystemVolume 90": {err: &ExitError{Code: 1, Stderr: "invalid volume value\n"}},
	}}
	a := Audio{Run: f.run}
	err := a.SetLevel(context.Background(), 90)
	if err == nil || !strings.Contains(err.Error(), `/usr/bin/batocera-audio setSystemVolume 90: exit status 1: "invalid volume value"`) {
		t.Errorf("SetLevel error %v; want the command, its status and its stderr", err)
	}
}

func TestCanceledContextRunsNothing(t *testing.T) {
	f := &fakeRun{t: t, answers: map[string]answer{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := Audio{Run: f.run}
	if _, err := a.Get(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Get error %v; want context.Canceled", err)
	}
	if len(f.calls) != 0 {
		t.Errorf("calls %q; want none", f.calls)
	}
}

func TestOutputBound(t *testing.T) {
	f := &fakeRun{t: t, answers: map[string]answer{"getSystemVolume": {out: strings.Repeat("8", MaxOutput+1)}}}
	a := Audio{Run: f.run}
	_, err := a.Level(context.Background())
	if !errors.Is(err, ErrMalformed) || len(err.Error()) > 300 {
		t.Errorf("Level error %q; want a short ErrMalformed", err)
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		bin  string
		want bool
	}{
		{"executable", write("exec", 0o755), true},
		{"not executable", write("plain", 0o644), false},
		{"missing", filepath.Join(dir, "none"), false},
		{"a directory", dir, false},
	}
	for _, tt := range tests {
		a := Audio{Bin: tt.bin}
		if got := a.Available(); got != tt.want {
			t.Errorf("%s: Available = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func TestExec(t *testing.T) {
	sh, err := lookSh()
	if err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	t.Run("stdout", func(t *testing.T) {
		out, err := Exec(ctx, sh, "-c", "echo 80; echo noise >&2")
		if err != nil || string(out) != "80\n" {
			t.Errorf("Exec = %q, %v; want \"80\\n\", nil", out, err)
		}
	})
	t.Run("exit status and stderr", func(t *testing.T) {
		_, err := Exec(ctx, sh, "-c", "echo invalid volume value >&2; exit 3")
		var e *ExitError
		if !errors.As(err, &e) || e.Code != 3 || e.Stderr != "invalid volume value\n" {
			t.Errorf("Exec error %#v; want ExitError{3, \"invalid volume value\\n\"}", err)
		}
	})
	t.Run("bounded", func(t *testing.T) {
		out, err := Exec(ctx, sh, "-c", "i=0; while [ $i -lt 2000 ]; do echo 0123456789; i=$((i+1)); done")
		if err != nil || len(out) != MaxOutput+1 {
			t.Errorf("Exec kept %d bytes, %v; want %d, nil", len(out), err, MaxOutput+1)
		}
	})
	t.Run("deadline kills the group", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		// The grandchild sleep holds stdout: killing sh alone would leave
		// Exec waiting on the pipe for the whole sleep.
		_, err := Exec(ctx, sh, "-c", "sleep 30; echo late")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Exec error %v; want context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Exec took %v after its deadline", d)
		}
	})
}

func lookSh() (string, error) {
	for _, p := range []string{"/bin/sh", "/usr/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no /bin/sh")
}
