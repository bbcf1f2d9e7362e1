package batoconf_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/packaging/batoconf"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/batocera"
)

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name     string
		existing os.FileMode // 0: no file
		want     os.FileMode
	}{
		{"new file", 0, 0o644},
		{"keeps mode", 0o600, 0o600},
		{"keeps odd mode", 0o640, 0o640},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "batocera.conf")
			if tt.existing != 0 {
				if err := os.WriteFile(path, []byte("old=1\n"), tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.existing); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			if err := batoconf.WriteFile(path, []byte("a=1\n")); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			checkFile(t, path, "a=1\n", tt.want)
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d entries in the directory, want only batocera.conf (no temporary left)", len(ents))
			}
		})
	}
}

func checkFile(t *testing.T, path, want string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", path, b, err, want)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode != 0 && fi.Mode().Perm() != mode {
		t.Errorf("%s mode %v, want %v", path, fi.Mode().Perm(), mode)
	}
}

func TestWriteFileFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.conf")
	link := filepath.Join(dir, "batocera.conf")
	if err := os.WriteFile(target, []byte("old=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.conf", link); err != nil {
		t.Fatal(err)
	}
	if err := batoconf.WriteFile(link, []byte("a=1\n")); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced (%v)", err)
	}
	checkFile(t, target, "a=1\n", 0o644)
}

func TestWriteFileRefuses(t *testing.T) {
	dir := t.TempDir()
	if err := batoconf.WriteFile(filepath.Join(dir, "big.conf"), make([]byte, batoconf.MaxSize+1)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("WriteFile of %d bytes: %v, want a refusal", batoconf.MaxSize+1, err)
	}
	if err := batoconf.WriteFile(dir, []byte("a=1\n")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("WriteFile over a directory: %v, want a refusal", err)
	}
	if err := batoconf.WriteFile(filepath.Join(dir, "no", "such", "batocera.conf"), nil); err == nil {
		t.Errorf("WriteFile into a missing directory succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %d entries behind", len(ents))
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	if b, err := batoconf.ReadFile(filepath.Join(dir, "missing.conf")); b != nil || err != nil {
		t.Errorf("ReadFile(missing) = %q, %v; want empty, nil", b, err)
	}
	big := filepath.Join(dir, "big.conf")
	if err := os.WriteFile(big, make([]byte, batoconf.MaxSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := batoconf.ReadFile(big); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("ReadFile(big) = %v, want a refusal", err)
	}
	ok := filepath.Join(dir, "ok.conf")
	if err := os.WriteFile(ok, []byte("a=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := batoconf.ReadFile(ok); string(b) != "a=1\n" || err != nil {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
}

// The whole install edit on an exFAT /userdata, as on a cabinet whose
// share is an exFAT disk: read, set, enable, write; then the real tools
// agree.
func TestEditOnExFAT(t *testing.T) {
	t.Parallel()
	tr := batocera.NewOn(t, batocera.ExFAT(t))
	data, err := batoconf.ReadFile(tr.ConfPath())
	if err != nil {
		t.Fatal(err)
	}
	data, err = batoconf.Set(data, batoconf.KV{Key: "cabinet.mqtt.broker", Value: "tcp://ha.local:1883"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ = batoconf.EnableService(data, "cabinet")
	if err := batoconf.WriteFile(tr.ConfPath(), data); err != nil {
		t.Fatalf("WriteFile on exFAT: %v", err)
	}
	checkFile(t, tr.ConfPath(), string(data), 0)
	if v, _ := tr.SettingsGet(t, "cabinet.mqtt.broker"); v != "tcp://ha.local:1883" {
		t.Errorf("batocera-settings-get cabinet.mqtt.broker = %q", v)
	}
	if out := tr.Services(t, "list"); out != "" {
		t.Errorf("list = %q with no service file", out)
	}
	tr.Services(t, "disable", "cabinet")
	if v, ok := tr.SettingsGet(t, "system.services"); !ok || v != "" {
		t.Errorf("system.services = %q, %v after disable; want empty", v, ok)
	}
}
