package retroarch

import (
	"errors"
	"testing"
)

func TestParseStatus(t *testing.T) {
	tests := []struct {
		reply string
		want  Status
		bad   bool
	}{
		{reply: "GET_STATUS PLAYING nes,stub,crc32=708c346c\n", want: Status{StatePlaying, "nes", "stub", 0x708c346c}},
		{reply: "GET_STATUS PAUSED Nestopia,stub,crc32=cb2da165\n", want: Status{StatePaused, "Nestopia", "stub", 0xcb2da165}},
		{reply: "GET_STATUS CONTENTLESS", want: Status{State: StateContentless}},
		{reply: "GET_STATUS CONTENTLESS\n", want: Status{State: StateContentless}},
		{reply: "GET_STATUS PLAYING nes,stub,crc32=708c346c", want: Status{StatePlaying, "nes", "stub", 0x708c346c}},
		{reply: "GET_STATUS PLAYING nes,stub,crc32=708c346c\n\n", want: Status{StatePlaying, "nes", "stub", 0x708c346c}},
		{reply: "GET_STATUS PLAYING super_nes,Zelda, The (USA),crc32=d\n", want: Status{StatePlaying, "super_nes", "Zelda, The (USA)", 0xd}},
		{reply: "GET_STATUS PLAYING mame,a,crc32=1,crc32=ff\n", want: Status{StatePlaying, "mame", "a,crc32=1", 0xff}},
		{reply: "GET_STATUS PLAYING nes,,crc32=0\n", want: Status{StatePlaying, "nes", "", 0}},
		{reply: "GET_STATUS PLAYING nes,big game,crc32=0\n", want: Status{StatePlaying, "nes", "big game", 0}},
		{reply: "GET_STATUS PLAYING nes,x,crc32=ABCDEF01\n", want: Status{StatePlaying, "nes", "x", 0xabcdef01}},
		{reply: "GET_STATUS PLAYING nes,x y ,crc32=1\n", want: Status{StatePlaying, "nes", "x y ", 1}},
		{reply: "GET_STATUS CONTENTLESS x", bad: true},
		{reply: "GET_STATUS RUNNING nes,x,crc32=1\n", bad: true},
		{reply: "GET_STATUS PLAYING nes\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,crc32=1\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,x,crc32=\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,x,crc32=123456789\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,x,crc32=xyz\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,x,crc32=+1\n", bad: true},
		{reply: "GET_STATUS PLAYING nes,x,crc32=1\r\n", bad: true},
		{reply: "GET_STATUS", bad: true},
		{reply: "1.14.0\n", bad: true},
		{reply: "", bad: true},
	}
	for _, tt := range tests {
		got, err := parseStatus([]byte(tt.reply))
		if tt.bad {
			if err == nil || !errors.Is(err, errBadReply) {
				t.Errorf("parseStatus(%q): got %+v, %v; want a malformed-reply error", tt.reply, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseStatus(%q): got %+v, %v; want %+v", tt.reply, got, err, tt.want)
		}
	}
}

func TestParseConfigParam(t *testing.T) {
	tests := []struct {
		reply, name, want string
		err               error
	}{
		{"GET_CONFIG_PARAM savestate_directory /tmp/ra/states", "savestate_directory", "/tmp/ra/states", nil},
		{"GET_CONFIG_PARAM savestate_directory /tmp/ra/states\n", "savestate_directory", "/tmp/ra/states", nil},
		{"GET_CONFIG_PARAM runtime_log_directory ", "runtime_log_directory", "", nil},
		{"GET_CONFIG_PARAM video_fullscreen false", "video_fullscreen", "false", nil},
		{"GET_CONFIG_PARAM log_dir /a dir/with spaces ", "log_dir", "/a dir/with spaces ", nil},
		{"GET_CONFIG_PARAM active_replay unsupported", "active_replay", "", ErrUnsupported},
		{"GET_CONFIG_PARAM active_replay 0 0 0", "active_replay", "0 0 0", nil},
		{"GET_CONFIG_PARAM log_dir /x", "savestate_directory", "", errBadReply},
		{"GET_CONFIG_PARAM log_dir", "log_dir", "", errBadReply},
		{"GET_STATUS CONTENTLESS", "log_dir", "", errBadReply},
	}
	for _, tt := range tests {
		got, err := parseConfigParam([]byte(tt.reply), tt.name)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("parseConfigParam(%q, %q): got %q, %v; want %q, %v", tt.reply, tt.name, got, err, tt.want, tt.err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		reply, want string
		bad         bool
	}{
		{reply: "1.14.0\n", want: "1.14.0"},
		{reply: "1.22.2", want: "1.22.2"},
		{reply: "1.19.1-git\n", want: "1.19.1-git"},
		{reply: "", bad: true},
		{reply: "\n", bad: true},
		{reply: "GET_STATUS CONTENTLESS", bad: true},
		{reply: "v1.14.0\n", bad: true},
		{reply: "1.14.0 extra\n", bad: true},
		{reply: "1.14.0\x00", bad: true},
		{reply: "1" + string(make([]byte, 40)), bad: true},
	}
	for _, tt := range tests {
		got, err := parseVersion([]byte(tt.reply))
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseVersion(%q): got %q, %v; want %q (error: %v)", tt.reply, got, err, tt.want, tt.bad)
		}
	}
}
