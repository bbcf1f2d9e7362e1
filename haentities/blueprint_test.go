package haentities

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
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

// TestTimeRequestedBlueprint holds the time_requested blueprint to what it promises a parent: it runs
// on the limit event's time_requested events only, and sends a mobile_app device a notification
// naming who asks and for how long, with "Approve 15", "Approve 30" and "Deny" whose ids are the
// run's own (made from context.id); it waits for the app's answer with a timeout, after which it
// withdraws the notification (same tag) and presses nothing; each answer presses its button (the
// extra-time button of the minutes approved, or deny_time); and a request made while a run waits is
// not dropped (not mode single). TestHomeAssistantPieces checks it against the catalogue too.
func TestTimeRequestedBlueprint(t *testing.T) {
	t.Parallel() // its own python3
	doc := parseHAYAML(t, filepath.Join(haPieces, "time_requested.yaml")).(map[string]any)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	raw := string(out)
	type filters struct {
		Filter []map[string]any `json:"filter"`
	}
	var bp struct {
		Blueprint struct {
			Domain string `json:"domain"`
			Input  map[string]struct {
				Default  any `json:"default"`
				Selector struct {
					Entity *filters `json:"entity"`
					Device *filters `json:"device"`
				} `json:"selector"`
			} `json:"input"`
		} `json:"blueprint"`
		Mode       string           `json:"mode"`
		Max        int              `json:"max"`
		Triggers   []map[string]any `json:"triggers"`
		Conditions []map[string]any `json:"conditions"`
		Actions    []map[string]any `json:"actions"`
	}
	if err := json.Unmarshal(out, &bp); err != nil {
		t.Fatal(err)
	}
	if bp.Blueprint.Domain != "automation" {
		t.Errorf("domain %q, want automation", bp.Blueprint.Domain)
	}
	catalogue := map[string]Entity{}
	for _, e := range HouseholdEntities() {
		catalogue[e.Key] = e
	}
	// The inputs that pick the cabinet's entities, by catalogue key.
	ours := map[string]string{"limit_event": LimitEvent, ExtraTime: ExtraTime, ExtraTime30: ExtraTime30, DenyTime: DenyTime}
	for name, key := range ours {
		in, ok := bp.Blueprint.Input[name]
		if !ok || in.Selector.Entity == nil {
			t.Errorf("input %s: missing, or not an entity selector", name)
			continue
		}
		got, _ := json.Marshal(in.Selector.Entity.Filter)
		want, _ := json.Marshal([]map[string]any{{"integration": "mqtt", "domain": catalogue[key].Component}})
		if string(got) != string(want) {
			t.Errorf("input %s: filter %s, want %s (%s)", name, got, want, key)
		}
	}
	phone := bp.Blueprint.Input["notify_device"].Selector.Device
	if got, _ := json.Marshal(phone); phone == nil || string(got) != `{"filter":[{"integration":"mobile_app"}]}` {
		t.Errorf("input notify_device: selector %s, want a device of integration mobile_app", got)
	}
	if d := bp.Blueprint.Input["timeout"].Default; d != 30.0 {
		t.Errorf("input timeout defaults to %v, want 30 (minutes)", d)
	}

	if len(bp.Triggers) != 1 {
		t.Fatalf("triggers %v: want the limit event's state only", bp.Triggers)
	}
	tr := bp.Triggers[0]
	notFrom, notTo := fmt.Sprint(tr["not_from"]), fmt.Sprint(tr["not_to"])
	if tr["trigger"] != "state" || templateInput(tr["entity_id"]) != "limit_event" || notFrom != "[unavailable]" || notTo != "[unavailable unknown]" {
		t.Errorf("trigger %v: want a state trigger on limit_event, not from unavailable nor to unavailable or unknown", tr)
	}
	want := "trigger.to_state.attributes.event_type == '" + LimitTimeRequested + "'"
	if cond := fmt.Sprint(bp.Conditions); !strings.Contains(cond, want) {
		t.Errorf("conditions %s lack %s", cond, want)
	}
	if !slices.Contains(catalogue[LimitEvent].EventTypes, LimitTimeRequested) {
		t.Errorf("%s is not one of %s's event types %v", LimitTimeRequested, LimitEvent, catalogue[LimitEvent].EventTypes)
	}
	// What the blueprint reads of the event is in its payload.
	var payload map[string]any
	ev := LimitEventMessage(goldenSettings(), LimitTimeRequested, "", "Ask for 15 more minutes", "alice", 15, goldenNow, goldenNow)
	if err := json.Unmarshal(ev.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`trigger\.to_state\.attributes\.(\w+)`).FindAllStringSubmatch(raw, -1) {
		read[m[1]] = true
		if _, ok := payload[m[1]]; !ok {
			t.Errorf("the blueprint reads %s, which the event does not carry: %s", m[1], ev.Payload)
		}
	}
	for _, attr := range []string{"event_type", "profile", "minutes"} {
		if !read[attr] {
			t.Errorf("the blueprint does not read the event's %s", attr)
		}
	}
	if bp.Mode == "" || bp.Mode == "single" || bp.Max < 2 {
		t.Errorf("mode %q max %d: want queued or parallel with a max, so a request made while a run waits is not dropped", bp.Mode, bp.Max)
	}

	steps := map[string]int{} // kind of step → its index in actions
	for i, a := range bp.Actions {
		for _, kind := range []string{"variables", "wait_for_trigger", "choose"} {
			if _, ok := a[kind]; ok {
				steps[kind] = i
			}
		}
		if a["domain"] == "mobile_app" && a["type"] == "notify" {
			steps["notify"] = i
		}
	}
	order := []string{"variables", "notify", "wait_for_trigger", "choose"}
	for i, kind := range order {
		if j, ok := steps[kind]; !ok || i > 0 && j <= steps[order[i-1]] {
			t.Fatalf("actions %v: want %v in that order", bp.Actions, order)
		}
	}

	ids := asMap(bp.Actions[steps["variables"]]["variables"]) // id variable → template
	notify := bp.Actions[steps["notify"]]
	if templateInput(notify["device_id"]) != "notify_device" {
		t.Errorf("notification sent to %v, want !input notify_device", notify["device_id"])
	}
	tag := templateVar(asMap(notify["data"])["tag"])
	if tag == "" {
		t.Errorf("notification data %v: want a tag from a variable, so a newer request replaces it", notify["data"])
	}
	titles := map[string]string{} // id variable → button title
	for _, a := range asList(asMap(notify["data"])["actions"]) {
		v, title := templateVar(asMap(a)["action"]), fmt.Sprint(asMap(a)["title"])
		titles[v] = title
		if tpl, _ := ids[v].(string); !strings.Contains(tpl, "context.id") {
			t.Errorf("button %q: id %s = %q, want it made from context.id in the first action", title, v, tpl)
		}
	}
	if got := slices.Sorted(maps.Values(titles)); fmt.Sprint(got) != "[Approve 15 Approve 30 Deny]" {
		t.Errorf("notification buttons %v, want Approve 15, Approve 30 and Deny", got)
	}
	// The message says who asks and for how long: it uses the variables that read profile and minutes.
	msg := regexp.MustCompile(`'[^']*'`).ReplaceAllString(fmt.Sprint(notify["message"]), "''")
	for _, attr := range []string{"profile", "minutes"} {
		used := false
		for v, tpl := range asMap(doc["variables"]) {
			reads := strings.Contains(fmt.Sprint(tpl), "trigger.to_state.attributes."+attr)
			used = used || reads && regexp.MustCompile(`\b`+v+`\b`).MatchString(msg)
		}
		if !used {
			t.Errorf("message %q: want the event's %s in it", notify["message"], attr)
		}
	}

	wait := bp.Actions[steps["wait_for_trigger"]]
	waited := map[string]bool{}
	for _, tr := range asList(wait["wait_for_trigger"]) {
		m := asMap(tr)
		if m["trigger"] != "event" || m["event_type"] != "mobile_app_notification_action" {
			t.Errorf("wait trigger %v: want the app's mobile_app_notification_action event", m)
		}
		waited[templateVar(asMap(m["event_data"])["action"])] = true
	}
	for v, title := range titles {
		if !waited[v] {
			t.Errorf("button %q (%s): the wait does not trigger on its id", title, v)
		}
	}
	if len(waited) != len(titles) {
		t.Errorf("the wait triggers on %v, the buttons are %v", waited, titles)
	}
	if templateInput(asMap(wait["timeout"])["minutes"]) != "timeout" || wait["continue_on_timeout"] != true {
		t.Errorf("wait timeout %v continue_on_timeout %v: want the timeout input's minutes, and to go on", wait["timeout"], wait["continue_on_timeout"])
	}

	choose := bp.Actions[steps["choose"]]
	if _, ok := choose["default"]; ok {
		t.Errorf("choose has a default: an unanswered request must press nothing")
	}
	answer := regexp.MustCompile(`wait\.trigger\.event\.data\.action == (\w+)`)
	answered, timedOut := map[string]bool{}, false
	for _, opt := range asList(choose["choose"]) {
		o := asMap(opt)
		cond, _ := json.Marshal(o["conditions"])
		seq := asList(o["sequence"])
		if strings.Contains(string(cond), "wait.trigger is none") {
			timedOut = true
			var step map[string]any
			if len(seq) > 0 {
				step = asMap(seq[0])
			}
			if len(seq) != 1 || step["message"] != "clear_notification" || step["domain"] != "mobile_app" ||
				templateInput(step["device_id"]) != "notify_device" || templateVar(asMap(step["data"])["tag"]) != tag {
				t.Errorf("on timeout %v: want only the notification cleared (clear_notification, tag %s)", seq, tag)
			}
			continue
		}
		c := answer.FindStringSubmatch(string(cond))
		if c == nil {
			t.Errorf("branch %s answers no button", cond)
			continue
		}
		answered[c[1]] = true
		pressed := ""
		if len(seq) == 1 && asMap(seq[0])["action"] == "button.press" {
			pressed = ours[templateInput(asMap(asMap(seq[0])["target"])["entity_id"])]
		}
		if !buttonPresses(titles[c[1]], pressed) {
			t.Errorf("button %q (%s) presses %q (%d min)", titles[c[1]], c[1], pressed, ExtraTimeMinutes(pressed))
		}
	}
	if !timedOut {
		t.Errorf("no branch for the timeout (wait.trigger is none)")
	}
	for v, title := range titles {
		if !answered[v] {
			t.Errorf("button %q (%s): no branch answers it", title, v)
		}
	}
	if n := strings.Count(raw, `"action":"button.press"`); n != len(titles) {
		t.Errorf("%d button presses, want one per notification button (%d)", n, len(titles))
	}
}

// templateInput is name for an !input name, else "".
func templateInput(v any) string { s, _ := asMap(v)["!input"].(string); return s }

// checkActionIDs holds an actionable notification to what answers it: a trigger on the app's
// action event (the automation's own, or a wait_for_trigger's); each button's id a variable made from
// the automation's own entity id or the run's context id (so two automations, for two cabinets or two
// parents, or two runs never share one), none shared; and each id answered by a branch that presses
// the button its title names: "+N min" or "Approve N" the extra-time button of N minutes, "Deny" the
// deny button.
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
	appAction := func(tr any) bool {
		return asMap(tr)["trigger"] == "event" && asMap(tr)["event_type"] == "mobile_app_notification_action"
	}
	for _, tr := range asList(doc["triggers"]) {
		trigger = trigger || appAction(tr)
	}
	vars := map[string]any{} // the automation's variables and those of its variables actions
	walk(doc, func(m map[string]any) {
		for _, tr := range asList(m["wait_for_trigger"]) {
			trigger = trigger || appAction(tr)
		}
		maps.Copy(vars, asMap(m["variables"]))
	})
	if !trigger {
		t.Errorf("notification buttons %v but no mobile_app_notification_action trigger", titles)
	}
	templates := map[string]string{}
	for v := range titles {
		tpl, _ := vars[v].(string)
		if !strings.Contains(tpl, "this.entity_id") && !strings.Contains(tpl, "context.id") {
			t.Errorf("action id %s = %q: want it made from this.entity_id or context.id", v, tpl)
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
			pressed := "" // the catalogue key of the button the branch presses
			walk(o["sequence"], func(s map[string]any) {
				if s["action"] == "button.press" {
					name, _ := asMap(asMap(s["target"])["entity_id"])["!input"].(string)
					pressed = byKey[inputs[name]].Key
				}
			})
			if !buttonPresses(title, pressed) {
				t.Errorf("button %q (%s) presses %q (%d min)", title, c[1], pressed, ExtraTimeMinutes(pressed))
			}
		}
	})
	for v, title := range titles {
		if !answered[v] {
			t.Errorf("notification button %q (%s): no branch answers it", title, v)
		}
	}
}

// buttonPresses says whether a notification button titled title should press the cabinet's button
// key: "+N min" and "Approve N" the extra-time button of N minutes, "Deny" the deny button.
func buttonPresses(title, key string) bool {
	if title == "Deny" {
		return key == DenyTime
	}
	m := regexp.MustCompile(`^(?:\+(\d+) min|Approve (\d+))$`).FindStringSubmatch(title)
	return m != nil && strconv.Itoa(ExtraTimeMinutes(key)) == m[1]+m[2]
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
