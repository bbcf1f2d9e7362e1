package batocera

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// absPath is an absolute path where one starts in a shell script.
var absPath = regexp.MustCompile(`(?m)(?:^|[\s"'=(<>!])(/[^\s"';|)&<>]*)`)

func TestRewriteLeavesNoPathOutsideTheTree(t *testing.T) {
	cabinettest.Long(t, "every Batocera script rewritten and run in the fake tree")
	t.Parallel()
	tr := New(t)
	for _, rel := range []string{"usr/bin/batocera-services", "etc/init.d/S99userservices"} {
		b, err := os.ReadFile(tr.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		// The grep of the brief: no /usr/ or /userdata but the tree's.
		rest := strings.ReplaceAll(text, tr.Root()+"/", "ROOT/")
		for _, p := range []string{"/usr/", "/userdata"} {
			if i := strings.Index(rest, p); i >= 0 && !strings.HasSuffix(rest[:i], "ROOT") {
				t.Errorf("%s: %q left outside the tree: ...%s...", rel, p, rest[max(0, i-30):min(len(rest), i+30)])
			}
		}
		// And every absolute path is the tree's, or one the host has too.
		for _, m := range absPath.FindAllStringSubmatch(text, -1) {
			p := m[1]
			if !strings.HasPrefix(p, tr.Root()+"/") && p != "/bin/bash" && p != "/dev/null" {
				t.Errorf("%s: absolute path %q outside the tree", rel, p)
			}
		}
		// The copy is Batocera's script but for the prefix.
		peers, _ := PeersDir()
		orig, err := os.ReadFile(filepath.Join(peers, "batocera", filepath.Base(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.ReplaceAll(text, tr.Root(), ""); got != string(orig) {
			t.Errorf("%s differs from Batocera's beyond the root prefix", rel)
		}
		if n := strings.Count(text, tr.Root()); n < 3 {
			t.Errorf("%s: %d paths rewritten, want at least 3", rel, n)
		}
	}
}

func TestLayout(t *testing.T) {
	t.Parallel()
	tr := New(t)
	for _, d := range []string{"userdata/system/services", "userdata/system/configs/emulationstation/scripts",
		"userdata/system/scripts", "userdata/system/logs", "usr/share/batocera/services", "var/run"} {
		if fi, err := os.Stat(tr.Path(d)); err != nil || !fi.IsDir() {
			t.Errorf("%s: not a directory (%v)", d, err)
		}
	}
	if b, err := os.ReadFile(tr.Path("/usr/share/batocera/batocera.version")); err != nil || string(b) != Version+"\n" {
		t.Errorf("batocera.version = %q, %v; want %q", b, err, Version+"\n")
	}
	if v, ok := tr.SettingsGet(t, "system.services"); ok {
		t.Errorf("system.services = %q in a fresh tree, want it absent", v)
	}
	if v, ok := tr.SettingsGet(t, "system.hostname"); !ok || v != "BATOCERA" {
		t.Errorf("system.hostname = %q, %v; want BATOCERA", v, ok)
	}
	env := strings.Join(tr.Env(), "\n")
	if !strings.Contains(env, "\nPATH="+tr.Path("usr/bin")+":") || !strings.Contains(env, "\nHOME="+tr.Path("userdata/system")) {
		t.Errorf("Env lacks the tree's PATH or HOME:\n%s", env)
	}
	if r := tr.Run(t, "sh", "-c", `command -v batocera-settings-get; echo "$HOME"; pwd`); r.Stdout !=
		tr.Path("usr/bin/batocera-settings-get")+"\n"+tr.Path("userdata/system")+"\n"+tr.Root()+"\n" {
		t.Errorf("a command in the tree sees:\n%s", r.Stdout)
	}
}

// snapshot is every file of a tree with its contents.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestServicesEnableEditsOnlyTheTree(t *testing.T) {
	t.Parallel()
	tr := New(t)
	host, hostErr := os.ReadFile("/userdata/system/batocera.conf")
	before := snapshot(t, tr.Root())

	tr.Services(t, "enable", "foo")

	after := snapshot(t, tr.Root())
	for p, b := range after {
		if p != tr.ConfPath() && before[p] != b {
			t.Errorf("%s changed", p)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d files in the tree after enable, %d before", len(after), len(before))
	}
	want := strings.Replace(DefaultConf, "\n#system.services=\n", "\nsystem.services=foo\n", 1)
	if got := string(tr.Conf(t)); got != want {
		t.Errorf("batocera.conf after enable foo:\n%s\nwant:\n%s", got, want)
	}
	if b, err := os.ReadFile("/userdata/system/batocera.conf"); !bytes.Equal(b, host) || (err == nil) != (hostErr == nil) {
		t.Errorf("the machine's /userdata/system/batocera.conf changed")
	}

	tr.Services(t, "enable", "bar")
	tr.Services(t, "disable", "foo")
	if v, _ := tr.SettingsGet(t, "system.services"); v != "bar" {
		t.Errorf("system.services = %q after enable bar, disable foo; want bar", v)
	}
}

func TestServicesList(t *testing.T) {
	t.Parallel()
	tr := New(t)
	for _, p := range []string{"userdata/system/services/foo", "userdata/system/services/bar",
		"userdata/system/services/my-daemon", "usr/share/batocera/services/sys_one"} {
		tr.Write(t, p, []byte("#!/bin/bash\n"), 0o755)
	}
	tr.Services(t, "enable", "foo")
	tr.Services(t, "enable", "sys_one")
	tests := []struct{ scope, want string }{
		{"", "bar;-\nfoo;*\nsys_one;*\n"}, // sorted by full path: userdata's before usr's
		{"user", "bar;-\nfoo;*\n"},
		{"system", "sys_one;*\n"},
	}
	for _, tt := range tests {
		if got := tr.Services(t, "list", tt.scope); got != tt.want {
			t.Errorf("list %q = %q, want %q", tt.scope, got, tt.want)
		}
	}
	if r := tr.Run(t, "bash", tr.Path("usr/bin/batocera-services"), "list"); !strings.Contains(r.Stderr, "Invalid service script name: my-daemon") {
		t.Errorf("list stderr = %q, want a warning about my-daemon", r.Stderr)
	}
}

// service is a user service script that records each call in
// userdata/system/logs/NAME.calls.
func service(tr *Tree, name string) string {
	return "#!/bin/bash\necho \"$1\" >> " + tr.Path("userdata/system/logs/"+name+".calls") + "\n"
}

func (tr *Tree) calls(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(tr.Path("userdata/system/logs/" + name + ".calls"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

func TestS99RunsEnabledServicesOnly(t *testing.T) {
	t.Parallel()
	tr := New(t)
	tr.Write(t, "userdata/system/services/on_exec", []byte(service(tr, "on_exec")), 0o755)
	tr.Write(t, "userdata/system/services/on_bash", []byte(service(tr, "on_bash")), 0o644) // run through bash
	tr.Write(t, "userdata/system/services/off", []byte(service(tr, "off")), 0o755)
	tr.Services(t, "enable", "on_exec")
	tr.Services(t, "enable", "on_bash")

	out := tr.S99(t, "start")
	for _, line := range []string{
		"User Service: on_exec -> service is enabled [ok]",
		"User Service: on_bash -> service is enabled [ok]",
		"User Service: off -> service is disabled [ok]",
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("S99 start output lacks %q:\n%s", line, out)
		}
	}
	cabinettest.Await(t, "the enabled services to start", nil, func() bool {
		return tr.calls(t, "on_exec") == "start\n" && tr.calls(t, "on_bash") == "start\n"
	})

	tr.S99(t, "stop") // waits for the stop calls
	for _, name := range []string{"on_exec", "on_bash"} {
		if got := tr.calls(t, name); got != "start\nstop\n" {
			t.Errorf("%s calls = %q, want start and stop", name, got)
		}
	}
	if got := tr.calls(t, "off"); got != "" {
		t.Errorf("disabled service called: %q", got)
	}
}

// The v43 migration: S99 moves custom.sh to a service and enables it
// through batocera-services found by PATH.
func TestS99MigratesCustomSh(t *testing.T) {
	cabinettest.Long(t, "Batocera's S99 boot script in a fake tree (TestS99RunsEnabledServicesOnly stays in -short)")
	t.Parallel()
	tr := New(t)
	tr.Write(t, "userdata/system/custom.sh", []byte(service(tr, "custom")), 0o644)
	tr.S99(t, "start")
	if _, err := os.Stat(tr.Path("userdata/system/services/custom_service")); err != nil {
		t.Fatalf("custom.sh not moved to services/custom_service: %v", err)
	}
	if v, _ := tr.SettingsGet(t, "system.services"); v != "custom_service" {
		t.Errorf("system.services = %q, want custom_service", v)
	}
	cabinettest.Await(t, "custom_service to start", nil, func() bool { return tr.calls(t, "custom") == "start\n" })
}

func TestToolsWithFile(t *testing.T) {
	tools := Build(t)
	conf := filepath.Join(t.TempDir(), "batocera.conf")
	if _, ok := tools.GetFile(t, conf, "a"); ok {
		t.Errorf("get on a missing file succeeded")
	}
	tools.SetFile(t, conf, "a", "1", "-b", "x=y")
	if b, _ := os.ReadFile(conf); string(b) != "a=1\n-b=x=y\n" {
		t.Errorf("set wrote %q", b)
	}
	if v, ok := tools.GetFile(t, conf, "-b"); !ok || v != "x=y" {
		t.Errorf("get -b = %q, %v", v, ok)
	}
}
