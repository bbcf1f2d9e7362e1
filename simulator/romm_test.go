package simulator

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/daemon/es"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// TestRomM: with Options.RomM the simulator serves the fake RomM on
// loopback, lists one of its ROMs as an ES game whose file holds the ROM's
// bytes, and writes a config naming RomM and a 0600 token file, never the
// token.
func TestRomM(t *testing.T) {
	c, err := Start(Options{RomM: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	if !strings.HasPrefix(c.RomMURL(), "http://127.0.0.1:") {
		t.Errorf("RomMURL = %q, want loopback", c.RomMURL())
	}
	rc, err := romm.New(romm.Config{URL: c.RomMURL(), Token: c.RomM.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.Version(ctx); err != nil || v.String() != fakeromm.DefaultVersion {
		t.Errorf("RomM version = %v, %v; want %s", v, err, fakeromm.DefaultVersion)
	}
	if strings.HasPrefix(c.RomM.OpenAPISource(), "minimal") {
		t.Errorf("the fake RomM serves no real OpenAPI document: %s", c.RomM.OpenAPISource())
	}

	rom, _ := c.RomM.ROM(fakeromm.ROMAlphaQuest)
	want := "/userdata/roms/nes/" + rom.FSName
	if c.RomMGamePath() != want {
		t.Fatalf("RomMGamePath = %q, want %q", c.RomMGamePath(), want)
	}
	if b, err := os.ReadFile(c.Path(want)); err != nil || !bytes.Equal(b, rom.Files[0].Bytes) {
		t.Errorf("%s: %d bytes (%v), want RomM's %d", want, len(b), err, len(rom.Files[0].Bytes))
	}
	esc, err := es.New(es.Config{URL: c.ESURL()})
	if err != nil {
		t.Fatal(err)
	}
	games, err := esc.Games(ctx, "nes")
	listed := false
	for _, g := range games {
		listed = listed || g.Path == want && g.Name == rom.Name
	}
	if err != nil || !listed {
		t.Errorf("ES does not list %s as %q (%v)", want, rom.Name, err)
	}

	p, err := c.WriteConfig(t.TempDir(), "cabinet.name=Other", "cabinet.log.level=debug")
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(p)
	for _, line := range []string{"cabinet.romm.url=" + c.RomMURL(), "cabinet.romm.token_file=" + RomMTokenFile, "cabinet.name=Other", "cabinet.log.level=debug"} {
		if !strings.Contains(string(conf), line+"\n") {
			t.Errorf("config lacks %q:\n%s", line, conf)
		}
	}
	if strings.Contains(string(conf), c.RomM.Token()) || strings.Contains(string(conf), "Simulated Cabinet") {
		t.Errorf("config holds the token or the name the extra line replaces:\n%s", conf)
	}
	fi, err := os.Stat(c.Path(RomMTokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v; want mode 0600", fi, err)
	}
	if b, _ := os.ReadFile(c.Path(RomMTokenFile)); strings.TrimSpace(string(b)) != c.RomM.Token() {
		t.Errorf("token file holds %d bytes, not the token", len(b))
	}
	if d, _ := os.Stat(filepath.Dir(c.Path(RomMTokenFile))); d == nil || d.Mode().Perm() != 0o700 {
		t.Errorf("token folder mode = %v, want 0700", d)
	}

	// Closed with the simulator.
	url := c.RomMURL()
	c.Close()
	if _, err := rc.Platforms(ctx); err == nil {
		t.Errorf("RomM at %s still answers after Close", url)
	}
}

// Without Options.RomM nothing of RomM is there.
func TestNoRomM(t *testing.T) {
	c, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.WriteConfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(p)
	if c.RomM != nil || c.RomMURL() != "" || c.RomMGamePath() != "" || strings.Contains(string(conf), "romm") {
		t.Errorf("RomM %v, URL %q, game %q, config:\n%s", c.RomM, c.RomMURL(), c.RomMGamePath(), conf)
	}
	if _, err := os.Stat(c.Path(RomMTokenFile)); err == nil {
		t.Error("a RomM token file without RomM")
	}
}
