package uimode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator/fakees"
	"github.com/batocera-cabinet/cabinet/simulator/library"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// rig is an Applier over the fake ES on a loopback socket and a recording
// stub of S31emulationstation: each run appends "<verb> <UIMode lines of
// es_settings.cfg at that moment>" to its log.
type rig struct {
	a        *Applier
	srv      *fakees.Server
	ln       *fakees.Listener
	settings string
	conf     string
	log      string
}

func newRig(t *testing.T, settings string, failStop bool) *rig {
	t.Helper()
	dir := t.TempDir()
	r := &rig{settings: filepath.Join(dir, "es_settings.cfg"), conf: filepath.Join(dir, "batocera.conf"), log: filepath.Join(dir, "init.log")}
	if settings != "" {
		if err := os.WriteFile(r.settings, []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fail := ""
	if failStop {
		fail = "[ \"$1\" = stop ] && { echo 'emulationstation: no process found' >&2; exit 1; }\n"
	}
	script := filepath.Join(dir, "S31emulationstation")
	body := fmt.Sprintf("#!/bin/sh\n%sprintf '%%s %%s\\n' \"$1\" \"$(grep -o 'name=\"UIMode\" value=\"[A-Za-z]*\"' %s 2>/dev/null | tr '\\n' ' ')\" >>%s\n",
		fail, r.settings, r.log)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r.srv = fakees.New(fakees.Config{Library: library.Captured(""), LaunchDelay: 20 * time.Millisecond, ReturnDelay: 5 * time.Millisecond})
	ln, err := fakees.Serve("", r.srv)
	if err != nil {
		t.Fatal(err)
	}
	r.ln = ln
	t.Cleanup(func() { ln.Close(); r.srv.Close() })
	c, err := es.New(es.Config{URL: ln.URL()})
	if err != nil {
		t.Fatal(err)
	}
	r.a = &Applier{Settings: r.settings, BatoceraConf: r.conf, Backup: filepath.Join(dir, "backup", "es_settings.cfg"),
		Service: InitScript{Path: script}, ES: c, UpWait: 10 * time.Second}
	return r
}

func (r *rig) runs() string {
	b, _ := os.ReadFile(r.log)
	return strings.TrimSpace(string(b))
}

func (r *rig) file(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(r.settings)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestApply: Kid is written between the init script's stop and start,
// after a backup of the file as it was; the mode reads back; the answer
// tells how to leave it. Full then removes the setting, as ES does.
func TestApply(t *testing.T) {
	r := newRig(t, esSaved, false)
	plan, err := r.a.Plan(testCtx(t), haentities.UIModeKid)
	if err != nil || !strings.HasPrefix(plan.Text, "Would restart EmulationStation in Kid mode") || r.runs() != "" {
		t.Fatalf("Plan = %+v, %v; the script ran %q", plan, err, r.runs())
	}
	st, err := r.a.Apply(testCtx(t), haentities.UIModeKid)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode != "Kid" || st.Setting != "Kid" || !st.Changed || !st.Restarted || !strings.Contains(st.Text, "passkey entered with the pad") || strings.Contains(st.Text, "uudd") {
		t.Errorf("Apply = %+v", st)
	}
	if want := "stop name=\"UIMode\" value=\"Kiosk\" \nstart name=\"UIMode\" value=\"Kid\""; r.runs() != want {
		t.Errorf("the init script ran:\n%s\nwant\n%s", r.runs(), want)
	}
	if b, err := os.ReadFile(r.a.Backup); err != nil || string(b) != esSaved {
		t.Errorf("backup %q, %v; want the file as it was", b, err)
	}
	if got, err := r.a.Read(); err != nil || got.Mode != "Kid" {
		t.Errorf("Read = %+v, %v", got, err)
	}

	again, err := r.a.Apply(testCtx(t), haentities.UIModeKid)
	if err != nil || again.Changed || again.Restarted || again.Text != "EmulationStation is already in Kid mode (no settings menus, only games marked for kids)." {
		t.Errorf("Apply again = %+v, %v", again, err)
	}
	if strings.Count(r.runs(), "\n") != 1 {
		t.Errorf("ES restarted for nothing: %q", r.runs())
	}
	if _, err := r.a.Apply(testCtx(t), haentities.UIModeFull); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.file(t), "UIMode\"") {
		t.Errorf("Full left a UIMode setting:\n%s", r.file(t))
	}
}

// TestApplyRefuses: a running game, ES not answering, a mode batocera.conf
// forces, a file ES could not read and a stop that fails each leave the file
// as it was and ES running (the script's stop is not run but in the last).
func TestApplyRefuses(t *testing.T) {
	t.Run("a game runs", func(t *testing.T) {
		r := newRig(t, esSaved, false)
		game := r.srv.Library().Games("nes")[0]
		if err := r.srv.Launch("nes", game.ID); err != nil {
			t.Fatal(err)
		}
		cabinettest.Await(t, "the game to run", nil, func() bool { _, ok := r.srv.Running(); return ok })
		_, err := r.a.Apply(testCtx(t), haentities.UIModeKid)
		if !errors.Is(err, ErrGameRunning) || !strings.HasPrefix(err.Error(), game.Name+": a game is running") {
			t.Errorf("Apply = %v, want ErrGameRunning naming %s", err, game.Name)
		}
		if _, err := r.a.Plan(testCtx(t), haentities.UIModeKid); !errors.Is(err, ErrGameRunning) {
			t.Errorf("Plan = %v", err)
		}
		r.unchanged(t)
	})
	t.Run("ES down", func(t *testing.T) {
		r := newRig(t, esSaved, false)
		r.ln.Stop()
		if _, err := r.a.Apply(testCtx(t), haentities.UIModeKid); !errors.Is(err, ErrESDown) {
			t.Errorf("Apply = %v, want ErrESDown", err)
		}
		r.unchanged(t)
	})
	t.Run("forced", func(t *testing.T) {
		r := newRig(t, esSaved, false)
		os.WriteFile(r.conf, []byte("es.customsargs=--force-kid\n"), 0o644)
		st, err := r.a.Read()
		if err != nil || st.Mode != "Kid" || st.Setting != "Kiosk" || st.Forced != "Kid" {
			t.Errorf("Read = %+v, %v", st, err)
		}
		if _, err := r.a.Apply(testCtx(t), haentities.UIModeFull); !errors.Is(err, ErrForced) || !strings.Contains(err.Error(), "remove --force-kid") {
			t.Errorf("Apply = %v, want ErrForced saying what to remove", err)
		}
		r.unchanged(t)
	})
	t.Run("a file ES cannot read", func(t *testing.T) {
		r := newRig(t, "<config><string", false)
		if _, err := r.a.Apply(testCtx(t), haentities.UIModeKid); err == nil || !strings.Contains(err.Error(), "not valid XML") {
			t.Errorf("Apply = %v", err)
		}
		if r.runs() != "" || r.file(t) != "<config><string" {
			t.Errorf("the script ran %q; file %q", r.runs(), r.file(t))
		}
	})
	t.Run("not a mode", func(t *testing.T) {
		r := newRig(t, esSaved, false)
		if _, err := r.a.Apply(testCtx(t), "kid\x1b[2J"); err == nil || strings.Contains(err.Error(), "\x1b") {
			t.Errorf("Apply = %q", err)
		}
		r.unchanged(t)
	})
	t.Run("the stop fails", func(t *testing.T) {
		r := newRig(t, esSaved, true)
		_, err := r.a.Apply(testCtx(t), haentities.UIModeKid)
		if err == nil || !strings.Contains(err.Error(), "no process found") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("Apply = %v", err)
		}
		if r.file(t) != esSaved {
			t.Errorf("file changed:\n%s", r.file(t))
		}
	})
}

func (r *rig) unchanged(t *testing.T) {
	t.Helper()
	if r.runs() != "" || r.file(t) != esSaved {
		t.Errorf("the init script ran %q; the file is\n%s", r.runs(), r.file(t))
	}
}
