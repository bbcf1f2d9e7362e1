package sensors

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/power"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities"
)

func TestControlCall(t *testing.T) {
	tests := []struct {
		entity, payload string
		tool            string // "" means ignored
	}{
		{haentities.QuitGame, "PRESS", "batocera_quit_game"},
		{haentities.PauseGame, "PRESS", "batocera_pause_game"},
		{haentities.SaveState, "PRESS", "batocera_save_state"},
		{haentities.LoadState, "PRESS", "batocera_load_state"},
		{haentities.Screenshot, "PRESS", "batocera_take_screenshot"},
		{haentities.ResetGame, "PRESS", "batocera_reset_game"},
		{haentities.ShowMessage, "Dinner is ready", "batocera_show_message"},
		{haentities.PauseGame, "press", ""},
		{haentities.PauseGame, "", ""},
		{haentities.QuitGame, "PRESS\n", ""},
		{haentities.ShowMessage, "", ""},
		{haentities.ShowMessage, "two\nlines", ""},
		{haentities.ShowMessage, strings.Repeat("é", retroarch.MaxMessageRunes+1), ""},
		{haentities.ShowMessage, strings.Repeat("x", 10000), ""},
		{haentities.ShowMessage, "bad \xff utf-8", ""},
		{haentities.NowPlaying, "PRESS", ""},
		{"reboot", "PRESS", ""},
		{"", "PRESS", ""},
	}
	for _, tt := range tests {
		tool, args, err := controlCall(tt.entity, []byte(tt.payload))
		if tool != tt.tool || (err == nil) != (tt.tool != "") {
			t.Errorf("controlCall(%q, %.20q) = %q, %v; want tool %q", tt.entity, tt.payload, tool, err, tt.tool)
		}
		if tool == "batocera_show_message" && (args["text"] != tt.payload || args["target"] != "auto") {
			t.Errorf("show_message args %v", args)
		}
	}
}

// FuzzControlCall: whatever arrives on a command topic, only an exact
// "PRESS" presses a button and only one valid line of text is shown.
func FuzzControlCall(f *testing.F) {
	f.Add(haentities.PauseGame, "PRESS")
	f.Add(haentities.ShowMessage, "hello")
	f.Add(haentities.ShowMessage, "a\u2028b")
	f.Fuzz(func(t *testing.T, entity, payload string) {
		tool, args, err := controlCall(entity, []byte(payload))
		if err != nil {
			return
		}
		if entity == haentities.ShowMessage {
			text, _ := args["text"].(string)
			if retroarch.ValidateMessage(text) != nil || utf8.RuneCountInString(text) > retroarch.MaxMessageRunes {
				t.Fatalf("accepted message %q", text)
			}
			return
		}
		if payload != haentities.PayloadPress || tool != buttonTool(entity) || tool == "" {
			t.Fatalf("controlCall(%q, %q) = %q", entity, payload, tool)
		}
	})
}

// fakeTools records the tools called.
type fakeTools struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeTools) Call(_ context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, tool)
	return &mcp.CallToolResult{StructuredContent: map[string]any{"outcome": "done"}}, nil
}

// TestControls: a button becomes its tool's call while cabinet.ha.controls is on, and nothing
// while it is off; a power button while cabinet.ha.power is off is ignored; the volume slider
// goes to batocera-audio.
func TestControls(t *testing.T) {
	h := newHost(haentities.Sources{Audio: true})
	h.rules.Settings.Controls = true
	tools, audio := &fakeTools{}, &fakeAudio{}
	c := &Controls{Host: h, Clock: clock.NewFake(time.Time{}), Log: zerolog.New(zerolog.NewTestWriter(t)), Ctx: context.Background(),
		Tools:   func() ToolCaller { return tools },
		System:  &System{Host: h, Clock: clock.NewFake(time.Time{}), Log: zerolog.Nop(), Audio: audio},
		Presses: &power.Presses{}}
	set := h.Rules().Settings
	c.OnCommand(set.CommandTopic(haentities.PauseGame), []byte(haentities.PayloadPress), false)
	c.OnCommand(set.CommandTopic(haentities.PauseGame), []byte("press"), false)
	c.OnCommand(set.CommandTopic(haentities.Reboot), []byte(haentities.PayloadPress), false) // cabinet.ha.power off
	c.OnCommand(set.CommandTopic(haentities.Volume), []byte("35"), false)
	h.mu.Lock()
	h.rules.Settings.Controls = false
	h.mu.Unlock()
	c.OnCommand(set.CommandTopic(haentities.QuitGame), []byte(haentities.PayloadPress), false)
	if !slices.Equal(tools.calls, []string{"batocera_pause_game"}) {
		t.Errorf("tools called %q, want only batocera_pause_game", tools.calls)
	}
	if st, _ := audio.Get(context.Background()); st.Level != 35 {
		t.Errorf("volume %d, want 35", st.Level)
	}
}
