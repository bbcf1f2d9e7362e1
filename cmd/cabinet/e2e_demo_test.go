package main

import (
	"strings"
	"testing"

	"github.com/batocera-cabinet/cabinet/simulator/cabinettest"
)

// TestDemo runs README's first command as a newcomer would (faster): the
// evening plays to its end without an error, both long games are logged
// as sessions and the short one is not, and Home Assistant's final states
// say so.
func TestDemo(t *testing.T) {
	cabinettest.Long(t, "the whole scripted evening, about 17 s")
	code, out, errOut := runBinary(t, nil, "demo", "--once", "--speed", "4")
	if code != 0 || strings.Contains(errOut, "demo:") {
		t.Fatalf("cabinet demo: exit %d\nstderr:\n%s\nstdout:\n%s", code, errOut, lastLines(out, 30))
	}
	ends := strings.Count(out, `"event_type":"session_end"`)
	if ends != 2 || strings.Contains(out, `"event_type":"session_end","game":"Sonic`) {
		t.Errorf("session_end events = %d, want Super Mario Bros. and Street Fighter II only:\n%s", ends, lastLines(out, 60))
	}
	for _, want := range []string{"MCP over HTTP   http://127.0.0.1:", "(bearer token ", "last_session         Street Fighter II", "playing              OFF", "status               online"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, lastLines(out, 40))
		}
	}
}
