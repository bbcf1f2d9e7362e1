package main

import (
	"os"
	"strings"
	"testing"
)

// TestCallInstallWithoutDaemon: with no daemon running, `cabinet call library_install` installs
// in-process (the store opened for the records), finishes the ES side itself, and
// library_uninstall takes it off again.
func TestCallInstallWithoutDaemon(t *testing.T) {
	cab, env := installCabinet(t)
	code, out, errOut := runBinary(t, env, "call", "library_install", "rom_id=3")
	if code != 0 || !strings.Contains(out, `"listed": true`) || !strings.Contains(out, `"verified": true`) {
		t.Fatalf("library_install: exit %d\n%s\n%s", code, out, errOut)
	}
	path := cab.Path("/userdata/roms/snes/Cosmic Crusade (USA).sfc")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runBinary(t, env, "call", "library_install", "rom_id=3")
	if code != 0 || !strings.Contains(out, `"outcome": "unchanged"`) {
		t.Fatalf("second library_install: exit %d\n%s", code, out)
	}
	i := strings.Index(out, `"game_id": "`)
	if i < 0 {
		t.Fatalf("no game id:\n%s", out)
	}
	id := out[i+len(`"game_id": "`) : i+len(`"game_id": "`)+32]
	code, out, _ = runBinary(t, env, "call", "library_uninstall", "system=snes", "game_id="+id)
	if code != 0 || !strings.Contains(out, `"outcome": "done"`) {
		t.Fatalf("library_uninstall: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the file is still there after uninstall: %v", err)
	}
}
