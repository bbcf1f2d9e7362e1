package fakeretroarch

import (
	"bytes"
	"fmt"
	"net"
	"strings"
)

// rxSize is RetroArch's receive buffer: it reads at most rxSize-1 bytes of a
// datagram (the rest is lost) and NUL-terminates them.
const rxSize = 2048

// actions are the 1.14 commands with handlers. They match by prefix followed
// by a space or the end of the command, and take everything after the space.
var actions = [...]string{
	"VERSION", "GET_STATUS", "GET_CONFIG_PARAM", "SHOW_MSG", "SET_SHADER",
	"READ_CORE_RAM", "WRITE_CORE_RAM", "READ_CORE_MEMORY", "WRITE_CORE_MEMORY",
}

// isHotkey reports the 1.14 hotkey commands (exact match, never a reply).
// Checked against the real binary: NETPLAY_FLIP and MOVIE_RECORD_TOGGLE, and
// the replay, PREEMPT, TURBO_FIRE, SHADER_HOLD and VIDEO_FILTER commands of
// later versions, are unrecognized. A switch, not a map, so nothing is built
// at package init.
func isHotkey(tok string) bool {
	switch tok {
	case "MENU_TOGGLE", "QUIT", "CLOSE_CONTENT", "RESET", "FAST_FORWARD",
		"FAST_FORWARD_HOLD", "SLOWMOTION", "SLOWMOTION_HOLD", "REWIND",
		"PAUSE_TOGGLE", "FRAMEADVANCE", "MUTE", "VOLUME_UP", "VOLUME_DOWN",
		"LOAD_STATE", "SAVE_STATE", "STATE_SLOT_PLUS", "STATE_SLOT_MINUS",
		"DISK_EJECT_TOGGLE", "DISK_NEXT", "DISK_PREV", "SHADER_TOGGLE",
		"SHADER_NEXT", "SHADER_PREV", "CHEAT_TOGGLE", "CHEAT_INDEX_PLUS",
		"CHEAT_INDEX_MINUS", "SCREENSHOT", "RECORDING_TOGGLE",
		"STREAMING_TOGGLE", "GRAB_MOUSE_TOGGLE", "GAME_FOCUS_TOGGLE",
		"FULLSCREEN_TOGGLE", "UI_COMPANION_TOGGLE", "VRR_RUNLOOP_TOGGLE",
		"RUNAHEAD_TOGGLE", "FPS_TOGGLE", "STATISTICS_TOGGLE", "AI_SERVICE",
		"NETPLAY_PING_TOGGLE", "NETPLAY_HOST_TOGGLE", "NETPLAY_GAME_WATCH",
		"NETPLAY_PLAYER_CHAT", "NETPLAY_FADE_CHAT_TOGGLE", "MENU_UP",
		"MENU_DOWN", "MENU_LEFT", "MENU_RIGHT", "MENU_A", "MENU_B",
		"OVERLAY_NEXT", "OSK":
		return true
	}
	return false
}

// handle processes one datagram the way RetroArch 1.14 does: copied into the
// persistent receive buffer, split on "\n" like strtok_r (empty commands
// skipped, each command answered by its own datagram), queries answered at
// once, hotkeys applied after the whole datagram as on the next frame (a
// hotkey twice in one datagram is one press, and a GET_STATUS after
// PAUSE_TOGGLE in the same datagram still sees the old state).
func (s *Server) handle(ln *listener, pkt []byte, from net.Addr) {
	s.mu.Lock()
	if s.ln != ln {
		s.mu.Unlock()
		return // unloaded while this datagram waited
	}
	quit := s.processLocked(pkt, func(reply string) { _, _ = ln.conn.WriteTo([]byte(reply), from) })
	var closing *listener
	if quit {
		s.loaded = false
		closing = s.detachLocked()
	}
	s.notifyLocked()
	onQuit := s.OnQuit
	s.mu.Unlock()
	if closing != nil && onQuit != nil {
		// Not closing.shutdown(): this goroutine is the one it would wait for.
		go onQuit()
	}
}

// processLocked runs the commands of one datagram, passing each reply to
// reply, and reports whether QUIT closed the game.
func (s *Server) processLocked(pkt []byte, reply func(string)) (quit bool) {
	n := copy(s.rx[:rxSize-1], pkt)
	s.rx[n] = 0
	var pressed []string
	for pos := 0; ; {
		for s.rx[pos] == '\n' {
			pos++
		}
		if s.rx[pos] == 0 {
			break
		}
		start := pos
		for s.rx[pos] != 0 && s.rx[pos] != '\n' {
			pos++
		}
		end := pos
		if s.rx[pos] == '\n' {
			s.rx[pos] = 0
			pos++
		}
		tok := string(s.rx[start:end])
		if isHotkey(tok) {
			s.rec.add(&s.rec.commands, tok)
			if !contains(pressed, tok) {
				pressed = append(pressed, tok)
			}
			continue
		}
		r, ok := s.actionLocked(tok, start)
		if !ok {
			s.rec.add(&s.rec.unrecognized, tok)
			continue
		}
		if r != "" {
			reply(r)
		}
	}
	return s.pressLocked(pressed)
}

// actionLocked runs an action command and returns its reply ("" for none).
// ok is false when tok is not a recognized command.
func (s *Server) actionLocked(tok string, start int) (reply string, ok bool) {
	for _, name := range actions {
		if !strings.HasPrefix(tok, name) {
			continue
		}
		next := start + len(name)
		if c := s.rx[next]; c != ' ' && c != 0 {
			return "", false
		}
		// The argument starts one byte past the name even when there is none:
		// 1.14 then reads stale bytes of earlier datagrams (the NUL-terminated
		// string after the command's terminator).
		arg := cString(s.rx[min(next+1, rxSize):])
		s.rec.add(&s.rec.commands, tok)
		return s.answerLocked(name, arg), true
	}
	return "", false
}

func (s *Server) answerLocked(name, arg string) string {
	switch name {
	case "VERSION":
		return Version + "\n"
	case "GET_STATUS":
		if s.st.contentless {
			return "GET_STATUS CONTENTLESS"
		}
		word := "PLAYING"
		if s.st.paused {
			word = "PAUSED"
		}
		c := s.st.content
		return fmt.Sprintf("GET_STATUS %s %s,%s,crc32=%x\n", word, c.SystemID, c.Basename, c.CRC32)
	case "GET_CONFIG_PARAM":
		return "GET_CONFIG_PARAM " + arg + " " + s.configValue(arg)
	case "SHOW_MSG":
		s.rec.add(&s.rec.messages, arg)
		s.rec.messagesShown++
	}
	// SET_SHADER and the core memory commands are recognized but not
	// emulated: Cabinet never sends them. The real ones reply to READ_*.
	return ""
}

// configValue is GET_CONFIG_PARAM's fixed list as 1.14 has it (netplay_nickname
// yes, active_replay not yet).
func (s *Server) configValue(name string) string {
	switch name {
	case "video_fullscreen":
		if s.VideoFullscreen {
			return "true"
		}
		return "false"
	case "savefile_directory":
		return s.SavefileDir
	case "savestate_directory":
		return s.SavestateDir
	case "runtime_log_directory":
		return s.RuntimeLogDir
	case "log_dir":
		return s.LogDir
	case "cache_directory":
		return s.CacheDir
	case "system_directory":
		return s.SystemDir
	case "netplay_nickname":
		return s.NetplayNickname
	}
	return "unsupported"
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
