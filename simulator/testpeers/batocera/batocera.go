// Package batocera is a fake Batocera root in which Batocera's real tools
// run: batocera-settings-get/-set built from mini_settings, and the real
// batocera-services and S99userservices scripts, all from the shared peers
// folder. Tests use it to hold Cabinet's installer and its batocera.conf
// edits to what Batocera itself does. Test code only.
//
// The scripts hard-code absolute paths (/usr/bin/batocera-settings-get,
// /userdata/system/services, /usr/share/batocera/services, ...). Rather
// than running them in a private mount namespace over the tree, the tree
// holds a copy of each with every such path rewritten to the tree's root:
// no privileges needed, and the copies differ from Batocera's only by that
// prefix (a test checks that nothing outside the tree is left). The root
// is therefore a path without spaces or shell characters, as the scripts
// use some paths unquoted.
//
// The settings tools cannot be rewritten, and the scripts call them
// without -f, so each tree compiles its own pair with the tree's
// batocera.conf as DEFAULT_CONFIG_PATH, which is how Batocera builds them
// for /userdata/system/batocera.conf (meson's default_config_path). That
// costs about 0.3 s a tree; a wrapper script adding -f would be faster but
// would change the tools' argument handling and usage messages.
//
// Layout (under Root):
//
//	userdata/system/batocera.conf                      part of Batocera's template; system.services unset
//	userdata/system/{services,scripts,logs}/
//	userdata/system/configs/emulationstation/scripts/
//	usr/bin/{batocera-settings-get,batocera-settings-set,batocera-services}
//	etc/init.d/S99userservices                         where Batocera has it
//	usr/share/batocera/batocera.version                "43 2026/05/14 10:00"
//	usr/share/batocera/services/                       empty
//	var/run/
package batocera

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// Version is what the tree's batocera.version says.
const Version = "43 2026/05/14 10:00"

// DefaultConf is the tree's initial batocera.conf: the head and the tail
// of Batocera's template (package/batocera/core/batocera-system/batocera.conf),
// with its commented-out "#system.services=" line, so that the first
// enable uncomments it in place as on a fresh install.
const DefaultConf = `# ------------ A - System Options ----------- #

## Security
## Enable this to enforce security, requiring a password to access the network share.
#system.security.enabled=0

## Services
# exampe: system.services=service1 service2
#system.services=

## Show or hide Kodi in the EmulationStation menu.
kodi.enabled=1
## Start Kodi at launch.
kodi.atstartup=0

# ------------ B - Network ------------ #

## Set system hostname, accessible via network share.
system.hostname=BATOCERA
## Activate Wi-Fi (0,1)
wifi.enabled=0
## Wi-Fi SSID (string)
#wifi.ssid=new ssid

# ------------ C - Audio ------------ #

## Set the audio device
## Use "batocera-audio list" to see available devices.
audio.device=auto
## Set system volume (0-100)
audio.volume=90

# ------------ User-generated Configurations ----------- #
`

// Tree is one fake Batocera root.
type Tree struct {
	root  string
	tools Tools // compiled for this tree's batocera.conf

	// Timeout bounds each command run in the tree (DefaultTimeout).
	Timeout time.Duration
}

// New lays out a tree in a fresh temporary directory, removed when t
// ends. Missing peers (a C compiler, the peers folder) go through
// peertest.RequirePeer.
func New(t testing.TB) *Tree {
	t.Helper()
	root := shellSafeTempDir(t, "tree")
	return newTree(t, root)
}

// NewOn lays out a tree whose userdata is the directory userdata, which
// must be named "userdata" (typically a mount point, such as ExFAT's); its
// parent becomes the tree's root, where the rest of the tree is created.
// The caller owns userdata and its parent and removes them.
func NewOn(t testing.TB, userdata string) *Tree {
	t.Helper()
	if filepath.Base(userdata) != "userdata" {
		t.Fatalf("NewOn(%q): the directory must be named userdata, its parent becomes the tree's root", userdata)
	}
	return newTree(t, filepath.Dir(userdata))
}

func newTree(t testing.TB, root string) *Tree {
	t.Helper()
	if err := shellSafe(root); err != nil {
		t.Fatal(err)
	}
	peers, err := PeersDir()
	peertest.RequirePeer(t, err)
	tr := &Tree{root: root, Timeout: DefaultTimeout}
	for _, d := range []string{
		"userdata/system/services",
		"userdata/system/configs/emulationstation/scripts",
		"userdata/system/scripts",
		"userdata/system/logs",
		"usr/bin",
		"usr/share/batocera/services",
		"etc/init.d",
		"var/run",
	} {
		if err := os.MkdirAll(tr.Path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tr.Write(t, "userdata/system/batocera.conf", []byte(DefaultConf), 0o644)
	tr.Write(t, "usr/share/batocera/batocera.version", []byte(Version+"\n"), 0o644)
	for src, dst := range map[string]string{
		"batocera/batocera-services": "usr/bin/batocera-services",
		"batocera/S99userservices":   "etc/init.d/S99userservices",
	} {
		b, err := os.ReadFile(filepath.Join(peers, src))
		if err != nil {
			t.Fatal(err)
		}
		tr.Write(t, dst, rewritePaths(b, root), 0o755)
	}
	_, err = exec.LookPath("cc")
	peertest.RequirePeer(t, err)
	if tr.tools, err = compile(peers, tr.Path("usr/bin"), tr.Path("userdata/system/batocera.conf")); err != nil {
		t.Fatalf("build the tree's batocera-settings-get/-set: %v", err)
	}
	return tr
}

// Write creates or replaces the file p (see Path) with data and mode, the
// mode set past the umask (a service's exec bit matters to S99); its
// directory must exist.
func (tr *Tree) Write(t testing.TB, p string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(tr.Path(p), data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tr.Path(p), mode); err != nil {
		t.Fatal(err)
	}
}

// Root is the tree's root, Batocera's "/".
func (tr *Tree) Root() string { return tr.root }

// Path is p (absolute as on Batocera, or relative) inside the tree.
func (tr *Tree) Path(p string) string { return filepath.Join(tr.root, p) }

// ConfPath is the tree's batocera.conf.
func (tr *Tree) ConfPath() string { return tr.Path("userdata/system/batocera.conf") }

// Conf is the tree's batocera.conf, nil when it does not exist.
func (tr *Tree) Conf(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(tr.ConfPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return b
}

// SetConf replaces the tree's batocera.conf with data, or removes it when
// data is nil.
func (tr *Tree) SetConf(t testing.TB, data []byte) {
	t.Helper()
	if data == nil {
		if err := os.Remove(tr.ConfPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		return
	}
	tr.Write(t, "userdata/system/batocera.conf", data, 0o644)
}

// Env is the environment commands run with in the tree: the test
// process's, with the tree's usr/bin first in PATH and HOME at
// userdata/system, as on Batocera.
func (tr *Tree) Env() []string {
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"PATH="+tr.Path("usr/bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+tr.Path("userdata/system"))
}

// shellSafePath is what a root may be made of: the scripts paste some
// paths unquoted, and the tools get the path through a C string literal.
var shellSafePath = regexp.MustCompile(`^[A-Za-z0-9/._+-]+$`)

func shellSafe(root string) error {
	if !filepath.IsAbs(root) || !shellSafePath.MatchString(root) {
		return fmt.Errorf("tree root %q must be an absolute path of letters, digits and ./_+- only (the Batocera scripts use paths unquoted): set TMPDIR to such a path", root)
	}
	return nil
}

// shellSafeTempDir is a fresh directory under os.TempDir(), removed when t
// ends (after any mount made in it later is gone: clean-ups run in
// reverse).
func shellSafeTempDir(t testing.TB, what string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cabinet-batocera-"+what+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := shellSafe(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}
