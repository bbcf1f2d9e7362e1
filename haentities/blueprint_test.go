package haentities

import (
	"encoding/json"
	"path/filepath"
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
