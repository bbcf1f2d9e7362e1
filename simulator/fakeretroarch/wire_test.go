package fakeretroarch

import (
	"strings"
	"testing"
)

func TestRepliesMatchRetroArch114(t *testing.T) {
	s := &Server{SavestateDir: "/x/states", SavefileDir: "/x/saves", SystemDir: "/x/bios", LogDir: "/x/logs"}
	r := dialRaw(t, loaded(t, s, Content{SystemID: "nes", Basename: "Zelda, The (USA)", CRC32: 0x0badf00d & 0xfff}))
	tests := []struct {
		name string
		send string
		want []string // replies in order; then nothing more
	}{
		{"version", "VERSION", []string{"1.14.0\n"}},
		{"version ignores its argument", "VERSION foo", []string{"1.14.0\n"}},
		{"status, crc not padded", "GET_STATUS", []string{"GET_STATUS PLAYING nes,Zelda, The (USA),crc32=d\n"}},
		{"config dir", "GET_CONFIG_PARAM savestate_directory", []string{"GET_CONFIG_PARAM savestate_directory /x/states"}},
		{"config empty value", "GET_CONFIG_PARAM cache_directory", []string{"GET_CONFIG_PARAM cache_directory "}},
		{"config fullscreen", "GET_CONFIG_PARAM video_fullscreen", []string{"GET_CONFIG_PARAM video_fullscreen false"}},
		{"config netplay nickname (1.14 knows it)", "GET_CONFIG_PARAM netplay_nickname", []string{"GET_CONFIG_PARAM netplay_nickname "}},
		{"config active_replay is 1.16+", "GET_CONFIG_PARAM active_replay", []string{"GET_CONFIG_PARAM active_replay unsupported"}},
		{"config screenshot dir unsupported", "GET_CONFIG_PARAM screenshot_directory", []string{"GET_CONFIG_PARAM screenshot_directory unsupported"}},
		{"config with extra words", "GET_CONFIG_PARAM savestate_directory extra", []string{"GET_CONFIG_PARAM savestate_directory extra unsupported"}},
		{"config empty name", "GET_CONFIG_PARAM ", []string{"GET_CONFIG_PARAM  unsupported"}},
		{"stale argument from the previous datagram", "GET_CONFIG_PARAM", []string{"GET_CONFIG_PARAM  unsupported"}},
		{"argument-less takes the next command as argument", "GET_CONFIG_PARAM\nVERSION", []string{"GET_CONFIG_PARAM VERSION unsupported", "1.14.0\n"}},
		{"several commands, each answered", "VERSION\nGET_STATUS\nREAD_CORE_RAM 10 1", []string{"1.14.0\n", "GET_STATUS PLAYING nes,Zelda, The (USA),crc32=d\n"}},
		{"empty commands skipped", "\n\nVERSION\n\n", []string{"1.14.0\n"}},
		{"hotkey applies after the datagram", "PAUSE_TOGGLE\nGET_STATUS", []string{"GET_STATUS PLAYING nes,Zelda, The (USA),crc32=d\n"}},
		{"then it is paused", "GET_STATUS", []string{"GET_STATUS PAUSED nes,Zelda, The (USA),crc32=d\n"}},
		{"a hotkey twice in one datagram is one press", "PAUSE_TOGGLE\nPAUSE_TOGGLE\nVERSION", []string{"1.14.0\n"}},
		{"so it is playing again", "GET_STATUS", []string{"GET_STATUS PLAYING nes,Zelda, The (USA),crc32=d\n"}},
		{"lower case is unknown", "version", nil},
		{"suffix is unknown", "VERSIONX", nil},
		{"hotkeys need an exact match", "PAUSE_TOGGLE ", nil},
		{"carriage return is not stripped", "GET_STATUS\r", nil},
		{"1.15 command", "LOAD_STATE_SLOT 1", nil},
		{"docs spelling", "SHOW_MESG hi", nil},
		{"show message", "SHOW_MSG hello world", nil},
		{"nul ends the datagram", "VERSION\x00\nGET_STATUS", []string{"1.14.0\n"}},
	}
	for _, tt := range tests {
		r.send(tt.send)
		for i, want := range tt.want {
			if got := r.mustRead(); got != want {
				t.Fatalf("%s: %q reply %d: got %q, want %q", tt.name, tt.send, i, got, want)
			}
		}
		r.expectSilence("") // nothing more came back
	}
	snap := s.Snapshot()
	if got, want := snap.Messages, []string{"hello world"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages: got %q, want %q", got, want)
	}
	if !contains(snap.Unrecognized, "version") || !contains(snap.Unrecognized, "PAUSE_TOGGLE ") {
		t.Errorf("unrecognized: got %q, want version and \"PAUSE_TOGGLE \" among them", snap.Unrecognized)
	}
}

func TestStaleArgumentQuirk(t *testing.T) {
	s := &Server{LogDir: "/root/.config/retroarch/logs"}
	r := dialRaw(t, loaded(t, s, stub))
	r.send("GET_CONFIG_PARAM log_dir")
	r.mustRead()
	r.send("GET_CONFIG_PARAM")
	if got, want := r.mustRead(), "GET_CONFIG_PARAM log_dir /root/.config/retroarch/logs"; got != want {
		t.Errorf("argument-less GET_CONFIG_PARAM after one with log_dir: got %q, want %q", got, want)
	}
	r.send("SHOW_MSG stale text")
	r.send("SHOW_MSG")
	r.expectSilence("")
	if got := s.Snapshot().Messages; len(got) != 2 || got[1] != "stale text" {
		t.Errorf("empty SHOW_MSG: got messages %q, want the stale %q shown again", got, "stale text")
	}
}

func TestLongDatagramIsCut(t *testing.T) {
	s := &Server{}
	r := dialRaw(t, loaded(t, s, stub))
	long := "SHOW_MSG " + strings.Repeat("a", 3000)
	r.send(long)
	r.expectSilence("")
	msgs := s.Snapshot().Messages
	if len(msgs) != 1 || len(msgs[0]) != rxSize-1-len("SHOW_MSG ") {
		t.Fatalf("got %d messages (first %d bytes), want one cut to %d bytes", len(msgs), lenFirst(msgs), rxSize-1-len("SHOW_MSG "))
	}
}

func lenFirst(v []string) int {
	if len(v) == 0 {
		return 0
	}
	return len(v[0])
}

func TestContentless(t *testing.T) {
	s := &Server{SavestateDir: t.TempDir()}
	if err := s.LoadContentless(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Unload)
	r := dialRaw(t, s.Addr())
	r.send("GET_STATUS")
	if got, want := r.mustRead(), "GET_STATUS CONTENTLESS"; got != want {
		t.Errorf("GET_STATUS: got %q, want %q", got, want)
	}
	r.send("QUIT\nSAVE_STATE\nPAUSE_TOGGLE\nVOLUME_UP")
	r.expectSilence("")
	snap := s.Snapshot()
	if !snap.Listening || snap.Paused || snap.StatesSaved != 0 || snap.VolumeDB != 0.5 {
		t.Errorf("contentless after QUIT, SAVE_STATE, PAUSE_TOGGLE, VOLUME_UP: got listening=%v paused=%v saved=%d volume=%v, want true false 0 0.5",
			snap.Listening, snap.Paused, snap.StatesSaved, snap.VolumeDB)
	}
}
