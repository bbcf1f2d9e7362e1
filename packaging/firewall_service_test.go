package packaging

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServiceKeepsRetroArchPortClosed: with CloseRetroArchPort the
// service's start adds the rule before the daemon starts (every boot: the
// root filesystem forgets rules), a restart does not add a second one, and
// the fragment uninstall runs takes it away — all inside a private network
// namespace.
func TestServiceKeepsRetroArchPortClosed(t *testing.T) {
	firewallBackends(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "cabinet")
	// The daemon: a stand-in that stays up until the service stops it.
	writeExecutable(t, bin, "#!/bin/sh\ncase \"$1\" in serve) echo $$ > \"$RUN/serve.pid\"; exec sleep 30;; esac\n")
	l := DefaultLayout()
	l.Binary, l.RunDir, l.ServicesDir = bin, filepath.Join(dir, "run"), dir
	l.CloseRetroArchPort, l.RetroArchPort = true, 55355
	svc := l.ServiceScript()
	if err := os.WriteFile(filepath.Join(dir, "service"), []byte(svc.Content), 0o755); err != nil {
		t.Fatal(err)
	}
	fw, _ := RetroArchPortRules(55355)
	script := "export RUN=" + shQuote(l.RunDir) + "\n" +
		"bash " + shQuote(filepath.Join(dir, "service")) + " start\n" +
		"bash " + shQuote(filepath.Join(dir, "service")) + " stop\n" +
		"bash " + shQuote(filepath.Join(dir, "service")) + " start\n" +
		"echo '== started'; iptables -S INPUT; ip6tables -S INPUT\n" +
		"bash " + shQuote(filepath.Join(dir, "service")) + " stop\n" +
		fw.Remove + "echo '== removed'; iptables -S INPUT; ip6tables -S INPUT\n"
	out, err := unshareNet(t, "bash", backend{}, script)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	s := sections(out)
	if got := tagged(s["started"]); len(got) != 2 || !strings.Contains(got[0], "--dport 55355") {
		t.Errorf("after two starts: %q, want one rule per family", got)
	}
	if got := tagged(s["removed"]); len(got) != 0 {
		t.Errorf("after Remove: %q, want none", got)
	}
	// Without the switch the service touches no firewall.
	l.CloseRetroArchPort = false
	if c := l.ServiceScript().Content; strings.Contains(c, "iptables") {
		t.Errorf("the service without CloseRetroArchPort mentions iptables:\n%s", c)
	}
}
