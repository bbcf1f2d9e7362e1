package es

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

type wireSystem struct {
	Name          text   `json:"name"`
	FullName      text   `json:"fullname"`
	HardwareType  text   `json:"hardwareType"`
	Manufacturer  text   `json:"manufacturer"`
	ReleaseYear   number `json:"releaseYear"`
	Theme         text   `json:"theme"` // emitted twice by ES; the last one wins
	Extensions    texts  `json:"extensions"`
	Group         text   `json:"group"`
	Visible       flag   `json:"visible"`
	Collection    flag   `json:"collection"`
	GameSystem    flag   `json:"gamesystem"`
	GroupSystem   flag   `json:"groupsystem"`
	TotalGames    number `json:"totalGames"`
	VisibleGames  number `json:"visibleGames"`
	FavoriteGames number `json:"favoriteGames"`
	PlayedGames   number `json:"playedGames"`
	HiddenGames   number `json:"hiddenGames"`
	MostPlayed    text   `json:"mostPlayedGame"`
	Logo          text   `json:"logo"`
}

func (w wireSystem) system() System {
	return System{Name: string(w.Name), FullName: string(w.FullName), HardwareType: string(w.HardwareType),
		Manufacturer: string(w.Manufacturer), ReleaseYear: int(w.ReleaseYear), Theme: string(w.Theme),
		Extensions: w.Extensions, Group: string(w.Group), Visible: bool(w.Visible),
		Collection: bool(w.Collection), GameSystem: bool(w.GameSystem), GroupSystem: bool(w.GroupSystem),
		TotalGames: int(w.TotalGames), VisibleGames: int(w.VisibleGames), FavoriteGames: int(w.FavoriteGames),
		PlayedGames: int(w.PlayedGames), HiddenGames: int(w.HiddenGames), MostPlayed: string(w.MostPlayed),
		Logo: string(w.Logo)}
}

type wireGame struct {
	ID               text `json:"id"`
	Path             text `json:"path"`
	Name             text `json:"name"`
	System           text `json:"systemName"`
	Desc             text `json:"desc"`
	Genre            text `json:"genre"`
	Genres           text `json:"genres"`
	Players          text `json:"players"`
	Developer        text `json:"developer"`
	Publisher        text `json:"publisher"`
	Family           text `json:"family"`
	ArcadeSystemName text `json:"arcadesystemname"`
	Tags             text `json:"tags"`
	SortName         text `json:"sortname"`
	Emulator         text `json:"emulator"`
	Core             text `json:"core"`
	Region           text `json:"region"`
	Lang             text `json:"lang"`
	CRC32            text `json:"crc32"`
	MD5              text `json:"md5"`
	ScraperID        text `json:"scraperId"`
	Rating           text `json:"rating"`
	ReleaseDate      text `json:"releasedate"`
	Favorite         flag `json:"favorite"`
	Hidden           flag `json:"hidden"`
	KidGame          flag `json:"kidgame"`
	PlayCount        text `json:"playcount"`
	GameTime         text `json:"gametime"`
	LastPlayed       text `json:"lastplayed"`
	Image            text `json:"image"`
	Video            text `json:"video"`
	Marquee          text `json:"marquee"`
	Thumbnail        text `json:"thumbnail"`
	FanArt           text `json:"fanart"`
	Manual           text `json:"manual"`
	TitleShot        text `json:"titleshot"`
	Magazine         text `json:"magazine"`
	Map              text `json:"map"`
	Bezel            text `json:"bezel"`
	Cartridge        text `json:"cartridge"`
	BoxArt           text `json:"boxart"`
	BoxBack          text `json:"boxback"`
	Wheel            text `json:"wheel"`
	Mix              text `json:"mix"`
}

func (w wireGame) game(loc *time.Location) Game {
	g := Game{ID: string(w.ID), Path: string(w.Path), Name: string(w.Name), System: string(w.System),
		Desc: string(w.Desc), Genre: string(w.Genre), Genres: string(w.Genres), Players: string(w.Players),
		Developer: string(w.Developer), Publisher: string(w.Publisher), Family: string(w.Family),
		ArcadeSystemName: string(w.ArcadeSystemName), Tags: string(w.Tags), SortName: string(w.SortName),
		Emulator: string(w.Emulator), Core: string(w.Core), Region: string(w.Region), Lang: string(w.Lang),
		CRC32: string(w.CRC32), MD5: string(w.MD5), ScraperID: string(w.ScraperID),
		Favorite: bool(w.Favorite), Hidden: bool(w.Hidden), KidGame: bool(w.KidGame),
		Image: string(w.Image), Video: string(w.Video), Marquee: string(w.Marquee),
		Thumbnail: string(w.Thumbnail), FanArt: string(w.FanArt), Manual: string(w.Manual),
		TitleShot: string(w.TitleShot), Magazine: string(w.Magazine), Map: string(w.Map), Bezel: string(w.Bezel),
		Cartridge: string(w.Cartridge), BoxArt: string(w.BoxArt), BoxBack: string(w.BoxBack), Wheel: string(w.Wheel),
		Mix: string(w.Mix)}
	if r, err := strconv.ParseFloat(string(w.Rating), 64); err == nil && r > 0 && !math.IsInf(r, 0) {
		g.Rating = math.Min(r, 1) // NaN fails r > 0
	}
	if n := parseInt(string(w.PlayCount)); n > 0 {
		g.PlayCount = n
	}
	if n, err := strconv.ParseInt(string(w.GameTime), 10, 64); err == nil && n > 0 {
		g.GameTime = n
	}
	g.ReleaseDate = parseESTime(string(w.ReleaseDate), loc)
	g.LastPlayed = parseESTime(string(w.LastPlayed), loc)
	return g
}

// parseESTime reads ES's ISO basic local time (YYYYMMDDTHHMMSS, or a bare
// date); "not-a-date-time", "0" and anything else are the zero time.
func parseESTime(s string, loc *time.Location) time.Time {
	for _, layout := range []string{"20060102T150405", "20060102"} {
		if len(s) == len(layout) {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

// listedSystem is one element of /systems; non-objects are skipped.
type listedSystem struct {
	wireSystem
	ok bool
}

func (l *listedSystem) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	l.ok = json.Unmarshal(b, &l.wireSystem) == nil
	return nil
}

func decodeSystems(b []byte) ([]System, error) {
	var raw []listedSystem
	if err := decodeArray(b, &raw); err != nil {
		return nil, fmt.Errorf("%w: systems: %w", ErrMalformed, err)
	}
	out := make([]System, 0, len(raw))
	for _, l := range raw {
		if l.ok {
			out = append(out, l.system())
		}
	}
	return out, nil
}

func decodeSystem(b []byte) (System, error) {
	var w wireSystem
	if err := decodeObject(b, &w); err != nil {
		return System{}, fmt.Errorf("%w: system: %w", ErrMalformed, err)
	}
	return w.system(), nil
}

// decodeGames streams a game list (tens of MB for a large library) one
// element at a time. An element that is not an object is skipped, so one
// odd entry never costs the whole list.
func decodeGames(b []byte, loc *time.Location) ([]Game, error) {
	if err := checkArray(b); err != nil {
		return nil, fmt.Errorf("%w: game list: %w", ErrMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '['
		return nil, fmt.Errorf("%w: game list: %w", ErrMalformed, err)
	}
	out := make([]Game, 0, len(b)/600)
	for dec.More() {
		var w wireGame
		err := dec.Decode(&w)
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			continue // not an object; the decoder has skipped it
		case err != nil:
			return nil, fmt.Errorf("%w: game list: %w", ErrMalformed, err)
		case w.ID == "" && w.Path == "":
			continue // null or {}: nothing to list
		}
		out = append(out, w.game(loc))
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, fmt.Errorf("%w: game list: %w", ErrMalformed, err)
	}
	return out, nil
}

func decodeGame(b []byte, loc *time.Location) (Game, error) {
	var w wireGame
	if err := decodeObject(b, &w); err != nil {
		return Game{}, fmt.Errorf("%w: game: %w", ErrMalformed, err)
	}
	return w.game(loc), nil
}

// decodeRunningGame reads /runningGame: 201 is ES's "no game running"
// sentinel (its body {"msg":"NO GAME RUNNING"} is not a game), 200 a game.
func decodeRunningGame(status int, b []byte, loc *time.Location) (*Game, error) {
	if status == 201 {
		return nil, nil
	}
	g, err := decodeGame(b, loc)
	if err != nil {
		return nil, err
	}
	if g.ID == "" {
		return nil, fmt.Errorf("%w: running game without an id", ErrMalformed)
	}
	return &g, nil
}

func decodeCaps(b []byte) (Caps, error) {
	var w struct {
		Version  text `json:"Version"`
		SortName flag `json:"SortName"`
	}
	if err := decodeObject(b, &w); err != nil {
		return Caps{}, fmt.Errorf("%w: caps: %w", ErrMalformed, err)
	}
	return Caps{Version: string(w.Version), SortName: bool(w.SortName)}, nil
}

// decodeArray insists on a JSON array (null would decode as an empty list).
func decodeArray(b []byte, v any) error {
	if err := checkArray(b); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// checkArray rejects anything but a syntactically valid JSON array.
func checkArray(b []byte) error {
	if !json.Valid(b) {
		var v any
		return json.Unmarshal(b, &v) // the syntax error
	}
	if t := bytes.TrimLeft(b, " \t\r\n"); t[0] != '[' {
		return fmt.Errorf("want a JSON array, got %s", quoteBody(b))
	}
	return nil
}

// decodeObject insists on a JSON object: a bare string or array decoding
// into a struct would otherwise be an odd, partial success.
func decodeObject(b []byte, v any) error {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		if !json.Valid(b) {
			return json.Unmarshal(b, v) // the syntax error
		}
		return fmt.Errorf("want a JSON object, got %s", quoteBody(b))
	}
	return json.Unmarshal(b, v)
}
