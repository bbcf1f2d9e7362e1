package journal

import (
	"encoding/json"
	"fmt"

	"github.com/batocera-cabinet/cabinet/hook/socket"
)

// IntakeRecord encodes a keyed event for the intake log: the socket's own
// event request, so a record reads like what the hook sent.
func IntakeRecord(k Keyed) ([]byte, error) {
	ev := k.Event
	b, err := json.Marshal(socket.Request{Op: socket.OpEvent, Key: k.Key, Event: &ev})
	if err != nil {
		return nil, fmt.Errorf("encode intake record: %w", err)
	}
	return b, nil
}

// AppendIntake persists a keyed event in the intake log lg.
func AppendIntake(lg *IntakeLog, k Keyed) error {
	rec, err := IntakeRecord(k)
	if err != nil {
		return err
	}
	return lg.Append(rec)
}

// FromIntake decodes intake records into keyed events, in order. A record
// that does not decode to a valid event is reported in bad and skipped: it
// came from a writer of another version, and it must not hold the rest up.
func FromIntake(recs [][]byte) (items []Keyed, bad []error) {
	for i, b := range recs {
		var req socket.Request
		if err := json.Unmarshal(b, &req); err != nil {
			bad = append(bad, fmt.Errorf("intake record %d: %w", i, err))
			continue
		}
		if req.Op != socket.OpEvent || req.Event == nil {
			bad = append(bad, fmt.Errorf("intake record %d: not a keyed event", i))
			continue
		}
		if err := CheckKey(req.Key); err != nil {
			bad = append(bad, fmt.Errorf("intake record %d: %w", i, err))
			continue
		}
		ev := req.Event.Normalize()
		if err := ev.Validate(); err != nil {
			bad = append(bad, fmt.Errorf("intake record %d: %w", i, err))
			continue
		}
		items = append(items, Keyed{Key: req.Key, Event: ev})
	}
	return items, bad
}
