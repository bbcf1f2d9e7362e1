package config

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator"
)

// TestWriteConfig proves the file the simulator writes alone points
// Cabinet's configuration at it (here, because only cmd/ reads cabinet.*).
func TestWriteConfig(t *testing.T) {
	c, err := simulator.Start(simulator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dir := t.TempDir()
	p, err := c.WriteConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := Load(Inputs{Environ: []string{"CABINET_CONFIG=" + p}})
	if l.Err != nil || len(l.Warnings) != 0 {
		t.Fatalf("config: %v %q", l.Err, l.Warnings)
	}
	cfg := l.Config
	if cfg.ESURL != c.ESURL() || cfg.RetroArchAddr != c.RetroArchAddr() || cfg.Root != c.Root {
		t.Errorf("config = %+v", cfg)
	}
	if !strings.HasPrefix(cfg.StatePath(), c.Dir) {
		t.Errorf("state dir %s not inside %s", cfg.StatePath(), c.Dir)
	}
	for _, f := range []string{"/usr/share/batocera/batocera.version", "/sys/class/thermal/thermal_zone0/temp", "/userdata/system/batocera.conf"} {
		if _, err := os.Stat(cfg.Path(f)); err != nil {
			t.Errorf("fake tree lacks %s: %v", f, err)
		}
	}
	if _, err := os.Stat(cfg.ScreenshotPath()); err != nil {
		t.Errorf("screenshot dir: %v", err)
	}
	resp, err := http.Get(cfg.ESURL + "/caps")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"Version"`) {
		t.Errorf("caps = %s", body)
	}
	if filepath.Dir(p) != dir {
		t.Errorf("config at %s", p)
	}
}
