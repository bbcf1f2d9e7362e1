package packaging

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/peertest"
)

// The firewall fragments change netfilter tables, so every test here runs
// them in a network namespace it creates (unshare -n, ip netns), never in
// this machine's own: see privateNet.

func TestRetroArchPortRulesText(t *testing.T) {
	f, err := RetroArchPortRules(55355)
	if err != nil {
		t.Fatal(err)
	}
	const rule = "INPUT ! -i lo -p udp --dport 55355 -m comment --comment cabinet-retroarch -j DROP"
	wantAdd := `# Keep RetroArch's command port (UDP 55355) to this machine: drop it on every interface but lo.
(
  for fw in iptables ip6tables; do
    command -v "$fw" >/dev/null 2>&1 || continue
    "$fw" -w 5 -C ` + rule + ` || "$fw" -w 5 -I ` + rule + `
  done
) </dev/null >/dev/null 2>&1 || :
`
	wantRemove := `# Delete Cabinet's rules keeping RetroArch's command port to this machine (tagged cabinet-retroarch).
(
  set -f
  for fw in iptables ip6tables; do
    command -v "$fw" >/dev/null 2>&1 || continue
    "$fw" -w 5 -S INPUT 2>/dev/null | while read -r op chain rule; do
      case "$op $rule " in
        "-A "*" --comment cabinet-retroarch "*) "$fw" -w 5 -D "$chain" $rule ;;
      esac
    done
  done
) </dev/null >/dev/null 2>&1 || :
`
	wantPresent := "iptables -w 2 -C " + rule + "\n"
	for _, c := range []struct{ name, got, want string }{{"Add", f.Add, wantAdd}, {"Remove", f.Remove, wantRemove}, {"Present", f.Present, wantPresent}} {
		if c.got != c.want {
			t.Errorf("%s =\n%s\nwant\n%s", c.name, c.got, c.want)
		}
	}
}

func TestRetroArchPortRulesPorts(t *testing.T) {
	for _, tt := range []struct {
		port int
		ok   bool
	}{{-1, false}, {0, false}, {1, true}, {55355, true}, {65535, true}, {65536, false}} {
		f, err := RetroArchPortRules(tt.port)
		if (err == nil) != tt.ok {
			t.Errorf("RetroArchPortRules(%d) error = %v, want ok=%v", tt.port, err, tt.ok)
			continue
		}
		if tt.ok && !strings.Contains(f.Add, fmt.Sprintf(" --dport %d -m comment", tt.port)) {
			t.Errorf("RetroArchPortRules(%d).Add does not name the port:\n%s", tt.port, f.Add)
		}
		if !tt.ok && (err == nil || !strings.Contains(err.Error(), "network_cmd_port")) {
			t.Errorf("RetroArchPortRules(%d) error %v does not name the setting", tt.port, err)
		}
	}
}

// hostNet is this process's network namespace ("net:[4026531840]").
func hostNet(t *testing.T) string {
	t.Helper()
	ns, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		peertest.RequirePeer(t, fmt.Errorf("read /proc/self/ns/net: %w", err))
	}
	return ns
}

// privateNet prefixes script with a guard that exits 99 before anything
// else runs when the shell is in this machine's network namespace: a
// script that reaches iptables is in a namespace the test made.
func privateNet(t *testing.T, script string) string {
	return fmt.Sprintf("[ \"$(readlink /proc/self/ns/net)\" != %s ] || { echo 'refusing to touch the host firewall: not in a private network namespace' >&2; exit 99; }\n%s",
		shQuote(hostNet(t)), script)
}

func TestPrivateNetGuard(t *testing.T) {
	out, err := exec.Command("sh", "-c", privateNet(t, "echo ran")).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 99 || strings.Contains(string(out), "ran") {
		t.Fatalf("guard in the host namespace: %v, %q; want exit 99 before the script", err, out)
	}
}

// backend is the iptables flavour on PATH: the machine's default, or
// iptables-legacy as Batocera builds it.
type backend struct {
	name string
	path string // directory put first on PATH ("": the default)
}

func (b backend) env() []string {
	env := os.Environ()
	if b.path != "" {
		env = append(env, "PATH="+b.path+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return env
}

// firewallBackends returns the iptables flavours this machine can run in
// a private network namespace; a missing tool or privilege skips the test
// with the reason (fails it with CABINET_REQUIRE_PEERS=1).
func firewallBackends(t *testing.T) []backend {
	t.Helper()
	for _, tool := range []string{"unshare", "iptables", "ip6tables"} {
		if _, err := exec.LookPath(tool); err != nil {
			peertest.RequirePeer(t, fmt.Errorf("%s is not installed (Debian: util-linux, iptables): %w", tool, err))
		}
	}
	probe := "iptables -w 5 -A INPUT -m comment --comment probe -j ACCEPT && ip6tables -w 5 -A INPUT -m comment --comment probe -j ACCEPT"
	if out, err := unshareNet(t, "sh", backend{}, probe); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("iptables with the comment match in a private network namespace (unshare -n needs root or CAP_SYS_ADMIN): %v: %s", err, out))
	}
	backends := []backend{{name: "default"}}
	legacy := t.TempDir()
	for _, tool := range []string{"iptables", "ip6tables"} {
		real, err := exec.LookPath(tool + "-legacy")
		if err != nil {
			t.Logf("no %s-legacy: testing the default backend only", tool)
			return backends
		}
		if err := os.Symlink(real, filepath.Join(legacy, tool)); err != nil {
			t.Fatal(err)
		}
	}
	b := backend{name: "legacy", path: legacy}
	if out, err := unshareNet(t, "sh", b, probe); err != nil {
		t.Logf("iptables-legacy does not run here (%v: %s): testing the default backend only", err, out)
		return backends
	}
	return append(backends, b)
}

// unshareNet runs script under shell in a fresh network namespace that
// dies with it.
func unshareNet(t *testing.T, shell string, b backend, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("unshare", "-n", shell, "-c", privateNet(t, script))
	cmd.Env = b.env()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// sections splits output at "== name" marker lines.
func sections(out string) map[string][]string {
	m := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, "== "); ok {
			cur = name
			m[cur] = []string{}
			continue
		}
		m[cur] = append(m[cur], line)
	}
	return m
}

func tagged(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, " --comment "+RetroArchPortTag+" ") {
			out = append(out, l)
		}
	}
	return out
}

// TestFirewallFragmentsInNamespace: Add twice leaves one rule per family,
// Present sees it, Remove restores the tables exactly (rules that merely
// look like Cabinet's survive), also after the port changed.
func TestFirewallFragmentsInNamespace(t *testing.T) {
	cabinettest.Long(t, "fragments through a second namespace (TestFirewallDropsLAN stays in -short)")
	backends := firewallBackends(t)
	f, _ := RetroArchPortRules(55355)
	moved, _ := RetroArchPortRules(4242) // network_cmd_port edited since
	// Rules an administrator may have: an unrelated one, the same drop
	// without Cabinet's tag, and a comment that only starts with it.
	setup := `for fw in iptables ip6tables; do
  "$fw" -A INPUT -p tcp --dport 22 -j ACCEPT
  "$fw" -A INPUT ! -i lo -p udp --dport 55355 -j DROP
  "$fw" -A INPUT -p udp --dport 55355 -m comment --comment "cabinet-retroarch x" -j DROP
done
`
	dump := func(label string) string {
		return "echo '== " + label + "4'; iptables -S INPUT; echo '== " + label + "6'; ip6tables -S INPUT\n"
	}
	script := setup + dump("before") +
		"echo '== add'\n" + f.Add + f.Add + moved.Add + "echo \"add=$?\"\n" + dump("added") +
		"echo '== present'\n" + f.Present + "echo \"present=$?\"\n" +
		"echo '== remove'\n" + f.Remove + "echo \"remove=$?\"\n" + dump("removed") +
		"echo '== absent'\n" + f.Present + "echo \"present=$?\"\n" + f.Remove + "echo \"remove again=$?\"\n"
	want := []string{
		"-A INPUT ! -i lo -p udp -m udp --dport 4242 -m comment --comment cabinet-retroarch -j DROP",
		"-A INPUT ! -i lo -p udp -m udp --dport 55355 -m comment --comment cabinet-retroarch -j DROP",
	}
	for _, b := range backends {
		for _, shell := range []string{"dash", "bash"} {
			t.Run(b.name+"/"+shell, func(t *testing.T) {
				if _, err := exec.LookPath(shell); err != nil {
					peertest.RequirePeer(t, fmt.Errorf("%s is not installed: %w", shell, err))
				}
				out, err := unshareNet(t, shell, b, script)
				if err != nil {
					t.Fatalf("script: %v\n%s", err, out)
				}
				s := sections(out)
				if got := strings.Join(s["add"], "\n"); got != "add=0" {
					t.Errorf("Add printed or failed: %q, want only add=0", got)
				}
				for _, fam := range []string{"4", "6"} {
					before, added, removed := s["before"+fam], s["added"+fam], s["removed"+fam]
					if len(before) != 4 {
						t.Errorf("IPv%s setup rules missing: %q", fam, before)
					}
					// Inserted first in INPUT, one per port however often
					// Add ran; the look-alikes are not Cabinet's.
					if got := tagged(added); strings.Join(got, "\n") != strings.Join(want, "\n") || added[1] != want[0] {
						t.Errorf("IPv%s after Add twice (and once for port 4242):\n%s\nwant Cabinet's rules first:\n%s",
							fam, strings.Join(added, "\n"), strings.Join(want, "\n"))
					}
					if strings.Join(removed, "\n") != strings.Join(before, "\n") {
						t.Errorf("IPv%s after Remove:\n%s\nwant the table as before:\n%s", fam, strings.Join(removed, "\n"), strings.Join(before, "\n"))
					}
				}
				if got := strings.Join(s["present"], ""); got != "present=0" {
					t.Errorf("Present with the rule: %q, want present=0", got)
				}
				if got := strings.Join(s["remove"], ""); got != "remove=0" {
					t.Errorf("Remove: %q, want remove=0 and silence", got)
				}
				if got := s["absent"]; len(got) < 2 || got[len(got)-2] != "present=1" || got[len(got)-1] != "remove again=0" {
					t.Errorf("after Remove: %q, want present=1 and a second Remove that succeeds", got)
				}
			})
		}
	}
}

// TestFirewallAddNeverFails: the service must start when iptables is
// missing or refuses (no module, no lock), even under set -e, and Add
// prints nothing. Fake tools: nothing here reaches a real firewall.
func TestFirewallAddNeverFails(t *testing.T) {
	f, _ := RetroArchPortRules(55355)
	failing := t.TempDir()
	for _, tool := range []string{"iptables", "ip6tables"} {
		writeExecutable(t, filepath.Join(failing, tool), "#!/bin/sh\necho \"$0: refused\" >&2\nexit 4\n")
	}
	empty := t.TempDir()
	for _, tt := range []struct{ name, path string }{
		{"iptables refuses", failing + string(os.PathListSeparator) + os.Getenv("PATH")},
		{"no iptables", empty},
	} {
		for _, shell := range []string{"dash", "bash"} {
			sh, err := exec.LookPath(shell)
			if err != nil {
				peertest.RequirePeer(t, fmt.Errorf("%s is not installed: %w", shell, err))
			}
			cmd := exec.Command(sh, "-c", "set -e\n"+f.Add+"echo started\n")
			cmd.Env = append(os.Environ(), "PATH="+tt.path)
			out, err := cmd.CombinedOutput()
			if err != nil || string(out) != "started\n" {
				t.Errorf("%s, %s: Add then echo: %v, %q; want only \"started\"", tt.name, shell, err, out)
			}
		}
	}
}

// TestFirewallDropsLAN is the effect: with the rule, a datagram to the
// port from another machine (a second network namespace over a veth pair)
// is dropped, one on loopback still arrives; Remove reopens the port.
func TestFirewallDropsLAN(t *testing.T) {
	backends := firewallBackends(t)
	if _, err := exec.LookPath("ip"); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("ip is not installed (Debian: iproute2): %w", err))
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			cab, lan := newNetns(t, b, "cab"), newNetns(t, b, "lan")
			cab.sh(t, "ip link add veth-cab type veth peer name veth-lan netns "+lan.name+" && ip link set lo up && ip link set veth-cab up"+
				" && ip addr add 10.213.7.1/24 dev veth-cab && ip addr add fd00:cab::1/64 dev veth-cab nodad")
			lan.sh(t, "ip link set lo up && ip link set veth-lan up && ip addr add 10.213.7.2/24 dev veth-lan && ip addr add fd00:cab::2/64 dev veth-lan nodad")
			f, _ := RetroArchPortRules(55355)
			for _, fam := range []struct{ name, network, tool, addr, loopback string }{
				{"IPv4", "udp4", "iptables", "10.213.7.1", "127.0.0.1"},
				{"IPv6", "udp6", "ip6tables", "fd00:cab::1", "::1"},
			} {
				t.Run(fam.name, func(t *testing.T) {
					got := cab.listen(t, fam.network, ":55355")
					fromLAN := func(payload string) { lan.send(t, fam.network, net.JoinHostPort(fam.addr, "55355"), payload) }
					fromLAN("lan-open")
					got.wait(t, "lan-open") // the path works without the rule

					cab.sh(t, f.Add+f.Add)
					fromLAN("lan-closed")
					cab.waitDropped(t, fam.tool, 1)
					cab.send(t, fam.network, net.JoinHostPort(fam.loopback, "55355"), "loopback")
					got.wait(t, "loopback")
					if got.has("lan-closed") {
						t.Errorf("%s datagram from the LAN reached the port with the rule in place", fam.name)
					}

					cab.sh(t, f.Remove)
					fromLAN("lan-reopened")
					got.wait(t, "lan-reopened")
				})
			}
		})
	}
}

// netns is a named network namespace the test made and deletes.
type netns struct {
	name string
	b    backend
}

func newNetns(t *testing.T, b backend, role string) netns {
	t.Helper()
	n := netns{name: fmt.Sprintf("cabfw-%d-%s-%s", os.Getpid(), b.name, role), b: b}
	if out, err := exec.Command("ip", "netns", "add", n.name).CombinedOutput(); err != nil {
		peertest.RequirePeer(t, fmt.Errorf("ip netns add (needs root or CAP_NET_ADMIN): %v: %s", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", n.name, err, out)
		}
	})
	return n
}

// command runs argv inside the namespace with the backend's PATH.
func (n netns) command(argv ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.name}, argv...)...)
	cmd.Env = n.b.env()
	return cmd
}

func (n netns) sh(t *testing.T, script string) string {
	t.Helper()
	out, err := n.command("sh", "-c", privateNet(t, script)).CombinedOutput()
	if err != nil {
		t.Fatalf("in %s: %v\n%s\n%s", n.name, err, script, out)
	}
	return string(out)
}

// waitDropped waits until Cabinet's rule in tool's INPUT chain has
// counted at least n packets: they went no further.
func (n netns) waitDropped(t *testing.T, tool string, want int) {
	t.Helper()
	// A kernel counter: nothing signals it, so it is looked at every 20 ms.
	cabinettest.Await(t, fmt.Sprintf("%s: Cabinet's rule to drop %d packets", tool, want), nil, func() (bool, string) {
		for _, line := range strings.Split(n.sh(t, tool+" -w 5 -S INPUT -v"), "\n") {
			if !strings.Contains(line, " --comment "+RetroArchPortTag+" ") {
				continue
			}
			if _, counters, ok := strings.Cut(line, " -c "); ok {
				if pkts, err := strconv.Atoi(strings.Fields(counters)[0]); err == nil && pkts >= want {
					return true, ""
				}
				return false, "counters " + counters
			}
		}
		return false, "no rule of Cabinet's in INPUT"
	})
}

// send sends one datagram from inside the namespace (this test binary as
// the sender).
func (n netns) send(t *testing.T, network, addr, payload string) {
	t.Helper()
	cmd := n.command(helperArgv()...)
	cmd.Env = append(cmd.Env, helperEnvVars(helperEnv+"=send", helperNetEnv+"="+network, helperAddrEnv+"="+addr, helperPayloadEnv+"="+payload)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("send %q to %s from %s: %v: %s", payload, addr, n.name, err, out)
	}
}

// received is what a listener inside a namespace got.
type received struct {
	lines chan string
	seen  map[string]bool
}

func (r *received) wait(t *testing.T, payload string) {
	t.Helper()
	timeout := time.After(cabinettest.Deadline)
	for !r.seen[payload] {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatalf("listener exited before %q arrived", payload)
			}
			r.seen[l] = true
		case <-timeout:
			t.Fatalf("%q did not arrive in %v (got %v)", payload, cabinettest.Deadline, r.seen)
		}
	}
}

func (r *received) has(payload string) bool {
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				return r.seen[payload]
			}
			r.seen[l] = true
		default:
			return r.seen[payload]
		}
	}
}

// listen starts this test binary as a UDP listener inside the namespace;
// it stops when the test ends.
func (n netns) listen(t *testing.T, network, addr string) *received {
	t.Helper()
	cmd := n.command(helperArgv()...)
	cmd.Env = append(cmd.Env, helperEnvVars(helperEnv+"=listen", helperNetEnv+"="+network, helperAddrEnv+"="+addr)...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("listener in %s did not start: %q", n.name, sc.Text())
	}
	r := &received{lines: make(chan string, 16), seen: map[string]bool{}}
	go func() {
		defer close(r.lines)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
	}()
	return r
}

// The helper process: this test binary re-executed inside a namespace.
const (
	helperEnv        = "CABINET_FIREWALL_HELPER" // listen | send
	helperNetEnv     = "CABINET_FIREWALL_NET"
	helperAddrEnv    = "CABINET_FIREWALL_ADDR"
	helperPayloadEnv = "CABINET_FIREWALL_PAYLOAD"
)

// helperEnvVars are a helper process's settings; a race-enabled helper
// must not sleep its default second at exit.
func helperEnvVars(kv ...string) []string {
	return append(kv, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

func helperArgv() []string {
	exe, _ := os.Executable()
	return []string{exe, "-test.run=^TestFirewallHelperProcess$"}
}

// TestFirewallHelperProcess is not a test: it is the listener and sender
// the namespace tests run.
func TestFirewallHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for TestFirewallDropsLAN")
	}
	network, addr := os.Getenv(helperNetEnv), os.Getenv(helperAddrEnv)
	switch mode {
	case "send":
		c, err := net.Dial(network, addr)
		if err == nil {
			_, err = c.Write([]byte(os.Getenv(helperPayloadEnv)))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "listen":
		pc, err := net.ListenPacket(network, addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("ready")
		go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }() // the test closed our stdin
		pc.SetDeadline(time.Now().Add(time.Minute))
		buf := make([]byte, 2048)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				os.Exit(1)
			}
			fmt.Println(string(buf[:n]))
		}
	}
	os.Exit(0)
}
