package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// entry is one stored message: a retained topic's latest value (keyed by
// topic) or a queued event (keyed by sequence number).
type entry struct {
	Seq       uint64
	Kind      haentities.Kind
	QoS       byte
	Retain    bool
	Delivered bool
	Created   time.Time
	Deadline  time.Time // zero: no deadline
	Topic     string
	Key       string
	Payload   []byte
}

const (
	entryVersion = 1
	headerLen    = 1 + 1 + 1 + 1 + 8 + 8 + 8 + 2 + 2
	maxTopicLen  = 1 << 12
	maxKeyLen    = 1 << 10
	maxPayload   = 1 << 20
)

var errEntry = errors.New("damaged store entry")

// encode lays an entry out as: version, kind, qos, flags, seq, created,
// deadline (unix ns), topic length, key length, topic, key, payload.
func (e entry) encode() []byte {
	b := make([]byte, headerLen, headerLen+len(e.Topic)+len(e.Key)+len(e.Payload))
	b[0] = entryVersion
	b[1] = byte(e.Kind)
	b[2] = e.QoS
	if e.Retain {
		b[3] |= 1
	}
	if e.Delivered {
		b[3] |= 2
	}
	binary.BigEndian.PutUint64(b[4:], e.Seq)
	binary.BigEndian.PutUint64(b[12:], uint64(unixNano(e.Created)))
	binary.BigEndian.PutUint64(b[20:], uint64(unixNano(e.Deadline)))
	binary.BigEndian.PutUint16(b[28:], uint16(len(e.Topic)))
	binary.BigEndian.PutUint16(b[30:], uint16(len(e.Key)))
	b = append(b, e.Topic...)
	b = append(b, e.Key...)
	return append(b, e.Payload...)
}

// decodeEntry is the inverse of encode; anything malformed is an error,
// never a panic (the store is an external input after a crash).
func decodeEntry(b []byte) (entry, error) {
	if len(b) < headerLen || b[0] != entryVersion {
		return entry{}, errEntry
	}
	e := entry{
		Kind:      haentities.Kind(b[1]),
		QoS:       b[2],
		Retain:    b[3]&1 != 0,
		Delivered: b[3]&2 != 0,
		Seq:       binary.BigEndian.Uint64(b[4:]),
		Created:   fromUnixNano(int64(binary.BigEndian.Uint64(b[12:]))),
		Deadline:  fromUnixNano(int64(binary.BigEndian.Uint64(b[20:]))),
	}
	tl := int(binary.BigEndian.Uint16(b[28:]))
	kl := int(binary.BigEndian.Uint16(b[30:]))
	rest := b[headerLen:]
	if e.Kind < haentities.KindDiscovery || e.Kind > haentities.KindTimeSensitive || e.QoS > 2 ||
		b[3]&^3 != 0 || tl > maxTopicLen || kl > maxKeyLen || tl+kl > len(rest) || len(rest)-tl-kl > maxPayload {
		return entry{}, errEntry
	}
	e.Topic = string(rest[:tl])
	e.Key = string(rest[tl : tl+kl])
	e.Payload = append([]byte(nil), rest[tl+kl:]...)
	return e, nil
}

func fromMessage(m haentities.Message) (entry, error) {
	if m.Topic == "" || len(m.Topic) > maxTopicLen || len(m.Key) > maxKeyLen || len(m.Payload) > maxPayload {
		return entry{}, fmt.Errorf("record %s message for %q: topic, key or payload out of bounds", m.Kind, clip(m.Topic))
	}
	if m.Kind < haentities.KindDiscovery || m.Kind > haentities.KindTimeSensitive {
		return entry{}, fmt.Errorf("record message for %q: unknown kind %d", clip(m.Topic), m.Kind)
	}
	return entry{Kind: m.Kind, QoS: m.QoS, Retain: m.Retain, Created: m.Created, Topic: m.Topic, Key: m.Key, Payload: m.Payload}, nil
}

func (e entry) message() haentities.Message {
	return haentities.Message{Topic: e.Topic, Payload: e.Payload, QoS: e.QoS, Retain: e.Retain, Kind: e.Kind, Key: e.Key, Created: e.Created}
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func seqKey(seq uint64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, seq)
	return k
}

func getUint(b *bolt.Bucket, k []byte) uint64 {
	v := b.Get(k)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

func getUintBytes(v []byte) uint64 { return binary.BigEndian.Uint64(v) }

func putUint(b *bolt.Bucket, k []byte, v uint64) error { return b.Put(k, seqKey(v)) }

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
