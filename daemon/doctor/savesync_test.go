package doctor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/savesync"
)

func TestDoctorSaveSync(t *testing.T) {
	on := savesync.Config{Asked: true, On: true, URL: "http://romm.lan"}
	at := time.Date(2026, 12, 6, 18, 0, 0, 0, time.Local)
	conflict := savesync.Conflict{Game: savesync.Game{System: "nes", ROM: "/userdata/roms/nes/Alpha.nes", ROMID: 1, Name: "Alpha"},
		Slot: "autosave", Local: "/userdata/saves/nes/Alpha.srm", RomMFile: "Alpha [x].srm", Copy: "/userdata/saves/.cabinet-backup/nes/Alpha.srm.romm-x",
		Reason: "changed on both sides since the last sync", HiddenBy: "/userdata/saves/nes/Alpha.state.auto"}
	for _, tc := range []struct {
		name   string
		env    SaveSyncEnv
		status Status
		want   []string
	}{
		{"off", SaveSyncEnv{}, Skip, []string{"cabinet romm pair --sync-saves"}},
		{"asked, old pairing", SaveSyncEnv{Config: savesync.Config{Asked: true, Problem: "paired without assets"}}, Warn, []string{"paired without assets", "--sync-saves"}},
		{"no daemon", SaveSyncEnv{Config: on, Daemon: func(context.Context) (*savesync.Status, error) { return nil, errors.New("not running") }},
			Warn, []string{"does not answer"}},
		{"ok", SaveSyncEnv{Config: on, Daemon: func(context.Context) (*savesync.Status, error) {
			return &savesync.Status{State: savesync.StateOK, LastSync: at, UploadsToday: 2, BackupBytes: 3 << 20, BackupDir: "/userdata/saves/.cabinet-backup",
				LastSession: savesync.LastSession{ID: 7, Trigger: "game ended", Games: 1, Uploaded: 1}}, nil
		}}, OK, []string{"on (ok)", "RomM session 7", "1 uploaded", "Today: 2 uploaded", "3.0 MiB in /userdata/saves/.cabinet-backup"}},
		{"conflict", SaveSyncEnv{Config: on, Daemon: func(context.Context) (*savesync.Status, error) {
			return &savesync.Status{State: savesync.StateConflict, Conflicts: 1, Waiting: []savesync.Conflict{conflict}}, nil
		}}, Warn, []string{"Conflict: Alpha", "library_resolve_save", "Alpha.state.auto"}},
		{"RomM down", SaveSyncEnv{Config: on, Daemon: func(context.Context) (*savesync.Status, error) {
			return &savesync.Status{State: savesync.StateError, LastError: "RomM is unreachable", NextTry: at}, nil
		}}, Warn, []string{"Last problem: RomM is unreachable", "Next try"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkSaveSync(context.Background(), tc.env)
			text := res.Detail + "\n" + strings.Join(res.Lines, "\n") + "\n" + res.Hint
			if res.Status != tc.status {
				t.Errorf("status %v, want %v:\n%s", res.Status, tc.status, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q:\n%s", w, text)
				}
			}
		})
	}
}
