package haentities

import (
	"encoding/json"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Keys of the selection feed's entities and topic (design/ha-entities.md: what is under ES's
// cursor, debounced; issue 29). A contract with users' HA configurations: never rename one. The
// names in SelectedEntities are chosen so HA derives exactly sensor.batocera_selected_game,
// sensor.batocera_selected_system and image.batocera_selected_marquee with the default device
// name.
const (
	SelectedGame    = "selected_game"    // sensor: the game's name, None when a system is selected
	SelectedSystem  = "selected_system"  // sensor: the system's full name
	SelectedMarquee = "selected_marquee" // image: ES's marquee (logo), else wheel, else box art or image
	// SelectedTopic is the <entity> part of batocera/<id>/selected: the same selection as plain
	// JSON (SelectedJSON), retained, for consumers other than Home Assistant. No entity uses it.
	SelectedTopic = "selected"
)

// SelectedEntities is the catalogue of the selection feed's entities, in publishing order. The
// daemon alone announces them (the wrappers hand selections over only to a running daemon).
func SelectedEntities() []Entity {
	return []Entity{
		{Key: SelectedGame, Component: ComponentSensor, Name: "Selected game", Icon: "mdi:cursor-default-click", Attributes: true},
		{Key: SelectedSystem, Component: ComponentSensor, Name: "Selected system", Icon: "mdi:view-carousel", Attributes: true},
		{Key: SelectedMarquee, Component: ComponentImage, Name: "Selected marquee", Image: true, NoState: true},
	}
}

// Selected is what the selection feed shows: the game or system under ES's cursor, the
// screensaver's game, or the running game. Every text comes from ES (argv, game lists,
// scraped metadata) and is cleaned when published.
type Selected struct {
	System     string // ES's system name ("nes")
	SystemName string // its full name ("Nintendo Entertainment System"); "" when unknown
	Game       string // the game's name; "" when a system (not a game) is selected
	ROM        string // the ROM path
	GameID     string // ES's game id (md5 of the path)
	Details    GameDetails
	Image      string    // the picture file shown as the marquee; "" when none
	Source     string    // es (the cursor), screensaver, playing (the running game)
	At         time.Time // when the selection settled
}

// selectedJSON is the payload of batocera/<id>/selected and its decoding: keys without a value
// are left out ({} when nothing is selected).
type selectedJSON struct {
	Game       string `json:"game,omitempty"`
	System     string `json:"system,omitempty"`
	SystemName string `json:"system_name,omitempty"`
	ROM        string `json:"rom,omitempty"`
	GameID     string `json:"game_id,omitempty"`
	Genre      string `json:"genre,omitempty"`
	Year       int    `json:"year,omitempty"`
	Players    string `json:"players,omitempty"`
	Image      string `json:"image,omitempty"`
	Source     string `json:"source,omitempty"`
	At         string `json:"at,omitempty"`
}

// selectedGameAttrs are selected_game's attributes: the game's, absent when unknown.
type selectedGameAttrs struct {
	System  string `json:"system,omitempty"`
	ROM     string `json:"rom,omitempty"`
	GameID  string `json:"game_id,omitempty"`
	Genre   string `json:"genre,omitempty"`
	Year    int    `json:"year,omitempty"`
	Players string `json:"players,omitempty"`
	Image   string `json:"image,omitempty"`
	Source  string `json:"source,omitempty"`
}

type selectedSystemAttrs struct {
	System string `json:"system,omitempty"`
	Source string `json:"source,omitempty"`
}

// cleanSelected is sel as published: cleaned, bounded, the game's fields empty when no game
// is selected.
func cleanSelected(sel Selected) selectedJSON {
	j := selectedJSON{System: clean(sel.System), SystemName: clean(sel.SystemName), Source: clean(sel.Source),
		At: formatTime(sel.At)}
	if sel.Game == "" && sel.ROM == "" {
		return j
	}
	j.Game = gameName(Session{Game: sel.Game, Rom: sel.ROM})
	j.ROM, j.GameID, j.Image = cleanAttr(sel.ROM), untrusted.Clean(sel.GameID, 64), cleanAttr(sel.Image)
	a := newGameAttrs(Session{Details: sel.Details})
	j.Genre, j.Year, j.Players = a.Genre, a.Year, a.Players
	return j
}

// SelectedStates are the retained states of the selection feed, when s announces it (nil
// otherwise): selected_game (the game's name, None when none is) and its attributes,
// selected_system (the full name, else the short one, else None) and its attributes, and the
// same selection as JSON on batocera/<id>/selected. The zero Selected is "nothing selected".
func SelectedStates(s Settings, sel Selected, at time.Time) []Message {
	if !s.announces(SelectedGame) {
		return nil
	}
	j := cleanSelected(sel)
	game, gameAttrs := NoneState, selectedGameAttrs{}
	if j.Game != "" {
		game = j.Game
		gameAttrs = selectedGameAttrs{System: j.System, ROM: j.ROM, GameID: j.GameID, Genre: j.Genre, Year: j.Year,
			Players: j.Players, Image: j.Image, Source: j.Source}
	}
	system, systemAttrs := systemName(Session{System: j.System, SystemName: j.SystemName}), selectedSystemAttrs{}
	if j.System != "" {
		systemAttrs = selectedSystemAttrs{System: j.System, Source: j.Source}
	}
	return []Message{
		retained(s.StateTopic(SelectedGame), []byte(game), KindState, at),
		retained(s.AttributesTopic(SelectedGame), marshal(gameAttrs), KindState, at),
		retained(s.StateTopic(SelectedSystem), []byte(system), KindState, at),
		retained(s.AttributesTopic(SelectedSystem), marshal(systemAttrs), KindState, at),
		retained(s.StateTopic(SelectedTopic), marshal(j), KindState, at),
	}
}

// SelectedMarqueeState is the retained picture of image.batocera_selected_marquee (a JPEG from
// package artwork, or its placeholder), when s announces it; nil otherwise.
func SelectedMarqueeState(s Settings, jpeg []byte, at time.Time) []Message {
	if !s.announces(SelectedMarquee) {
		return nil
	}
	return []Message{PictureState(s, SelectedMarquee, jpeg, at)}
}

// ParseSelected reads back a payload of batocera/<id>/selected (what a previous daemon left
// retained); ok is false when it is not one or selects nothing.
func ParseSelected(payload []byte) (Selected, bool) {
	var j selectedJSON
	if json.Unmarshal(payload, &j) != nil || j.System == "" && j.ROM == "" {
		return Selected{}, false
	}
	sel := Selected{System: j.System, SystemName: j.SystemName, Game: j.Game, ROM: j.ROM, GameID: j.GameID,
		Details: GameDetails{Genre: j.Genre, Year: j.Year, Players: j.Players}, Image: j.Image, Source: j.Source}
	if t, err := time.Parse(time.RFC3339, j.At); err == nil {
		sel.At = t
	}
	return sel, true
}
