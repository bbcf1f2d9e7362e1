package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestCleanStop: SIGTERM makes the daemon say goodbye: `offline` retained on
// the availability topic, activity `off`, exit 0, the store closed (another
// process can open it at once), the socket removed and the pid file
// emptied.
func TestCleanStop(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		d := r.startOnline()
		from := r.obs.Mark()
		r.hook("game-start", "/userdata/roms/nes/Stop.nes", "Stop", "Stop Test")
		r.obs.AwaitMsg(from, r.topic("activity"), "playing")

		from = r.obs.Mark()
		if code := d.term(); code != 0 {
			t.Errorf("cabinet serve exit code after SIGTERM = %d, want 0", code)
		}
		r.obs.AwaitMsg(from, r.status(), "offline")
		r.obs.AwaitMsg(from, r.topic("activity"), "off")
		ret := r.obs.Retained()
		for topic, want := range map[string]string{r.status(): "offline", r.topic("activity"): "off"} {
			if got := ret[topic]; got != want {
				t.Errorf("retained %s = %q after a clean stop, want %q", topic, got, want)
			}
		}
		if d.log.Count("cabinet serve stopped") != 1 {
			t.Errorf("no \"cabinet serve stopped\" line in the log")
		}
		if _, err := os.Stat(r.sock); !os.IsNotExist(err) {
			t.Errorf("socket %s still there after a clean stop (stat: %v)", r.sock, err)
		}
		if b, _ := os.ReadFile(filepath.Join(filepath.Dir(r.sock), "serve.pid")); len(strings.TrimSpace(string(b))) != 0 {
			t.Errorf("serve.pid still names %q after a clean stop", b)
		}
		// Closed: a short lock wait is enough (a hook waits 60 ms).
		s, err := store.Open(filepath.Join(r.state, "cabinet.db"), store.Options{LockTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("store still owned after a clean stop: %v", err)
		}
		s.Close()
	})
}

// TestSecondServeRefused: while a daemon runs, a second `cabinet serve`
// exits non-zero at once with a message that names the running one and says
// what to do, and leaves the first one's socket and state alone.
func TestSecondServeRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	d := r.start()
	out, code, _ := runCabinet(t, r.env(), "serve", "--log-stderr")
	if code == 0 {
		t.Fatalf("second cabinet serve exited 0, want non-zero; output:\n%s", out)
	}
	for _, want := range []string{"another cabinet serve is already running", "pid " + strconv.Itoa(d.pid()), "stop it first"} {
		if !strings.Contains(out, want) {
			t.Errorf("second cabinet serve said %q; want it to contain %q", out, want)
		}
	}
	st, err := r.daemonStatus()
	if err != nil {
		t.Fatalf("the first daemon no longer answers on its socket after the refused start: %v", err)
	}
	if st.PID != d.pid() {
		t.Errorf("the socket answers for pid %d, want the first daemon %d", st.PID, d.pid())
	}
	if !d.running() {
		t.Fatalf("the first daemon exited")
	}
	if code := d.term(); code != 0 {
		t.Errorf("first daemon exit code %d after SIGTERM", code)
	}
	// Once it is gone, a new one starts.
	r.start()
}
