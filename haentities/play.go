package haentities

import (
	"strconv"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Keys of launching by name from Home Assistant (design/ha-entities.md: text.batocera_play,
// select.batocera_favorite, event.batocera_play_request; issue 30), announced by the daemon with
// cabinet.ha.controls. A contract with users' automations and the voice blueprint: never rename one.
const (
	Play        = "play"         // text: a game's name, optionally "on <system>"; state: the last request
	Favorite    = "favorite"     // select: the favourites; choosing one launches it
	PlayRequest = "play_request" // event: what became of a request
)

// The outcomes of a request (event.batocera_play_request's event types).
const (
	PlayLaunched  = "launched"
	PlayAmbiguous = "ambiguous"
	PlayNotFound  = "not_found"
	PlayRefused   = "refused"
)

// Bounds of what the play entities carry.
const (
	// MaxPlayRunes is the text entity's max (HA's own bound on a state).
	MaxPlayRunes = 255
	// MaxPlayCandidates bounds the candidates an ambiguous request lists.
	MaxPlayCandidates = 8
	// MaxFavorites bounds the favourites select's options (the first is FavoriteNone).
	MaxFavorites = 100
	// maxFavoriteRunes bounds one option: HA shows them in a drop-down.
	maxFavoriteRunes = 80
	// maxPlayReasonRunes bounds a refusal's reason.
	maxPlayReasonRunes = 300
)

// PlayNone is the text entity's state before the first request (an empty retained payload would
// clear the topic, and HA keeps any text as the state).
const PlayNone = "—"

// FavoriteNone is the favourites select's first option, its state between launches: choosing a
// favourite launches it and the select returns here, so the same one can be chosen again.
const FavoriteNone = "—"

// PlayEntities is the catalogue of launching by name, in publishing order.
func PlayEntities() []Entity {
	zero, most := 0.0, float64(MaxPlayRunes)
	return []Entity{
		// No pattern: HA drops a state that does not match it, and the state is "" before the first
		// request.
		{Key: Play, Component: ComponentText, Name: "Play", Icon: "mdi:play-box-outline", Command: true, Confirmed: true,
			Attributes: true, Min: &zero, Max: &most, Mode: "text"},
		{Key: Favorite, Component: ComponentSelect, Name: "Favorite", Icon: "mdi:star", Command: true, Confirmed: true},
		{Key: PlayRequest, Component: ComponentEvent, Name: "Play request", Icon: "mdi:gamepad-round-outline",
			EventTypes: []string{PlayLaunched, PlayAmbiguous, PlayNotFound, PlayRefused}},
	}
}

// playOn says whether a key is one of launching by name's, and then whether it is announced:
// with cabinet.ha.controls.
func playOn(s Settings, key string) (on, ok bool) {
	switch key {
	case Play, Favorite, PlayRequest:
		return s.Controls, true
	}
	return false, false
}

// PlayCandidate is a game a request could mean.
type PlayCandidate struct {
	Game   string `json:"game"`
	System string `json:"system"`
}

// PlayOutcome is what became of one request: from the text entity, the favourites select, or
// anything else that launches by name.
type PlayOutcome struct {
	Query      string // the request as received (cleaned when published)
	Outcome    string // PlayLaunched … PlayRefused
	Game       string // the game launched, or the best match refused
	System     string
	Candidates []PlayCandidate // an ambiguous request's games, best first
	Reason     string          // why nothing launched
	At         time.Time
	// Seq tells apart requests answered at the same instant (the event's dedupe key); the
	// daemon numbers them.
	Seq uint64
}

type playAttrs struct {
	Query      string          `json:"query"`
	Outcome    string          `json:"outcome"`
	Game       string          `json:"game,omitempty"`
	System     string          `json:"system,omitempty"`
	Candidates []PlayCandidate `json:"candidates,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	At         string          `json:"at"`
}

func newPlayAttrs(o PlayOutcome) playAttrs {
	a := playAttrs{Query: PlayText(o.Query), Outcome: o.Outcome, Game: clean(o.Game), System: clean(o.System),
		Reason: untrusted.Clean(o.Reason, maxPlayReasonRunes), At: formatTime(o.At)}
	for _, c := range o.Candidates[:min(len(o.Candidates), MaxPlayCandidates)] {
		a.Candidates = append(a.Candidates, PlayCandidate{Game: clean(c.Game), System: clean(c.System)})
	}
	return a
}

// PlayText is a request as the text entity shows it: cleaned, at most MaxPlayRunes; PlayNone for
// none.
func PlayText(s string) string {
	if t := untrusted.Clean(s, MaxPlayRunes); t != "" {
		return t
	}
	return PlayNone
}

// PlayStates are the text entity's state (the last request) and its attributes (what became of
// it), nothing while the entity is not announced.
func PlayStates(s Settings, o PlayOutcome, at time.Time) []Message {
	if !s.announces(Play) {
		return nil
	}
	return []Message{
		retained(s.StateTopic(Play), []byte(PlayText(o.Query)), KindState, at),
		retained(s.AttributesTopic(Play), marshal(newPlayAttrs(o)), KindState, at),
	}
}

// PlayRequestEvent is event.batocera_play_request for o (time-sensitive: a late answer would
// reach a voice assistant that has given up).
func PlayRequestEvent(s Settings, o PlayOutcome, at time.Time) []Message {
	if !s.announces(PlayRequest) {
		return nil
	}
	p := struct {
		EventType string `json:"event_type"`
		playAttrs
	}{o.Outcome, newPlayAttrs(o)}
	key := PlayRequest + "/" + strconv.FormatUint(o.Seq, 10) + "/" + o.Outcome + "@" + o.At.UTC().Format(time.RFC3339Nano)
	return []Message{event(s.StateTopic(PlayRequest), marshal(p), KindTimeSensitive, key, at)}
}

// FavoriteOption is a favourite as the select lists it: "Name (System)", cleaned and bounded.
func FavoriteOption(game, system string) string {
	g, sys := clean(game), clean(system)
	if sys != "" {
		sys = " (" + sys + ")"
	}
	r := []rune(g)
	if room := maxFavoriteRunes - len([]rune(sys)); len(r) > room {
		g = string(r[:max(room-1, 1)]) + "…"
	}
	return g + sys
}

// FavoriteOptions joins the favourites' options for Settings.Favorites (a string keeps Settings
// comparable): FavoriteNone is added first by the config.
func FavoriteOptions(options []string) string {
	if len(options) > MaxFavorites-1 {
		options = options[:MaxFavorites-1]
	}
	return strings.Join(options, "\n")
}

// favoriteOptions are the select's options: FavoriteNone, then Settings.Favorites.
func favoriteOptions(s Settings) []string {
	out := []string{FavoriteNone}
	if s.Favorites != "" {
		out = append(out, strings.Split(s.Favorites, "\n")...)
	}
	return out
}

// FavoriteState is the select's state: FavoriteNone (between launches it always is).
func FavoriteState(s Settings, at time.Time) []Message {
	if !s.announces(Favorite) {
		return nil
	}
	return []Message{retained(s.StateTopic(Favorite), []byte(FavoriteNone), KindState, at)}
}
