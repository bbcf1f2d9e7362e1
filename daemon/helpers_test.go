package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/simulator"
	"github.com/batocera-cabinet/cabinet/simulator/mqttbroker"
)

// logBuffer collects the daemon's JSON log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// entries returns the log lines whose message is msg, decoded.
func (l *logBuffer) entries(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(l.String(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["message"] == msg {
			out = append(out, e)
		}
	}
	return out
}

// rig is a simulated cabinet, an embedded broker and `cabinet serve` run
// in-process against them.
type rig struct {
	t        *testing.T
	cab      *simulator.Cabinet
	broker   *mqttbroker.Broker
	conf     string
	settings haentities.Settings // the topics' settings (defaults, the persisted id)
	logs     *logBuffer
}

// newRig starts the simulator and the broker and writes the config;
// before runs before the daemon starts (to leave retained messages).
func newRig(t *testing.T, extra []string, before func(*rig)) *rig {
	t.Helper()
	cab, err := simulator.Start(simulator.Options{LaunchDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cab.Close() })
	broker, err := mqttbroker.Start(mqttbroker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	conf, err := cab.WriteConfig(t.TempDir(), append([]string{"cabinet.mqtt.broker=" + broker.URL()}, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, cab: cab, broker: broker, conf: conf, logs: &logBuffer{}}
	cfg := r.load().Config
	id, err := cfg.EnsureCabinetID()
	if err != nil {
		t.Fatal(err)
	}
	r.settings = haentities.Settings{ID: id}
	if before != nil {
		before(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Load: r.load, Version: "9.9.9-test", LogOut: r.logs, WatchInterval: 200 * time.Millisecond})
	}()
	t.Cleanup(func() { // registered last: runs first, before the fakes go
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("the daemon did not stop within 15 s")
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", r.logs.String())
		}
	})
	return r
}

func (r *rig) load() *config.Loaded {
	return config.Load(config.Inputs{Environ: []string{"CABINET_CONFIG=" + r.conf}})
}

// rewriteConfig replaces a line of the config file the way
// batocera-settings-set does (a new file renamed over the old one).
func (r *rig) rewriteConfig(old, new string) {
	r.t.Helper()
	b, err := os.ReadFile(r.conf)
	if err != nil || !strings.Contains(string(b), old) {
		r.t.Fatalf("config lacks %q: %v", old, err)
	}
	tmp := filepath.Join(filepath.Dir(r.conf), ".cabinet.conf.tmp")
	if err := os.WriteFile(tmp, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Rename(tmp, r.conf); err != nil {
		r.t.Fatal(err)
	}
}

// press publishes a command the way Home Assistant does (not retained).
func (r *rig) press(entity, payload string) {
	r.t.Helper()
	r.publish(r.settings.CommandTopic(entity), payload)
}

func (r *rig) publish(topic, payload string) {
	r.t.Helper()
	if err := r.broker.Publish(topic, []byte(payload), false); err != nil {
		r.t.Fatal(err)
	}
}

// retained waits for a retained payload on topic that satisfies ok.
func (r *rig) retained(topic string, ok func(string) bool) string {
	r.t.Helper()
	var last string
	eventually(r.t, "retained "+topic, func() bool {
		b, found := r.broker.Retained(topic)
		last = string(b)
		return found && ok(last)
	})
	return last
}

// eventually waits for cond, for at most 15 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// logged waits for a log line with message msg whose fields contain want.
func (r *rig) logged(msg string, want map[string]string) map[string]any {
	r.t.Helper()
	var found map[string]any
	eventually(r.t, "log "+msg+" "+strings.Join(mapPairs(want), " "), func() bool {
		for _, e := range r.logs.entries(msg) {
			match := true
			for k, v := range want {
				s, _ := e[k].(string)
				if !strings.Contains(s, v) {
					match = false
				}
			}
			if match {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

func mapPairs(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"~"+v)
	}
	return out
}
