package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/cabinettest"
)

// pub is one publish seen by the capture.
type pub struct {
	Retain  bool
	Topic   string
	Payload string
}

// parseCapture reads "RETAIN TOPIC PAYLOAD" lines, leaving out the test's
// own e2e/ topics.
func parseCapture(text []byte) []pub {
	var out []pub
	for _, line := range strings.Split(string(text), "\n") {
		r, rest, ok := strings.Cut(line, " ")
		if !ok || (r != "0" && r != "1") {
			continue
		}
		topic, payload, _ := strings.Cut(rest, " ")
		if strings.HasPrefix(topic, "e2e/") {
			continue
		}
		out = append(out, pub{Retain: r == "1", Topic: topic, Payload: payload})
	}
	return out
}

// event is one non-retained event payload (game_session or cabinet).
type event struct {
	EventType string `json:"event_type"`
	Game      string `json:"game"`
	System    string `json:"system"`
	Rom       string `json:"rom"`
	Source    string `json:"source"`
	Started   string `json:"started"`
	Ended     string `json:"ended"`
	DurationS *int64 `json:"duration_s"`
	SessionID string `json:"session_id"`
	At        string `json:"at"`
	raw       string
}

// events returns the non-retained events published on topic, in order.
func events(caps []pub, topic string) []event {
	var out []event
	for _, p := range caps {
		if p.Retain || p.Topic != topic {
			continue
		}
		var e event
		if err := json.Unmarshal([]byte(p.Payload), &e); err != nil {
			e.EventType = "UNPARSABLE"
		}
		e.raw = p.Payload
		out = append(out, e)
	}
	return out
}

// ofType keeps the events of one event_type.
func ofType(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.EventType == typ {
			out = append(out, e)
		}
	}
	return out
}

// types lists the event types, for messages.
func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.EventType
	}
	return out
}

// validatorPath is the strict HA discovery validator kept beside the
// haentities goldens.
func validatorPath(t *testing.T) string {
	t.Helper()
	root, err := cabinettest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "haentities", "testdata", "validate_discovery.py")
}

// validateCapture runs validate_discovery.py --strict --format rtp over the
// capture and fails the test with its report unless it exits 0.
func validateCapture(t *testing.T, b *testBroker) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for validate_discovery.py: %v", err)
	}
	text := b.CaptureText()
	if !bytes.Contains(text, []byte("homeassistant/")) {
		t.Fatalf("capture holds no discovery config:\n%s", text)
	}
	f := filepath.Join(cabinettest.TempDir(t, "validate"), "capture.txt")
	if err := os.WriteFile(f, text, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, validatorPath(t), "--strict", "--format", "rtp", f).CombinedOutput()
	if err != nil {
		t.Fatalf("validate_discovery.py --strict --format rtp (%s capture, %d lines): %v\n%s", b.Kind, bytes.Count(text, []byte("\n")), err, out)
	}
	t.Logf("validate_discovery.py: %s", lastLine(out))
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// describe renders publishes for failure messages.
func describe(caps []pub) string {
	var b strings.Builder
	for _, p := range caps {
		fmt.Fprintf(&b, "  %v %s %s\n", p.Retain, p.Topic, p.Payload)
	}
	return b.String()
}
