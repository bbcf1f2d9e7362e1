package power

import (
	"testing"
	"time"
)

func TestPresses(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	type press struct {
		a    Action
		at   time.Duration // after t0
		want bool          // confirmed
	}
	for _, tc := range []struct {
		name    string
		window  time.Duration
		presses []press
	}{
		{"one press only arms", 0, []press{{Shutdown, 0, false}}},
		{"second press within 10 s", 0, []press{{Shutdown, 0, false}, {Shutdown, 9 * time.Second, true}}},
		{"second press at 10 s exactly", 0, []press{{Reboot, 0, false}, {Reboot, 10 * time.Second, true}}},
		{"second press too late is a first press", 0, []press{
			{Shutdown, 0, false}, {Shutdown, 10*time.Second + time.Millisecond, false}, {Shutdown, 15 * time.Second, true}}},
		{"a confirmed press disarms", 0, []press{
			{Shutdown, 0, false}, {Shutdown, time.Second, true}, {Shutdown, 2 * time.Second, false}}},
		{"another action re-arms for that one", 0, []press{
			{Shutdown, 0, false}, {Reboot, time.Second, false}, {Shutdown, 2 * time.Second, false},
			{Shutdown, 3 * time.Second, true}}},
		{"the other action's window starts at its press", 0, []press{
			{Shutdown, 0, false}, {RestartES, 8 * time.Second, false}, {RestartES, 17 * time.Second, true}}},
		{"a shorter window", 2 * time.Second, []press{
			{RestartES, 0, false}, {RestartES, 3 * time.Second, false}, {RestartES, 4 * time.Second, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Presses{Window: tc.window}
			for i, pr := range tc.presses {
				if got := p.Press(pr.a, t0.Add(pr.at)); got != pr.want {
					t.Errorf("press %d (%s at +%v) confirmed %v, want %v", i+1, pr.a, pr.at, got, pr.want)
				}
			}
		})
	}
}

func TestPrompt(t *testing.T) {
	var p Presses
	for a, want := range map[Action]string{
		Shutdown:  "Press again within 10 s to shut down the cabinet",
		Reboot:    "Press again within 10 s to restart the cabinet",
		RestartES: "Press again within 10 s to restart EmulationStation",
	} {
		if got := p.Prompt(a); got != want {
			t.Errorf("Prompt(%s) = %q, want %q", a, got, want)
		}
	}
	if got := (&Presses{Window: 5 * time.Second}).Prompt(Reboot); got != "Press again within 5 s to restart the cabinet" {
		t.Errorf("Prompt with a 5 s window = %q", got)
	}
}
