package haentities

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// blueprintJSON is a YAML loader that knows HA's !input tag, printing the
// blueprint as JSON (inputs as {"!input": name}).
const blueprintJSON = `
import json, sys, yaml
class L(yaml.SafeLoader): pass
L.add_constructor("!input", lambda l, n: {"!input": l.construct_scalar(n)})
print(json.dumps(yaml.load(open(sys.argv[1]), Loader=L)))
`

// TestSmartPlugBlueprint holds the README's blueprint to what power_state
// promises: it acts on "off" only, waits at least 20 s, and cuts power only
// if the cabinet did not come back meanwhile.
func TestSmartPlugBlueprint(t *testing.T) {
	out, err := json.Marshal(parseHAYAML(t, filepath.Join(haPieces, "smart_plug_after_shutdown.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	var bp struct {
		Blueprint struct {
			Domain string `json:"domain"`
			Input  map[string]struct {
				Default  any `json:"default"`
				Selector struct {
					Number *struct {
						Min float64 `json:"min"`
					} `json:"number"`
				} `json:"selector"`
			} `json:"input"`
		} `json:"blueprint"`
		Triggers []map[string]any `json:"triggers"`
		Actions  []map[string]any `json:"actions"`
	}
	if err := json.Unmarshal(out, &bp); err != nil {
		t.Fatal(err)
	}
	if bp.Blueprint.Domain != "automation" || len(bp.Triggers) != 1 || len(bp.Actions) != 3 {
		t.Fatalf("blueprint shape: %s", out)
	}
	tr := bp.Triggers[0]
	if tr["trigger"] != "state" || tr["to"] != PowerOff {
		t.Errorf("trigger %v: want a state trigger to %q", tr, PowerOff)
	}
	margin := bp.Blueprint.Input["margin"]
	if margin.Selector.Number == nil || margin.Selector.Number.Min < 20 || margin.Default.(float64) < 20 {
		t.Errorf("margin input %+v: want a number of at least 20 s", margin)
	}
	if d, _ := json.Marshal(bp.Actions[0]); string(d) != `{"delay":{"seconds":{"!input":"margin"}}}` {
		t.Errorf("first action %s: want the margin's delay", d)
	}
	cond := bp.Actions[1]
	states, _ := cond["state"].([]any)
	if cond["condition"] != "state" || len(states) != 2 || states[0] != PowerOff || states[1] != "unavailable" {
		t.Errorf("second action %v: want a condition that the cabinet is still off or unavailable", cond)
	}
	if bp.Actions[2]["action"] != "switch.turn_off" {
		t.Errorf("last action %v: want switch.turn_off", bp.Actions[2])
	}
}

// TestHouseholdBlueprints holds the two household blueprints to what they promise a parent: a
// notification when the time is up (and, optionally, when a game is refused) whose "+15 min" and
// "+30 min" buttons press the extra-time buttons; a notice when bedtime comes during a game or a
// game is refused at bedtime. TestHomeAssistantPieces checks their inputs, states, event types and
// action ids against the catalogue.
func TestHouseholdBlueprints(t *testing.T) {
	t.Parallel() // its own python3 runs
	type trigger struct {
		Trigger   string `json:"trigger"`
		ID        string `json:"id"`
		EventType string `json:"event_type"`
		To        any    `json:"to"`
		EntityID  any    `json:"entity_id"`
	}
	type blueprint struct {
		Blueprint struct {
			Input map[string]struct {
				Default any `json:"default"`
			} `json:"input"`
		} `json:"blueprint"`
		Mode       string           `json:"mode"`
		Triggers   []trigger        `json:"triggers"`
		Conditions []map[string]any `json:"conditions"`
	}
	load := func(name string) (blueprint, string) {
		out, err := json.Marshal(parseHAYAML(t, filepath.Join(haPieces, name)))
		if err != nil {
			t.Fatal(err)
		}
		var bp blueprint
		if err := json.Unmarshal(out, &bp); err != nil {
			t.Fatal(err)
		}
		return bp, string(out)
	}
	input := func(v any) string { return fmt.Sprint(asMap(v)["!input"]) }

	bp, raw := load("play_limit_reached.yaml")
	if len(bp.Triggers) != 2 || input(bp.Triggers[0].EntityID) != "limit_event" || bp.Triggers[1].EventType != "mobile_app_notification_action" {
		t.Errorf("play_limit_reached triggers %+v: want the limit event, then the app's action event", bp.Triggers)
	}
	if bp.Mode == "single" {
		t.Errorf("play_limit_reached mode single: a tap while a notification is sent would be dropped")
	}
	cond := fmt.Sprint(bp.Conditions)
	for _, want := range []string{"kind == '" + LimitReached + "'", "kind == '" + LimitRefused + "'", "include_refused"} {
		if !strings.Contains(cond, want) {
			t.Errorf("play_limit_reached conditions %s lack %s", cond, want)
		}
	}
	if bp.Blueprint.Input["include_refused"].Default != true {
		t.Errorf("include_refused defaults to %v, want true", bp.Blueprint.Input["include_refused"].Default)
	}
	for _, title := range []string{`"title":"+15 min"`, `"title":"+30 min"`} {
		if !strings.Contains(raw, title) {
			t.Errorf("play_limit_reached's notification lacks the button %s", title)
		}
	}

	bp, _ = load("played_at_bedtime.yaml")
	if len(bp.Triggers) != 2 || input(bp.Triggers[0].EntityID) != "limit_state" || bp.Triggers[0].To != LimitBedtime ||
		input(bp.Triggers[1].EntityID) != "limit_event" {
		t.Errorf("played_at_bedtime triggers %+v: want limit_state to %s, then the limit event", bp.Triggers, LimitBedtime)
	}
	cond = fmt.Sprint(bp.Conditions)
	for _, want := range []string{"is_state(activity, '" + ActivityPlaying + "')", "kind == '" + LimitRefused + "'",
		"is_state(limit_state, '" + LimitBedtime + "')"} {
		if !strings.Contains(cond, want) {
			t.Errorf("played_at_bedtime conditions %s lack %s", cond, want)
		}
	}
}

// checkActionIDs holds an actionable notification to what answers it: a trigger on the app's
// action event; each button's id a variable made from the automation's own entity id (so two
// automations, for two cabinets or two parents, never share one), none shared; and each id
// answered by a branch that presses the extra-time button of the minutes the button offers.
func checkActionIDs(t *testing.T, doc map[string]any, inputs map[string]string, byKey map[string]Entity) {
	titles := map[string]string{} // id variable → button title
	walk(doc, func(m map[string]any) {
		for _, a := range asList(asMap(m["data"])["actions"]) {
			act := asMap(a)
			v := templateVar(act["action"])
			if v == "" {
				t.Errorf("notification button %v: want its id from a variable ({{ name }})", act)
				continue
			}
			titles[v], _ = act["title"].(string)
		}
	})
	if len(titles) == 0 {
		return
	}
	trigger := false
	for _, tr := range asList(doc["triggers"]) {
		trigger = trigger || asMap(tr)["trigger"] == "event" && asMap(tr)["event_type"] == "mobile_app_notification_action"
	}
	if !trigger {
		t.Errorf("notification buttons %v but no mobile_app_notification_action trigger", titles)
	}
	templates := map[string]string{}
	for v := range titles {
		tpl, _ := asMap(doc["variables"])[v].(string)
		if !strings.Contains(tpl, "this.entity_id") {
			t.Errorf("action id %s = %q: want it made from this.entity_id", v, tpl)
		}
		if other, ok := templates[tpl]; ok {
			t.Errorf("action ids %s and %s are the same %q", v, other, tpl)
		}
		templates[tpl] = v
	}
	answered := map[string]bool{}
	compare := regexp.MustCompile(`trigger\.event\.data\.action == (\w+)`)
	walk(doc, func(m map[string]any) {
		for _, opt := range asList(m["choose"]) {
			o := asMap(opt)
			cond, _ := json.Marshal(o["conditions"])
			c := compare.FindStringSubmatch(string(cond))
			if c == nil {
				continue
			}
			title, ok := titles[c[1]]
			if !ok {
				t.Errorf("a branch answers %s, which no notification button carries", c[1])
				continue
			}
			answered[c[1]] = true
			offered := regexp.MustCompile(`^\+(\d+) min$`).FindStringSubmatch(title)
			pressed := 0
			walk(o["sequence"], func(s map[string]any) {
				if s["action"] == "button.press" {
					name, _ := asMap(asMap(s["target"])["entity_id"])["!input"].(string)
					pressed = ExtraTimeMinutes(byKey[inputs[name]].Key)
				}
			})
			if offered == nil || strconv.Itoa(pressed) != offered[1] {
				t.Errorf("button %q (%s) presses the extra-time button of %d min", title, c[1], pressed)
			}
		}
	})
	for v, title := range titles {
		if !answered[v] {
			t.Errorf("notification button %q (%s): no branch answers it", title, v)
		}
	}
}

// templateVar is name for "{{ name }}", else "".
func templateVar(v any) string {
	s, _ := v.(string)
	if m := regexp.MustCompile(`^\{\{\s*(\w+)\s*\}\}$`).FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// TestAchievementBlueprint holds the achievements blueprint to what it promises: it fires on the
// achievement event's unlocked events only, each of its three celebrations runs only when its
// entities are given, the lights are put back as they were (a scene snapshot before the flash,
// restored after), and two unlocks in a row are both celebrated (not mode single).
// TestHomeAssistantPieces checks its input and event type against the catalogue.
func TestAchievementBlueprint(t *testing.T) {
	t.Parallel() // its own python3
	out, err := json.Marshal(parseHAYAML(t, filepath.Join(haPieces, "achievement_unlocked.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	raw := string(out)
	var bp struct {
		Blueprint struct {
			Input map[string]struct {
				Default any `json:"default"`
			} `json:"input"`
		} `json:"blueprint"`
		Mode       string           `json:"mode"`
		Triggers   []map[string]any `json:"triggers"`
		Conditions []map[string]any `json:"conditions"`
		Actions    []struct {
			Parallel []struct {
				If   []map[string]any `json:"if"`
				Then []map[string]any `json:"then"`
			} `json:"parallel"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(out, &bp); err != nil {
		t.Fatal(err)
	}
	if len(bp.Triggers) != 1 || fmt.Sprint(asMap(bp.Triggers[0]["entity_id"])["!input"]) != "achievement_event" {
		t.Fatalf("triggers %v: want the achievement event's state", bp.Triggers)
	}
	if bp.Mode == "single" {
		t.Errorf("mode single: a second unlock during the flash would be dropped")
	}
	if cond := fmt.Sprint(bp.Conditions); !strings.Contains(cond, "kind == '"+EventAchievementUnlocked+"'") || !strings.Contains(cond, "hardcore_only") {
		t.Errorf("conditions %s: want the unlocked type and the hardcore-only switch", cond)
	}
	if len(bp.Actions) != 1 || len(bp.Actions[0].Parallel) != 3 {
		t.Fatalf("actions %s: want three celebrations in parallel", raw)
	}
	var calls []string
	for _, branch := range bp.Actions[0].Parallel {
		if c := fmt.Sprint(branch.If); !strings.Contains(c, "| count > 0") {
			t.Errorf("celebration %v runs without checking its entities are given", branch.If)
		}
		for _, step := range branch.Then {
			if a, ok := step["action"].(string); ok {
				calls = append(calls, a)
			}
		}
	}
	want := []string{"scene.create", "light.turn_on", "scene.turn_on", "tts.speak", "notify.send_message"}
	if strings.Join(calls, " ") != strings.Join(want, " ") {
		t.Errorf("actions %v, want %v", calls, want)
	}
	for _, name := range []string{"lights", "tts_engine", "speakers", "notify"} {
		if d, ok := bp.Blueprint.Input[name].Default.([]any); !ok || len(d) != 0 {
			t.Errorf("input %s defaults to %v: want none, so the celebration is optional", name, bp.Blueprint.Input[name].Default)
		}
	}
	var payload map[string]any
	ev := AchievementEvent(goldenSettings(), Achievement{ID: 7, Title: "t", At: goldenNow, Game: "g", SessionID: "s"}, goldenNow)
	if err := json.Unmarshal(ev.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	for _, attr := range []string{"event_type", "title", "game", "hardcore"} {
		if !strings.Contains(raw, "trigger.to_state.attributes."+attr) {
			t.Errorf("the blueprint does not read the event's %s", attr)
		}
		if _, ok := payload[attr]; !ok {
			t.Errorf("the blueprint reads %s, which the event does not carry: %s", attr, ev.Payload)
		}
	}
}
