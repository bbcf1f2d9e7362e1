package haentities

import (
	"bytes"
	"encoding/json"
	"time"
)

// Kind tells the outbox how a message must be delivered.
type Kind uint8

const (
	// KindDiscovery is a retained discovery config (or an empty payload that clears one).
	KindDiscovery Kind = iota + 1
	// KindState is a retained state or attributes payload: only the latest value per topic matters.
	KindState
	// KindAvailability is the retained online/offline payload: only the latest value matters.
	KindAvailability
	// KindSessionEnd is a logged session: delivered exactly once, in order, however late (Key is the
	// session id, for consumers that dedupe a QoS 1 redelivery).
	KindSessionEnd
	// KindTimeSensitive is an event that is dropped when it cannot be delivered within a short window
	// (session_start, cabinet start/wake/sleep/quit/reboot/shutdown): a late one would run automations
	// at the wrong time.
	KindTimeSensitive
)

// String names the kind for logs.
func (k Kind) String() string {
	switch k {
	case KindDiscovery:
		return "discovery"
	case KindState:
		return "state"
	case KindAvailability:
		return "availability"
	case KindSessionEnd:
		return "session_end"
	case KindTimeSensitive:
		return "time_sensitive"
	}
	return "unknown"
}

// Retained reports whether messages of this kind are retained on the broker.
func (k Kind) Retained() bool { return k == KindDiscovery || k == KindState || k == KindAvailability }

// Message is one MQTT publish with what the outbox needs to deliver it.
type Message struct {
	Topic   string
	Payload []byte
	QoS     byte
	Retain  bool
	Kind    Kind
	Key     string    // dedupe key: session id (KindSessionEnd) or event key (KindTimeSensitive); else ""
	Created time.Time // when the message was built; the outbox measures lateness from it
}

// marshal encodes v as compact JSON without HTML escaping (names such as "Tom & Jerry" stay
// readable in a capture; HA accepts both forms).
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own structs of strings, numbers and slices are encoded here.
		panic("haentities: encoding a payload: " + err.Error())
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func retained(topic string, payload []byte, kind Kind, at time.Time) Message {
	return Message{Topic: topic, Payload: payload, QoS: 1, Retain: true, Kind: kind, Created: at}
}

func event(topic string, payload []byte, kind Kind, key string, at time.Time) Message {
	return Message{Topic: topic, Payload: payload, QoS: 1, Retain: false, Kind: kind, Key: key, Created: at}
}

// formatTime is RFC 3339 with the offset the time carries, to the second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}
