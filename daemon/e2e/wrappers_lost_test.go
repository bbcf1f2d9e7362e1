package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/packaging"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestWrappersKill9WhileEventsFlow: a thousand events at about 50 a second
// through the installed wrappers (so, while the daemon is up, through its
// inbox) while the daemon is killed with SIGKILL at 20 random moments and
// restarted: every session whose wrappers returned is logged once and
// published, in the order it was played.
func TestWrappersKill9WhileEventsFlow(t *testing.T) {
	cabinettest.Long(t, "1000 events through the wrappers and 20 kills, about a minute")
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		cycleWhileEventsFlow(t, kind, 20, (*daemonProc).kill9, flowOptions{
			wrappers: true, pace: 20 * time.Millisecond, minEvents: 1000, slack: 10 * time.Millisecond, inOrder: true})
	})
}

// TestWrappersWhileDaemonStopped: the daemon is frozen (SIGSTOP) for 10 s
// while sessions flow through the wrappers: they see it up, so their
// records wait in its inbox; once it runs again (SIGCONT) everything is
// logged and published, in order.
func TestWrappersWhileDaemonStopped(t *testing.T) {
	cabinettest.Long(t, "the daemon frozen for 10 s under load")
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	flow := startFlow(r, flowOptions{wrappers: true, pace: 20 * time.Millisecond})
	flow.waitEvents(50)
	d.cmd.Process.Signal(syscall.SIGSTOP)
	<-time.After(10 * time.Second) // the freeze itself, not a synchronisation
	d.cmd.Process.Signal(syscall.SIGCONT)
	flow.waitEvents(flow.spawnCount() + 50)
	played := flow.stop()
	r.waitStatus(fmt.Sprintf("%d sessions, outbox drained", len(played)), func(s daemon.Status) bool {
		return s.Sessions == len(played) && s.OutboxDepth == 0
	})
	checkPublishedInOrder(t, r, played)
	if n := (flow.fellBack(r)); n != 0 {
		t.Logf("%d wrappers fell back to the binary while the daemon was frozen", n)
	}
}

// TestServiceStopMidBurst: `batocera-services stop cabinet` in the middle
// of a burst of wrappers: the service's last drain takes what wrappers
// wrote while the daemon stopped, and the ones after it run the binary, so
// nothing is left in the inbox.
func TestServiceStopMidBurst(t *testing.T) {
	cabinettest.Long(t, "a service start and stop around a burst")
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	l := packaging.Layout{Binary: cabinetBin, RunDir: r.cab.Path("/var/run/cabinet"), ServicesDir: cabinettest.TempDir(t, "svc"), ServiceName: "cabinet"}
	svc := l.ServiceScript()
	if err := os.WriteFile(svc.Path, []byte(svc.Content), 0o755); err != nil {
		t.Fatal(err)
	}
	service := func(action string) {
		cmd := exec.Command("/bin/bash", svc.Path, action)
		cmd.Env = append(os.Environ(), r.env()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("service %s: %v %s", action, err, out)
		}
	}
	service("start")
	t.Cleanup(func() { service("stop") })
	r.waitStatus("the service's daemon online", func(s daemon.Status) bool { return s.MQTTConnected })

	var wg sync.WaitGroup
	for i := range 40 {
		if i == 15 {
			wg.Add(1)
			go func() { defer wg.Done(); service("stop") }()
		}
		ev := []string{"screensaver-start", "screensaver-stop"}[i%2]
		script := filepath.Join(r.cab.Path("/userdata/system/configs/emulationstation/scripts"), ev, "cabinet")
		wrapper := exec.Command("/bin/sh", script, "dim")
		// The rig's configuration: once the daemon is gone the wrapper runs the binary, which
		// must keep to the rig's tree, never this machine's /userdata.
		wrapper.Env = append(os.Environ(), r.env()...)
		if out, err := wrapper.CombinedOutput(); err != nil {
			t.Fatalf("wrapper %s: %v %s", ev, err, out)
		}
		<-time.After(10 * time.Millisecond) // the burst's rate
	}
	wg.Wait()
	if ents, _ := os.ReadDir(r.cab.Path("/var/run/cabinet/inbox")); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left in the inbox after the service stopped: %v", names)
	}
	// The last state wrappers set is what the broker holds, daemon or not.
	r.obs.AwaitMsg(0, r.topic("screensaver"), "OFF")
}

// TestTwentyWrappersAtOnce: 20 wrappers at once with the daemon up — a
// game's launch with a restless player — and each event is taken from the
// inbox once: one session, logged once.
func TestTwentyWrappersAtOnce(t *testing.T) {
	cabinettest.Long(t, "twenty wrappers at once")
	t.Parallel()
	r := newRig(t, startBroker(t, cabinettest.Embedded))
	d := r.startOnline()
	scripts := r.cab.Path("/userdata/system/configs/emulationstation/scripts")
	run := func(ev string, args ...string) *exec.Cmd {
		cmd := exec.Command("/bin/sh", append([]string{filepath.Join(scripts, ev, "cabinet")}, args...)...)
		cmd.Env = append(os.Environ(), r.env()...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	rom := "/userdata/roms/nes/Burst Game (USA).nes"
	cmds := []*exec.Cmd{run("game-start", strings.ReplaceAll(rom, " ", `\ `), "Burst Game (USA)", "Burst Game (USA)")}
	noise := []string{"screensaver-start", "sleep", "screensaver-stop", "wake"}
	for i := range 19 {
		cmds = append(cmds, run(noise[i%len(noise)], "dim"))
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	<-time.After(1500 * time.Millisecond) // the game runs a while
	from := r.obs.Mark()
	if err := run("game-end").Wait(); err != nil {
		t.Fatal(err)
	}
	cabinettest.Await(t, "the session published", r.obs.Changed, func() (bool, string) {
		return len(r.sessionEvents(from, "session_end")) >= 1, ""
	})

	if n := d.log.Count("inbox event taken"); n != 21 {
		t.Errorf("%d inbox events taken, want 21 (each of the 20 and the game-end once)", n)
	}
	r.waitStatus("one session logged", func(s daemon.Status) bool { return s.Sessions == 1 })
	if ends := r.sessionEvents(0, "session_end"); len(ends) != 1 || ends[0].Game != "Burst Game (USA)" {
		t.Errorf("session_end events %+v, want one of Burst Game (USA)", ends)
	}
}

// checkPublishedInOrder: the session_end events of the played games came
// in the order they were played (a QoS 1 redelivery may repeat one later).
func checkPublishedInOrder(t *testing.T, r *rig, played []string) {
	t.Helper()
	seen := map[string]bool{}
	last := ""
	for _, e := range r.sessionEvents(0, "session_end") {
		if seen[e.Game] {
			continue
		}
		seen[e.Game] = true
		if e.Game < last {
			t.Errorf("session_end of %q came after %q's: out of play order", e.Game, last)
		}
		last = e.Game
	}
	for _, g := range played {
		if !seen[g] {
			t.Errorf("no session_end for %q", g)
		}
	}
}

func (f *flow) spawnCount() int { return int(f.spawns.Load()) }

// fellBack counts the wrappers that ran the binary (it logs at debug).
func (f *flow) fellBack(r *rig) int {
	return strings.Count(readFile(filepath.Join(r.state, "cabinet.log")), `"cmd":"hook"`)
}
