// Package retroarch is Cabinet's client for RetroArch's UDP network command
// interface (port 55355). It can only send a fixed set of commands: hotkeys as
// typed constants, the three queries (VERSION, GET_STATUS, GET_CONFIG_PARAM of
// a fixed list of names) and SHOW_MSG with validated one-line text, so nothing
// a caller (or a model) supplies ever becomes a command. It is a leaf: standard
// library only, it returns errors and never logs.
//
// Wire facts (RetroArch 1.14, see shared/reference/retroarch-netcmd.md): one
// command per datagram, replies come back to the sending socket, hotkeys and
// unknown commands never reply, so silence is the only failure signal.
package retroarch

// Command is a RetroArch hotkey command Cabinet may send. Hotkeys never reply.
// Only the constants below are valid; anything else is refused before sending.
type Command int

// The hotkeys Cabinet's safety rules allow (mcp-tools.md, Safety).
const (
	CmdPauseToggle Command = iota + 1
	CmdSaveState
	CmdLoadState
	CmdStateSlotPlus
	CmdStateSlotMinus
	CmdScreenshot
	CmdReset
	CmdVolumeUp
	CmdVolumeDown
	CmdMute
	// CmdQuit closes the game. Prefer Client.Quit, which sends it twice so it
	// also works where quit_press_twice is on (Batocera turns it off).
	CmdQuit
)

// String returns the command's wire name, e.g. "PAUSE_TOGGLE", or "" for a
// value that is not one of the constants.
func (c Command) String() string {
	switch c {
	case CmdPauseToggle:
		return "PAUSE_TOGGLE"
	case CmdSaveState:
		return "SAVE_STATE"
	case CmdLoadState:
		return "LOAD_STATE"
	case CmdStateSlotPlus:
		return "STATE_SLOT_PLUS"
	case CmdStateSlotMinus:
		return "STATE_SLOT_MINUS"
	case CmdScreenshot:
		return "SCREENSHOT"
	case CmdReset:
		return "RESET"
	case CmdVolumeUp:
		return "VOLUME_UP"
	case CmdVolumeDown:
		return "VOLUME_DOWN"
	case CmdMute:
		return "MUTE"
	case CmdQuit:
		return "QUIT"
	}
	return ""
}

// Commands lists every allowed hotkey, in declaration order.
func Commands() []Command {
	all := make([]Command, 0, CmdQuit)
	for c := CmdPauseToggle; c <= CmdQuit; c++ {
		all = append(all, c)
	}
	return all
}

// ConfigName is a setting GET_CONFIG_PARAM can read. RetroArch (1.14 up to at
// least 1.22) answers only this fixed list; everything else is "unsupported".
type ConfigName int

// The names RetroArch's GET_CONFIG_PARAM handler knows.
const (
	ConfigVideoFullscreen ConfigName = iota + 1 // "true" or "false"
	ConfigSavefileDirectory
	ConfigSavestateDirectory
	ConfigRuntimeLogDirectory
	ConfigLogDir
	ConfigCacheDirectory
	ConfigSystemDirectory
	ConfigNetplayNickname
	// ConfigActiveReplay exists from 1.16; 1.14 answers it "unsupported".
	ConfigActiveReplay
)

// String returns the setting's wire name, e.g. "savestate_directory", or ""
// for a value that is not one of the constants.
func (n ConfigName) String() string {
	switch n {
	case ConfigVideoFullscreen:
		return "video_fullscreen"
	case ConfigSavefileDirectory:
		return "savefile_directory"
	case ConfigSavestateDirectory:
		return "savestate_directory"
	case ConfigRuntimeLogDirectory:
		return "runtime_log_directory"
	case ConfigLogDir:
		return "log_dir"
	case ConfigCacheDirectory:
		return "cache_directory"
	case ConfigSystemDirectory:
		return "system_directory"
	case ConfigNetplayNickname:
		return "netplay_nickname"
	case ConfigActiveReplay:
		return "active_replay"
	}
	return ""
}

// ConfigNames lists every readable setting, in declaration order.
func ConfigNames() []ConfigName {
	all := make([]ConfigName, 0, ConfigActiveReplay)
	for n := ConfigVideoFullscreen; n <= ConfigActiveReplay; n++ {
		all = append(all, n)
	}
	return all
}
