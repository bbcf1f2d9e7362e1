package packaging

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestServiceScript runs the service against a fake daemon that records its
// pid where `cabinet serve` does and exits on SIGTERM.
func TestServiceScript(t *testing.T) {
	cabinettest.Long(t, "the service waits its 5 s before a respawn")
	t.Parallel() // waits for the respawn delay; independent of the other tests
	root := t.TempDir()
	l := Layout{Binary: filepath.Join(root, "bin", "cabinet"), RunDir: filepath.Join(root, "run"), ServicesDir: filepath.Join(root, "services"), ServiceName: "cabinet"}
	fake := "#!/bin/sh\nif [ \"$1\" = hook ]; then echo \"$*\" >> '" + root + "/hooks'; exit 0; fi\n" +
		"echo $$ > '" + l.RunDir + "/serve.pid'\necho started >> '" + root + "/starts'\ntrap 'exit 0' TERM\nwhile :; do sleep 0.05; done\n"
	os.MkdirAll(filepath.Dir(l.Binary), 0o755)
	writeExecutable(t, l.Binary, fake)
	s := l.ServiceScript()
	os.MkdirAll(filepath.Dir(s.Path), 0o755)
	os.WriteFile(s.Path, []byte(s.Content), os.FileMode(s.Mode))
	run := func(arg string) (string, error) {
		out, err := exec.Command("/bin/bash", s.Path, arg).CombinedOutput()
		return string(out), err
	}
	if _, err := run("start"); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the daemon to run", nil, func() bool { out, err := run("status"); return err == nil && strings.HasPrefix(out, "running") })

	// The daemon dies on its own: the service starts it again.
	pid, _ := os.ReadFile(filepath.Join(l.RunDir, "serve.pid"))
	exec.Command("kill", "-KILL", strings.TrimSpace(string(pid))).Run()
	cabinettest.Await(t, "a respawn", nil, func() bool {
		b, _ := os.ReadFile(filepath.Join(root, "starts"))
		return strings.Count(string(b), "started") == 2
	})
	cabinettest.Await(t, "the respawned daemon", nil, func() bool { out, err := run("status"); return err == nil && strings.HasPrefix(out, "running") })

	if _, err := run("stop"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("status"); err == nil || !strings.Contains(out, "stopped") {
		t.Errorf("after stop: %q %v", out, err)
	}
	// Once the daemon is gone, a last standalone drain of the inbox.
	if b, _ := os.ReadFile(filepath.Join(root, "hooks")); string(b) != "hook --drain\n" {
		t.Errorf("stop ran %q, want one `cabinet hook --drain` after the daemon", b)
	}
	if out, err := run("bogus"); err == nil || !strings.Contains(out, "usage") {
		t.Errorf("unknown action: %q", out)
	}
}
