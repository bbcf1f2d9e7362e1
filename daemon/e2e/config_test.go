package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// TestConfigEditedLive: the config file is replaced by rename (as
// batocera-settings-set and ES do) while the daemon runs. A wrong broker is
// followed without a restart — `offline` said to the old broker, the link
// reported down — and so is the way back. An invalid edit is refused: the
// last good configuration stays in force (still connected), the log and
// the status say why, and `cabinet doctor` names the bad key.
func TestConfigEditedLive(t *testing.T) {
	cabinettest.EachBroker(t, func(t *testing.T, kind cabinettest.Kind) {
		r := newRig(t, startBroker(t, kind))
		d := r.startOnline()
		good := r.broker.URL()
		wrong := "tcp://" + cabinettest.ClosedAddr(t, "tcp")

		from := r.obs.Mark()
		r.rewriteConfig("cabinet.mqtt.broker", wrong)
		d.waitLogCount("configuration change applied", 1, 10*time.Second)
		st := r.waitStatus("MQTT disconnected with a reason", func(s daemon.Status) bool {
			return !s.MQTTConnected && s.MQTTError != "" && s.ConfigError == ""
		})
		t.Logf("%s: wrong broker: status mqtt_error %q", kind, st.MQTTError)
		r.obs.AwaitMsg(from, r.status(), "offline")

		from = r.obs.Mark()
		r.rewriteConfig("cabinet.mqtt.broker", good)
		d.waitLogCount("configuration change applied", 2, 10*time.Second)
		r.waitStatus("MQTT connected again", func(s daemon.Status) bool { return s.MQTTConnected && s.MQTTError == "" })
		r.obs.AwaitMsg(from, r.status(), "online")

		from = r.obs.Mark()
		r.rewriteConfig("cabinet.mqtt.broker", "not a broker url")
		d.waitLog("configuration change refused", 10*time.Second)
		st = r.waitStatus("the config error reported", func(s daemon.Status) bool { return s.ConfigError != "" })
		if !strings.Contains(st.ConfigError, "cabinet.mqtt.broker") || !st.MQTTConnected {
			t.Errorf("after an invalid edit: status %+v; want connected still, and an error naming cabinet.mqtt.broker", st)
		}
		if doc := r.doctorCheck("config"); doc.Status != "fail" || !strings.Contains(doc.Detail, "cabinet.mqtt.broker") {
			t.Errorf("cabinet doctor's config check = %+v, want fail naming cabinet.mqtt.broker", doc)
		}
		// The last good configuration stays: a hook's state still reaches
		// the good broker through the daemon.
		r.hook("screensaver-start", "black")
		r.obs.AwaitMsg(from, r.topic("screensaver"), "ON")
		// A late copy of the reconnection's "online" may still arrive
		// (the announce repeats it; the embedded broker records a message
		// after its PUBACK): only a change is wrong.
		for _, m := range r.obs.Since(from) {
			if m.Topic == r.status() && m.Payload != "online" {
				t.Errorf("availability changed to %q after an invalid edit", m.Payload)
			}
		}

		r.rewriteConfig("cabinet.mqtt.broker", good)
		r.waitStatus("the config error cleared", func(s daemon.Status) bool { return s.ConfigError == "" && s.MQTTConnected })
		if st, _ := r.daemonStatus(); st.PID != d.pid() || !d.running() {
			t.Errorf("the daemon was restarted (pid %d, first %d): changes must apply live", st.PID, d.pid())
		}
	})
}

// rewriteConfig sets key=value in the config file the way
// batocera-settings-set does: a new file renamed over the old one.
func (r *rig) rewriteConfig(key, value string) {
	r.t.Helper()
	b, err := os.ReadFile(r.conf)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, key+"=") {
			out = append(out, l)
		}
	}
	out = append(out, key+"="+value)
	tmp := filepath.Join(filepath.Dir(r.conf), ".cabinet.conf.tmp")
	if err := os.WriteFile(tmp, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, r.conf); err != nil {
		r.t.Fatal(err)
	}
}

// doctorCheck runs `cabinet doctor --json` and returns one check.
func (r *rig) doctorCheck(name string) doctorResult {
	r.t.Helper()
	out, _, _ := runCabinet(r.t, r.env(), "doctor", "--json")
	var rep struct {
		Checks []doctorResult `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		r.t.Fatalf("cabinet doctor --json: %v\n%s", err, out)
	}
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	r.t.Fatalf("cabinet doctor has no %q check:\n%s", name, out)
	return doctorResult{}
}

type doctorResult struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Detail string   `json:"detail"`
	Facts  []string `json:"facts"`
}
