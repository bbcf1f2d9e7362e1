package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
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

// validateCapture runs validate_discovery.py --strict --format rtp over the
// broker's capture.
func validateCapture(t *testing.T, b *testBroker) {
	t.Helper()
	cabinettest.ValidateCapture(t, string(b.Kind)+" capture", b.CaptureText())
}

// describe renders publishes for failure messages.
func describe(caps []pub) string {
	var b strings.Builder
	for _, p := range caps {
		fmt.Fprintf(&b, "  %v %s %s\n", p.Retain, p.Topic, p.Payload)
	}
	return b.String()
}
