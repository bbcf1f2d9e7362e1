package haentities

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSaveProblemHostileText: whatever RomM, a file name or an error message holds, every text of
// the event is one clean line within its cap, and the event stays small enough for HA's recorder.
func TestSaveProblemHostileText(t *testing.T) {
	huge := strings.Repeat("x", 10<<10)
	wide := strings.Repeat("\U0001F47E", 10<<10) // 4 bytes each
	hostile := []string{
		"\x00\x01\x1b[31mred\x1b[0m\x7f\u0085",
		"\u202eevil\u202c \u2066isolate\u2069 \u200f\u061c",
		"zero\u200bwidth\ufeff\u2060joiner\u200d",
		"tag\U000E0041\U000E007F chars",
		"bad \xff\xfe utf8",
		"line\nbreak\r\ntab\tend  ",
		huge,
		wide,
		"\u202e" + huge + "\x00",
	}
	s := daemonSettings()
	for i, h := range hostile {
		p := SaveProblem{Kind: SaveProblemConflict, Game: h, System: h, ROM: "/userdata/roms/snes/" + h + ".sfc", Slot: h, Detail: h, Todo: h}
		m := SaveProblemMessage(s, p, goldenNow)
		if !utf8.Valid(m.Payload) {
			t.Fatalf("%d: invalid UTF-8", i)
		}
		if len(m.Payload) >= 16<<10 {
			t.Errorf("%d: %d bytes, more than HA's recorder keeps", i, len(m.Payload))
		}
		if len(m.Key) > 1<<10 {
			t.Errorf("%d: key of %d bytes", i, len(m.Key))
		}
		var got map[string]*string
		if err := json.Unmarshal(m.Payload, &got); err != nil {
			t.Fatalf("%d: %v\n%s", i, err, m.Payload)
		}
		caps := map[string]int{"game": MaxStateRunes, "system": MaxStateRunes, "slot": MaxStateRunes,
			"rom": maxAttributeRunes, "detail": maxAttributeRunes, "todo": maxAttributeRunes}
		for k, limit := range caps {
			v := got[k]
			if v == nil {
				t.Errorf("%d: %s is null", i, k)
				continue
			}
			if n := utf8.RuneCountInString(*v); n > limit {
				t.Errorf("%d: %s has %d characters, cap %d", i, k, n, limit)
			}
			if strings.ContainsAny(*v, "\x00\x01\x1b\x7f\u0085\n\r\t\u202e\u202c\u2066\u2069\u200f\u061c\u200b\ufeff\u2060\u200d\U000E0041") ||
				strings.Contains(*v, "  ") || *v != strings.TrimSpace(*v) {
				t.Errorf("%d: %s keeps a control, invisible or extra space character: %q", i, k, *v)
			}
		}
		if got["event_type"] == nil || *got["event_type"] != SaveProblemConflict {
			t.Errorf("%d: event_type %v", i, got["event_type"])
		}
	}
	// The hostile last error of the sensor is capped as a state would be.
	for _, h := range hostile {
		m := SaveSyncStates(s, SaveSyncState{State: SaveSyncError, LastError: h}, goldenNow)[1]
		var a struct {
			LastError *string `json:"last_error"`
		}
		if err := json.Unmarshal(m.Payload, &a); err != nil || a.LastError == nil {
			t.Fatalf("attributes %s: %v", m.Payload, err)
		}
		if n := utf8.RuneCountInString(*a.LastError); n > MaxStateRunes || strings.ContainsAny(*a.LastError, "\x00\x1b\n\u202e\u200b") {
			t.Errorf("last_error %q (%d characters)", *a.LastError, n)
		}
	}
}

// FuzzSaveProblem: whatever text a save problem carries, the event is a JSON object with a known
// event type, and every text is clean and within its cap.
func FuzzSaveProblem(f *testing.F) {
	f.Add("conflict", "Super Mario World", "/userdata/roms/snes/smw.sfc", "changed on both sides")
	f.Add("error", "\u202eevil\x00\xff", "", "\u200b")
	f.Add("", strings.Repeat("ア", 300), "a\"b\\c\n", strings.Repeat("why ", 400))
	f.Fuzz(func(t *testing.T, kind, game, rom, detail string) {
		s := daemonSettings()
		m := SaveProblemMessage(s, SaveProblem{Kind: kind, Game: game, System: game, ROM: rom, Slot: detail, Detail: detail, Todo: rom}, goldenNow)
		if m.Retain || !utf8.Valid(m.Payload) || len(m.Key) > 1<<10 {
			t.Fatalf("retain %v, key %q, payload %q", m.Retain, m.Key, m.Payload)
		}
		var got map[string]*string
		if err := json.Unmarshal(m.Payload, &got); err != nil {
			t.Fatalf("not a JSON object: %v\n%s", err, m.Payload)
		}
		if et := got["event_type"]; et == nil || !slices.Contains(SaveSyncEntities()[1].EventTypes, *et) {
			t.Fatalf("event_type %v", et)
		}
		for k, v := range got {
			if v == nil {
				continue
			}
			if utf8.RuneCountInString(*v) > maxAttributeRunes || strings.ContainsAny(*v, "\n\r\t\x00\u202e\u200b") {
				t.Fatalf("%s = %q", k, *v)
			}
		}
		st := SaveSyncStates(s, SaveSyncState{State: kind, LastError: detail}, goldenNow)
		if p := string(st[0].Payload); p != NoneState && !slices.Contains(SaveSyncEntities()[0].Options, p) {
			t.Fatalf("state %q", p)
		}
	})
}
