package sensors

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

// TestPowerAtStop is the state a clean stop publishes: off only during a
// shutdown (ES's event, or the flag ES leaves for Batocera's shutdown).
func TestPowerAtStop(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "shutdown.please")
	tests := []struct {
		name, state string
		flag        bool
		want        string
	}{
		{"running: an upgrade or batocera-services stop", haentities.PowerRunning, false, haentities.PowerStopped},
		{"the end of a reboot", haentities.PowerRebooting, false, haentities.PowerStopped},
		{"ES restarting", haentities.PowerRestartingES, false, haentities.PowerStopped},
		{"a shutdown ES announced", haentities.PowerShuttingDown, false, haentities.PowerOff},
		{"a shutdown whose events were missed", haentities.PowerRunning, true, haentities.PowerOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(flag)
			if tt.flag {
				if err := os.WriteFile(flag, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := &PowerState{Host: newHost(haentities.Sources{}), Clock: clock.NewFake(time.Time{}), Log: zerolog.Nop()}
			p.Set(tt.state)
			if got := p.AtStop(flag); got != tt.want {
				t.Errorf("AtStop = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPowerFollow: ES's events move the power state (a plain quit does not undo a reboot under
// way; an event of another boot moves nothing) and each change is published once.
func TestPowerFollow(t *testing.T) {
	h := newHost(haentities.Sources{})
	p := &PowerState{Host: h, Clock: clock.NewFake(time.Time{}), Log: zerolog.Nop()}
	topic := h.Rules().Settings.StateTopic(haentities.PowerState)
	p.Set(haentities.PowerRunning)
	p.Set(haentities.PowerRunning)
	for _, ev := range []tracker.Event{
		{Kind: tracker.KindQuit, BootID: "b1"},
		{Kind: tracker.KindStart, BootID: "b1"},
		{Kind: tracker.KindQuit, Arg: "reboot", BootID: "b1"},
		{Kind: tracker.KindQuit, BootID: "b1"},
		{Kind: tracker.KindShutdown, BootID: "b0"},
	} {
		p.Follow(ev, "b1")
	}
	want := []string{haentities.PowerRunning, haentities.PowerRestartingES, haentities.PowerRunning, haentities.PowerRebooting}
	if got := h.payloads(topic); !slices.Equal(got, want) {
		t.Errorf("power states %q, want %q", got, want)
	}
}
