package romarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
)

// maxPlatforms bounds GET /api/platforms; ROMarr 0.8 knows 73.
const maxPlatforms = 1000

var (
	// ErrLibraryLoading: ROMarr is still reading its game library from its library server (on a
	// large RomM that takes minutes after ROMarr starts). Ask again later.
	ErrLibraryLoading = errors.New("ROMarr is still reading its game library")
	// ErrNoLibrary: ROMarr has no game library configured, so it has nothing to search.
	ErrNoLibrary = errors.New("ROMarr has no game library configured")
)

// Platform is one entry of ROMarr's platform table (GET /api/platforms).
type Platform struct {
	Slug       string   // what requests and the Wanted list use: "snes", "genesis-slash-megadrive"
	Name       string   // "Super Nintendo"
	Media      string   // cartridge | disc | computer
	Extensions []string // ROM extensions, most preferred first (at most 16)
}

// Platforms returns ROMarr's platform table, in ROMarr's order.
func (c *Client) Platforms(ctx context.Context) ([]Platform, error) {
	ctx, cancel := c.operation(ctx)
	defer cancel()
	b, err := c.get(ctx, "/api/platforms", nil, maxListBody)
	if err != nil {
		return nil, fmt.Errorf("romarr platforms: %w", err)
	}
	out, err := c.decodePlatforms(b)
	if err != nil {
		return nil, fmt.Errorf("romarr platforms: %w", err)
	}
	return out, nil
}

func (c *Client) decodePlatforms(b []byte) ([]Platform, error) {
	var out []Platform
	err := walkArray(b, func(i int, dec *json.Decoder) error {
		if i >= maxPlatforms {
			return skip(dec)
		}
		var raw struct {
			Slug       string  `json:"slug"`
			Name       string  `json:"name"`
			Media      string  `json:"media"`
			Extensions strList `json:"extensions"`
		}
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		slug := c.text(raw.Slug, maxSlug)
		if slug == "" {
			return nil // nothing could ask for it
		}
		out = append(out, Platform{
			Slug: slug, Name: c.text(raw.Name, maxName), Media: c.text(raw.Media, maxShort),
			Extensions: c.texts(raw.Extensions, maxShort),
		})
		return nil
	})
	if err != nil {
		return nil, shapeErr("GET /api/platforms", err)
	}
	return out, nil
}

// LibraryItem is one game of the library ROMarr serves (GET /api/v1/game): the games on its
// library servers (RomM, folders…), which ROMarr caches.
type LibraryItem struct {
	ID string // the library server's id (RomM's ROM id; a file path for a folder library)
	// Name is the game's name; Platform the library server's own platform slug when it has one
	// (RomM's, not ROMarr's), else its display name; PlatformName its display name.
	Name, Platform, PlatformName string
	Source                       string // which library server, when ROMarr has several
	Year                         int
	Genres, Regions              []string
	Players                      string // as the metadata provider phrases it, "1-4"
	Origin                       string // "local" (files on disk) or "cloud" (catalogued elsewhere)
	Extension                    string // ".sfc"; empty when the server does not say
}

// MaxQuery bounds a search's text.
const MaxQuery = 200

// Search returns up to limit games (limit <= 0: DefaultLimit, at most MaxLimit) of ROMarr's
// library whose name contains query, without case, in ROMarr's order. Until ROMarr has read its
// library the error wraps ErrLibraryLoading, or ErrNoLibrary when it has none.
func (c *Client) Search(ctx context.Context, query string, limit int) ([]LibraryItem, error) {
	query, err := outgoing("search text", query, MaxQuery)
	if err != nil {
		return nil, fmt.Errorf("romarr search: %w", err)
	}
	limit = clampLimit(limit)
	ctx, cancel := c.operation(ctx)
	defer cancel()
	q := url.Values{"q": {query}, "offset": {"0"}, "limit": {strconv.Itoa(limit)}}
	b, err := c.get(ctx, "/api/v1/game", q, maxListBody)
	if err != nil {
		return nil, fmt.Errorf("romarr search: %w", err)
	}
	out, err := c.decodeGames(b, limit)
	if err != nil {
		return nil, fmt.Errorf("romarr search: %w", err)
	}
	return out, nil
}

func (c *Client) decodeGames(b []byte, limit int) ([]LibraryItem, error) {
	var out []LibraryItem
	loading, message, errText := false, "", ""
	err := walkObject(b, func(key string, dec *json.Decoder) error {
		switch key {
		case "items":
			return eachElement(dec, func(i int, dec *json.Decoder) error {
				if i >= limit {
					return skip(dec)
				}
				var raw struct {
					ID           json.RawMessage `json:"id"`
					Name         string          `json:"name"`
					Platform     string          `json:"platform"`
					PlatformSlug string          `json:"platform_slug"`
					Source       string          `json:"source"`
					Year         count           `json:"year"`
					Genres       strList         `json:"genres"`
					Regions      strList         `json:"regions"`
					Players      string          `json:"players"`
					Origin       string          `json:"origin"`
					Extension    string          `json:"extension"`
				}
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				item := LibraryItem{
					ID:           c.text(rawID(raw.ID), maxPath),
					Name:         c.text(raw.Name, maxTitle),
					PlatformName: c.text(raw.Platform, maxName),
					Platform:     c.text(raw.PlatformSlug, maxSlug),
					Source:       c.text(raw.Source, maxName),
					Year:         int(raw.Year),
					Genres:       c.texts(raw.Genres, maxShort),
					Regions:      c.texts(raw.Regions, maxShort),
					Players:      c.text(raw.Players, maxShort),
					Origin:       c.text(raw.Origin, maxShort),
					Extension:    c.text(raw.Extension, maxShort),
				}
				if item.Platform == "" {
					item.Platform = item.PlatformName
				}
				if item.Year > 9999 {
					item.Year = 0
				}
				out = append(out, item)
				return nil
			})
		case "loading":
			return dec.Decode(&loading)
		case "message", "error":
			var s *string
			if err := dec.Decode(&s); err != nil {
				return err
			}
			if s != nil && key == "message" {
				message = *s
			} else if s != nil {
				errText = *s
			}
			return nil
		}
		return skip(dec)
	})
	if err != nil {
		return nil, shapeErr("GET /api/v1/game", err)
	}
	if loading {
		if errText == "no library configured" {
			return nil, fmt.Errorf("%w: add one on ROMarr's Libraries page (or start it with LIBRARY_URL or ROMM_URL)", ErrNoLibrary)
		}
		why := c.text(errText, maxSentence)
		if why == "" {
			why = c.text(message, maxSentence)
		}
		if why != "" {
			return nil, fmt.Errorf("%w (%s): try again in a minute", ErrLibraryLoading, why)
		}
		return nil, fmt.Errorf("%w: try again in a minute", ErrLibraryLoading)
	}
	return out, nil
}

// rawID renders a JSON string or number id as text; anything else is no id.
func rawID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}
