package journal

import (
	"encoding/json"
	"fmt"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal/intake"
)

// IntakePath is the daemon's intake log in the state dir (see package
// intake): events it acked and has not yet applied to the store.
func IntakePath(cfg *config.Config) string { return cfg.StatePath() + "/intake.log" }

// IntakeRecord encodes a keyed event for the intake log.
func IntakeRecord(key string, ev tracker.Event) ([]byte, error) {
	b, err := json.Marshal(Request{Op: OpEvent, Key: key, Event: &ev})
	if err != nil {
		return nil, fmt.Errorf("encode intake record: %w", err)
	}
	return b, nil
}

// AppendIntake persists a keyed event in the intake log lg.
func AppendIntake(lg *intake.Log, key string, ev tracker.Event) error {
	rec, err := IntakeRecord(key, ev)
	if err != nil {
		return err
	}
	return lg.Append(rec)
}

// FromIntake decodes intake records into keyed events, in order. A record
// that does not decode to a valid event is reported in bad and skipped: it
// came from a writer of another version, and it must not hold the rest up.
func FromIntake(recs [][]byte) (items []Spooled, bad []error) {
	for i, b := range recs {
		var req Request
		if err := json.Unmarshal(b, &req); err != nil {
			bad = append(bad, fmt.Errorf("intake record %d: %w", i, err))
			continue
		}
		if req.Op != OpEvent || req.Event == nil {
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
		items = append(items, Keyed(req.Key, ev))
	}
	return items, bad
}
