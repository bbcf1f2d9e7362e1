package daemon

import (
	"strings"
	"testing"
	"unicode/utf8"

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
