package haentities

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// haPieces is where the ready-made Home Assistant pieces live.
var haPieces = filepath.Join("..", "packaging", "homeassistant")

// parseHAYAML parses a blueprint or card (HA's !input tag included) with
// PyYAML, as JSON.
func parseHAYAML(t *testing.T, file string) any {
	t.Helper()
	py, err := havePyYAML()
	if err != nil {
		if os.Getenv("CABINET_REQUIRE_PEERS") == "1" {
			t.Fatalf("python3 with PyYAML (python3-yaml) is required (CABINET_REQUIRE_PEERS=1): %v", err)
		}
		t.Skip("python3 with PyYAML not found: the Home Assistant pieces are not parsed")
	}
	out, err := exec.Command(py, "-c", blueprintJSON, file).Output()
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// havePyYAML finds python3 with PyYAML once for all the files.
var havePyYAML = sync.OnceValues(func() (string, error) {
	py, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(py, "-c", "import yaml").Run()
	}
	return py, err
})

// fullCatalogue is every entity a cabinet with everything announces, by
// the entity id HA derives for the default device name.
func fullCatalogue() map[string]Entity {
	s := goldenSettings()
	s.Name, s.Daemon, s.Controls, s.Power, s.Household, s.Achievements = "Batocera", true, true, true, true, true
	s.Has = Sources{CPUTemperature: true, Audio: true, Controllers: true, Update: true, Network: true, Host: true}
	out := map[string]Entity{}
	for _, e := range Catalogue(s) {
		out[e.Component+"."+haSlug("Batocera "+e.Name)] = e
	}
	return out
}

// haSlug is HA's slugify as it builds entity ids: lower case, every run of
// other characters one underscore.
func haSlug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// publishedAttributes are the attribute names an entity is really given,
// read from what States and the daemon's builders publish.
func publishedAttributes(t *testing.T) map[string][]string {
	s := goldenSettings()
	s.Achievements = true
	snap := Snapshot{Online: true, Playing: true, Current: goldenCurrent(), Last: goldenLast(),
		LastAchievement: Achievement{ID: 1, Title: "x", At: goldenNow, Game: "g", System: "s", SessionID: "id"}}
	msgs := States(s, snap, goldenNow)
	msgs = append(msgs, PlayTimeTodayStates(s, PlayDay{Top: []TopGame{{Game: "x", Seconds: 1}}}, goldenNow)...)
	msgs = append(msgs, ControllerStates(s, []Pad{{Name: "pad", Battery: new(int)}}, goldenNow)...)
	s.Daemon, s.Household = true, true
	msgs = append(msgs, HouseholdStates(s, goldenHousehold()[1], goldenNow)...)
	s.Controls = true
	every := PlayOutcome{Query: "mario on snes", Outcome: PlayAmbiguous, Game: "g", System: "s",
		Candidates: []PlayCandidate{{Game: "g", System: "s"}}, Reason: "r", At: goldenNow}
	msgs = append(msgs, PlayStates(s, every, goldenNow)...)
	msgs = append(msgs, PlayRequestEvent(s, every, goldenNow)...)
	byTopic := map[string]string{} // attributes topic → entity key
	for _, e := range fullCatalogue() {
		if e.Attributes {
			byTopic[s.AttributesTopic(e.Key)] = e.Key
		}
		// An event entity's attributes are its last event's payload (event_type and the rest).
		if e.Component == ComponentEvent {
			byTopic[s.StateTopic(e.Key)] = e.Key
		}
	}
	out := map[string][]string{}
	for _, m := range msgs {
		key, ok := byTopic[m.Topic]
		if !ok {
			continue
		}
		var a map[string]any
		if err := json.Unmarshal(m.Payload, &a); err != nil {
			t.Fatal(err)
		}
		out[key] = slices.Sorted(maps.Keys(a))
	}
	return out
}

// TestHomeAssistantPieces parses every blueprint and card in
// packaging/homeassistant and holds them to the catalogue: each input that
// picks one of the cabinet's entities selects its domain (and device class
// when it filters by one), each attribute a template or card row reads is
// one the entity is given, each state a trigger or condition compares is
// one of the entity's options, and the card's entity ids exist. Home
// Assistant cannot run here: this is parsing, not running them in HA.
func TestHomeAssistantPieces(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(haPieces, "*.yaml"))
	if err != nil || len(files) < 12 {
		t.Fatalf("pieces %v (%v): want the two cards and ten blueprints", files, err)
	}
	cat := fullCatalogue()
	attrs := publishedAttributes(t)
	// Which catalogue entity each blueprint input stands for.
	inputs := map[string]string{
		"activity": Activity, "now_playing": NowPlaying, "power_state": PowerState,
		"shutdown_button": Shutdown, "play_time_today": PlayTimeToday,
		"limit_event": LimitEvent, "limit_state": LimitState, "extra_time": ExtraTime, "extra_time_30": ExtraTime30,
		"achievement_event": AchievementEntity, "play_text": Play, "play_request": PlayRequest,
		"quit_game": QuitGame, "pause_game": PauseGame, "save_state": SaveState, "load_state": LoadState,
		"time_left_today": TimeLeftToday, "deny_time": DenyTime,
	}
	byKey := map[string]Entity{}
	for _, e := range cat {
		byKey[e.Key] = e
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel() // each its own python3; the maps above are only read
			doc := parseHAYAML(t, f).(map[string]any)
			raw, _ := os.ReadFile(f)
			if bp, ok := doc["blueprint"].(map[string]any); ok {
				checkBlueprint(t, bp, doc, string(raw), inputs, byKey, attrs)
				return
			}
			checkCard(t, filepath.Base(f), doc, cat, attrs)
		})
	}
}

func checkBlueprint(t *testing.T, bp, doc map[string]any, raw string, inputs map[string]string, byKey map[string]Entity, attrs map[string][]string) {
	if d := bp["domain"]; d != "automation" && d != "script" {
		t.Errorf("domain %v", d)
	}
	in, _ := bp["input"].(map[string]any)
	// Variables bound to an input: templates read the entity through them.
	vars := map[string]string{}
	for name, v := range asMap(doc["variables"]) {
		if ref, ok := asMap(v)["!input"].(string); ok {
			vars[name] = ref
		}
	}
	for name, v := range in {
		sel := asMap(asMap(v)["selector"])
		key, ours := inputs[name]
		ent := asMap(sel["entity"])
		if !ours {
			if f, ok := ent["filter"].([]any); ok {
				for _, x := range f {
					if asMap(x)["integration"] == "mqtt" {
						t.Errorf("input %s picks an MQTT entity the test does not know: add it to the table", name)
					}
				}
			}
			continue
		}
		e := byKey[key]
		filters, _ := ent["filter"].([]any)
		if len(filters) != 1 {
			t.Errorf("input %s: want one entity filter, got %v", name, sel)
			continue
		}
		fl := asMap(filters[0])
		if fl["integration"] != "mqtt" || fl["domain"] != e.Component {
			t.Errorf("input %s: filter %v, want integration mqtt and domain %s (%s)", name, fl, e.Component, key)
		}
		if dc, ok := fl["device_class"]; ok && dc != e.DeviceClass {
			t.Errorf("input %s: device class %v, but %s has %q", name, dc, key, e.DeviceClass)
		}
	}
	// No entity id is written out: entities come through !input. Descriptions name them in brackets.
	for _, m := range regexp.MustCompile(`\b(sensor|binary_sensor|button|image|number|switch|event|update|text|select)\.batocera_\w+`).FindAllString(raw, -1) {
		if !strings.Contains(raw, "("+m+" with the default name)") && !strings.Contains(raw, "("+m+")") {
			t.Errorf("hard-coded entity id %s outside a description", m)
		}
	}
	// Attributes read in templates, through a variable or the input.
	for _, m := range regexp.MustCompile(`state_attr\((\w+),\s*'(\w+)'\)`).FindAllStringSubmatch(raw, -1) {
		key := inputs[vars[m[1]]]
		if key == "" {
			t.Errorf("state_attr(%s, …): %s is not bound to a known input", m[1], m[1])
			continue
		}
		if !slices.Contains(attrs[key], m[2]) {
			t.Errorf("state_attr(%s, '%s'): %s publishes only %v", m[1], m[2], key, attrs[key])
		}
	}
	// Event types compared in templates (kind == 'reached', event_type == …) are the bound event
	// entities'; states compared with is_state are the entity's options.
	var types []string
	for name := range in {
		if e, ok := byKey[inputs[name]]; ok && e.Component == ComponentEvent {
			types = append(types, e.EventTypes...)
		}
	}
	compared := regexp.MustCompile(`\b(?:kind|event_type)\s*[!=]=\s*'(\w+)'`).FindAllStringSubmatch(raw, -1)
	if len(types) > 0 && len(compared) == 0 {
		t.Errorf("the blueprint binds an event entity but never compares its event type")
	}
	for _, m := range compared {
		if !slices.Contains(types, m[1]) {
			t.Errorf("event type %q is not one of the bound event entities' %v", m[1], types)
		}
	}
	for _, m := range regexp.MustCompile(`is_state\((\w+),\s*'(\w+)'\)`).FindAllStringSubmatch(raw, -1) {
		key := inputs[vars[m[1]]]
		if key == "" {
			t.Errorf("is_state(%s, …): %s is not bound to a known input", m[1], m[1])
			continue
		}
		if e := byKey[key]; len(e.Options) > 0 && !slices.Contains(e.Options, m[2]) {
			t.Errorf("is_state(%s, '%s'): %s has only %v", m[1], m[2], key, e.Options)
		}
	}
	checkActionIDs(t, doc, inputs, byKey)
	// States compared on our entities: triggers' to/from, state conditions.
	walk(doc, func(m map[string]any) {
		ref, ok := asMap(m["entity_id"])["!input"].(string)
		if !ok {
			return
		}
		key := inputs[ref]
		if key == "" {
			return
		}
		e := byKey[key]
		if attr, ok := m["attribute"].(string); ok && !slices.Contains(attrs[key], attr) {
			t.Errorf("trigger on %s's attribute %s, which it is not given", key, attr)
		}
		for _, field := range []string{"to", "from", "state"} {
			for _, v := range asList(m[field]) {
				s, _ := v.(string)
				if len(e.Options) > 0 && s != "unavailable" && !slices.Contains(e.Options, s) {
					t.Errorf("%s compares %s with %q, not one of %v", field, key, s, e.Options)
				}
			}
		}
	})
}

// cardWants are the rows each card must have: an entity id, or entity id#attribute for an
// attribute row.
var cardWants = map[string][]string{
	"dashboard_card.yaml": {"image.batocera_artwork", "sensor.batocera_now_playing", "sensor.batocera_activity",
		"sensor.batocera_power_state", "number.batocera_volume", "sensor.batocera_play_time_today"},
	"play_card.yaml": {"text.batocera_play", "select.batocera_favorite", "text.batocera_play#outcome",
		"text.batocera_play#game", "text.batocera_play#reason", "button.batocera_quit_game"},
}

func checkCard(t *testing.T, name string, doc map[string]any, cat map[string]Entity, attrs map[string][]string) {
	wants, ok := cardWants[name]
	if !ok {
		t.Fatalf("card %s: add the rows it must have to cardWants", name)
	}
	rows := map[string]bool{}
	walk(doc, func(m map[string]any) {
		id, ok := m["entity"].(string)
		if !ok {
			return
		}
		rows[id] = true
		e, known := cat[id]
		if !known {
			t.Errorf("the card names %s, which no cabinet announces", id)
			return
		}
		if a, ok := m["attribute"].(string); ok {
			rows[id+"#"+a] = true
			if !slices.Contains(attrs[e.Key], a) {
				t.Errorf("the card reads %s's attribute %s; it has %v", id, a, attrs[e.Key])
			}
		}
	})
	for _, want := range wants {
		if !rows[want] {
			t.Errorf("the card lacks %s (it has %v)", want, slices.Sorted(maps.Keys(rows)))
		}
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func asList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

// walk calls fn on every mapping in v.
func walk(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, y := range x {
			walk(y, fn)
		}
	case []any:
		for _, y := range x {
			walk(y, fn)
		}
	}
}
