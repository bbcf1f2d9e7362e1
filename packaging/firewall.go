package packaging

import (
	"errors"
	"fmt"
)

// RetroArch 1.14 binds its unauthenticated command port (UDP, 55355 by
// default) on every interface, so anyone on the LAN can pause, quit or
// write the memory of the running game. The fragments here keep that port
// to this machine with one firewall rule per address family: UDP to the
// port arriving on any interface but lo is dropped.
//
// Batocera ships iptables and ip6tables (connman's default firewall type
// selects BR2_PACKAGE_IPTABLES; without the nftables compat option they are
// the legacy backend) and no nft binary. Its root filesystem does not keep
// rules across a reboot, so the service adds the rule at each start. The
// fragments work with either iptables backend.

// RetroArchPortTag is the comment (`-m comment --comment`) on every rule
// Cabinet adds. Remove deletes the rules carrying it and nothing else.
const RetroArchPortTag = "cabinet-retroarch"

// FirewallTool is the program the fragments drive (ip6tables too, when
// present). Without it a cabinet has no firewall Cabinet can use.
const FirewallTool = "iptables"

// ErrNoFirewallTool says why the port cannot be closed on this machine.
var ErrNoFirewallTool = errors.New("no firewall tool on this cabinet (iptables is not installed): RetroArch's command port stays open to the LAN")

// firewallWait and presentWait are how long (-w seconds) Add/Remove and
// Present wait for the xtables lock another program holds (connman takes
// it for tethering) before they give up; Present runs under doctor's
// deadline.
const (
	firewallWait = 5
	presentWait  = 2
)

// FirewallScript is the shell that keeps a port to this machine. Each field
// is a POSIX sh fragment (dash and bash run them; Batocera's service script
// is bash, `sh -c` runs them from uninstall and doctor), needing root.
type FirewallScript struct {
	// Add inserts the rule for IPv4 and, where ip6tables is installed,
	// IPv6. It is idempotent (running it twice leaves one rule per
	// family), prints nothing and never fails its caller: without
	// iptables, the filter table or the comment match it adds nothing and
	// exits 0. A kernel without the comment match gets no rule rather than
	// an untagged one, which Remove could not tell from an administrator's.
	Add string
	// Remove deletes every INPUT rule tagged RetroArchPortTag, whatever
	// its port (network_cmd_port may have changed since Add ran), for both
	// families, and leaves every other rule alone. Silent; exits 0.
	Remove string
	// Present exits 0 when the IPv4 rule is in place and 1 when it is not;
	// any other status means it could not tell (2: the comment match is
	// missing, 4: not root or no filter table, 127: no iptables), with the
	// reason on stderr. RetroArch's command socket is IPv4 only (AF_INET,
	// 0.0.0.0), so the IPv4 rule is the one that closes the port; the IPv6
	// one is defence in depth.
	Present string
}

// RetroArchPortRules renders the fragments keeping UDP port (RetroArch's
// network_cmd_port) to this machine.
func RetroArchPortRules(port int) (FirewallScript, error) {
	if port < 1 || port > 65535 {
		return FirewallScript{}, fmt.Errorf("retroarch command port %d: want 1..65535 (global.retroarch.network_cmd_port)", port)
	}
	rule := fmt.Sprintf("INPUT ! -i lo -p udp --dport %d -m comment --comment %s -j DROP", port, RetroArchPortTag)
	return FirewallScript{
		Add: fmt.Sprintf(`# Keep RetroArch's command port (UDP %[1]d) to this machine: drop it on every interface but lo.
(
  for fw in iptables ip6tables; do
    command -v "$fw" >/dev/null 2>&1 || continue
    "$fw" -w %[3]d -C %[2]s || "$fw" -w %[3]d -I %[2]s
  done
) </dev/null >/dev/null 2>&1 || :
`, port, rule, firewallWait),
		Remove: fmt.Sprintf(`# Delete Cabinet's rules keeping RetroArch's command port to this machine (tagged %[1]s).
(
  set -f
  for fw in iptables ip6tables; do
    command -v "$fw" >/dev/null 2>&1 || continue
    "$fw" -w %[2]d -S INPUT 2>/dev/null | while read -r op chain rule; do
      case "$op $rule " in
        "-A "*" --comment %[1]s "*) "$fw" -w %[2]d -D "$chain" $rule ;;
      esac
    done
  done
) </dev/null >/dev/null 2>&1 || :
`, RetroArchPortTag, firewallWait),
		Present: fmt.Sprintf("iptables -w %d -C %s\n", presentWait, rule),
	}, nil
}
