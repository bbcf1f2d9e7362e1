package argv

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/hook/tracker"
)

var st = tracker.Stamp{At: time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC), Boot: 90 * time.Second, BootID: "b1"}

func TestParse(t *testing.T) {
	tests := []struct {
		args []string
		want tracker.Event
	}{
		{[]string{"game-start", `/userdata/roms/nes/Super\ Mario\ Bros.\ \(World\).nes`, "Super Mario Bros. (World)", "Super Mario Bros. (World)"},
			tracker.Event{Kind: tracker.KindGameStart, Path: "/userdata/roms/nes/Super Mario Bros. (World).nes", Stem: "Super Mario Bros. (World)", Name: "Super Mario Bros. (World)"}},
		{[]string{"game-start", `/userdata/roms/nes/Tom\'s\ $Game.nes`, "Tom's ", "Tom's "},
			tracker.Event{Kind: tracker.KindGameStart, Path: "/userdata/roms/nes/Tom's $Game.nes", Stem: "Tom's ", Name: "Tom's "}},
		{[]string{"game-end"}, tracker.Event{Kind: tracker.KindGameEnd}},
		{[]string{"game-selected", "snes", "/userdata/roms/snes/a b.sfc", "A B"},
			tracker.Event{Kind: tracker.KindGameSelected, System: "snes", Path: "/userdata/roms/snes/a b.sfc", Name: "A B"}},
		{[]string{"screensaver-start", "random video"}, tracker.Event{Kind: tracker.KindScreensaverStart, Arg: "random video"}},
		{[]string{"quit", "reboot"}, tracker.Event{Kind: tracker.KindQuit, Arg: "reboot"}},
		{[]string{"quit"}, tracker.Event{Kind: tracker.KindQuit}},
		{[]string{"sleep"}, tracker.Event{Kind: tracker.KindSleep}},
		{[]string{"--source", "configgen", "gameStart", "nes", "libretro", "nestopia", "/userdata/roms/nes/Mario_(USA).nes"},
			tracker.Event{Kind: tracker.KindGameStart, Source: tracker.SourceConfiggen, System: "nes", Emulator: "libretro", Core: "nestopia", Path: "/userdata/roms/nes/Mario_(USA).nes"}},
		{[]string{"--source=configgen", "gameStop", "gamecube", "dolphin", "", "/userdata/roms/gamecube/x.iso"},
			tracker.Event{Kind: tracker.KindGameEnd, Source: tracker.SourceConfiggen, System: "gamecube", Emulator: "dolphin", Path: "/userdata/roms/gamecube/x.iso"}},
		{[]string{"game-start", "/p/\xff\xfe.nes", "\xff", "x"},
			tracker.Event{Kind: tracker.KindGameStart, Path: "/p/\uFFFD.nes", Stem: "\uFFFD", Name: "x"}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.args, st)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.args, err)
			continue
		}
		want := tt.want
		want.At, want.Boot, want.BootID = st.At, st.Boot, st.BootID
		if want.Source == "" {
			want.Source = tracker.SourceES
		}
		if got != want {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", tt.args, got, want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("Parse(%q) gave an invalid event: %v", tt.args, err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no event name"},
		{[]string{"--source"}, "--source needs a value"},
		{[]string{"--source", "cron", "start"}, "want es or configgen"},
		{[]string{"frobnicate"}, "unknown event"},
		{[]string{"quit", "now"}, "want no argument, reboot or shutdown"},
		{[]string{"--source", "configgen", "gameRestart"}, "want gameStart or gameStop"},
		{[]string{"game-start", strings.Repeat("x", maxArgBytes+1)}, "bytes"},
		{strings.Fields("a b c d e f g h i"), "at most 8"},
	}
	for _, tt := range tests {
		if _, err := Parse(tt.args, st); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := Parse([]string{"config-changed"}, st); !errors.Is(err, ErrIgnored) {
		t.Errorf("config-changed = %v, want ErrIgnored", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("game-start", `/userdata/roms/nes/A\ \(b\).nes`, "A (b)", "A (b)")
	f.Add("--source", "configgen", "gameStart", "nes")
	f.Add("quit", "reboot", "", "")
	f.Add("achievements", "12", "Say \"Hi\"\n", "\xff")
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		ev, err := Parse([]string{a, b, c, d}, st)
		if err != nil {
			return
		}
		if verr := ev.Validate(); verr != nil {
			t.Fatalf("Parse(%q %q %q %q) accepted an event the tracker refuses: %v", a, b, c, d, verr)
		}
	})
}
