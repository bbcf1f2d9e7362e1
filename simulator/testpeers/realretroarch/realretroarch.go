// Package realretroarch starts the real RetroArch (Debian's 1.14 build with the
// Nestopia core) headless on loopback, so tests can hold Cabinet's RetroArch
// client and the fake RetroArch to the genuine article. It writes its own
// generated NES ROM (StubROM, or BatteryROM for a battery save) and
// configuration into a caller-owned directory and never touches the user's
// RetroArch setup. It is production-safe (no testing import); the
// test-side glue lives in simulator/testpeers/peertest.
package realretroarch

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Paths RetroArch needs. Batocera's configgen sets libretro_directory and
// libretro_info_path too; without them 1.14 refuses save states ("Core does not
// support save states") and GET_STATUS names the core instead of the system.
const (
	coreFile    = "nestopia_libretro.so"
	infoDir     = "/usr/share/libretro/info"
	infoFile    = "nestopia_libretro.info"
	installHint = "install the Debian packages retroarch, libretro-nestopia, libretro-core-info and dbus"
)

// coreGlobs are where Debian installs libretro cores, the multiarch path first.
var coreGlobs = [...]string{
	"/usr/lib/x86_64-linux-gnu/libretro/" + coreFile,
	"/usr/lib/*/libretro/" + coreFile,
	"/usr/lib/libretro/" + coreFile,
}

// peer is what Available found: the programs and the core to start.
type peer struct {
	RetroArch string // path of the retroarch binary
	DBusRun   string // path of dbus-run-session
	Core      string // path of nestopia_libretro.so
	InfoDir   string // libretro core info directory
}

// Available reports what is missing to run the real RetroArch, so a test can
// skip (or fail under CABINET_REQUIRE_PEERS=1) with a message that says what to
// install.
func Available() error {
	_, err := find()
	return err
}

func find() (peer, error) {
	var p peer
	var missing []string
	var err error
	if p.RetroArch, err = exec.LookPath("retroarch"); err != nil {
		missing = append(missing, "the retroarch binary")
	}
	if p.DBusRun, err = exec.LookPath("dbus-run-session"); err != nil {
		missing = append(missing, "dbus-run-session")
	}
	p.Core = findCore()
	if p.Core == "" {
		missing = append(missing, "the Nestopia core ("+coreFile+")")
	}
	p.InfoDir = infoDir
	if _, err := os.Stat(filepath.Join(infoDir, infoFile)); err != nil {
		missing = append(missing, "the core info "+filepath.Join(infoDir, infoFile))
	}
	if len(missing) > 0 {
		return peer{}, fmt.Errorf("real RetroArch not available: missing %s; %s",
			strings.Join(missing, ", "), installHint)
	}
	return p, nil
}

func findCore() string {
	for _, g := range coreGlobs {
		matches, err := filepath.Glob(g)
		if err != nil {
			continue
		}
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
				return m
			}
		}
	}
	return ""
}

// errExited is returned while waiting for RetroArch when the process died.
var errExited = errors.New("retroarch exited before answering VERSION")
