package events

import (
	"net/url"
	"strings"
)

// The data of each kind, as JSON on the stream (the field names are the
// contract: README documents them, the marquee page reads them). Text comes
// from ES's game lists and RetroAchievements: publishers clean it
// (haentities/untrusted); the page only ever sets it as text. Times are RFC
// 3339; At is when the event was published, so a client can tell the
// replayed last event of a kind from a new one.

// Selection is the data of a selection event: what is under ES's cursor,
// once it settles. A system (the carousel) has System and no Game.
type Selection struct {
	Game       string `json:"game,omitempty"`
	System     string `json:"system"`                // roms folder: "nes"
	SystemName string `json:"system_name,omitempty"` // "Nintendo Entertainment System"
	Rom        string `json:"rom,omitempty"`
	// Image is the marquee's address on the cabinet (ImageURL), "" when
	// there is none.
	Image string `json:"image,omitempty"`
	At    string `json:"at"`
}

// NowPlaying is the data of a now_playing event: the game running, or
// Playing false when none is.
type NowPlaying struct {
	Playing    bool   `json:"playing"`
	Game       string `json:"game,omitempty"`
	System     string `json:"system,omitempty"`
	SystemName string `json:"system_name,omitempty"`
	Rom        string `json:"rom,omitempty"`
	Started    string `json:"started,omitempty"`
	SessionID  string `json:"session_id,omitempty"`
	Image      string `json:"image,omitempty"`
	At         string `json:"at"`
}

// Session is the data of a session event, as Home Assistant's
// event.batocera_game_session has it: Type session_start or session_end
// (only logged sessions end: not the short ones nor screensaver launches).
type Session struct {
	Type      string `json:"type"`
	Game      string `json:"game"`
	System    string `json:"system,omitempty"`
	Rom       string `json:"rom,omitempty"`
	Started   string `json:"started,omitempty"`
	Ended     string `json:"ended,omitempty"`
	DurationS *int64 `json:"duration_s,omitempty"`
	SessionID string `json:"session_id"`
	At        string `json:"at"`
}

// Achievement is the data of an achievement event (event.batocera_achievement's
// attributes: Batocera passes no points).
type Achievement struct {
	ID          uint32 `json:"id"` // RetroAchievements' id of the achievement
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Hardcore    bool   `json:"hardcore"`
	Game        string `json:"game,omitempty"`
	System      string `json:"system,omitempty"`
	SessionID   string `json:"session_id,omitempty"`
	At          string `json:"at"`
}

// ImagePath is where the marquee picture is served.
const ImagePath = "/marquee/image"

// maxKey bounds a picture key.
const maxKey = 160

// ValidKey says whether key can name a picture: 1 to 160 of
// A-Z a-z 0-9 . _ + - and /, no empty, "." or ".." segment. The daemon's
// keys are "<system>/<ES game id>".
func ValidKey(key string) bool {
	if key == "" || len(key) > maxKey {
		return false
	}
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune("._+-/", r):
		default:
			return false
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// ImageURL is the address of key's picture on the cabinet, the Image of
// a Selection or NowPlaying: a path on the page's own origin, which the page
// fetches with its token. "" for a key ValidKey refuses.
func ImageURL(key string) string {
	if !ValidKey(key) {
		return ""
	}
	return ImagePath + "?" + url.Values{"game": {key}}.Encode()
}
