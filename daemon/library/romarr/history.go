package romarr

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// MaxHistory is the most history events History returns. ROMarr keeps 2000.
const MaxHistory = 500

// Event is one entry of ROMarr's history (GET /api/v1/history). Unlike the queue it survives a
// restart of ROMarr.
type Event struct {
	Kind string // grabbed | imported | failed | ignored
	// Title is the game: as it was requested for grabbed and most failed events, but the
	// download's name (a release title) for imported ones.
	Title    string
	Platform string // ROMarr's platform slug
	Release  string // the release, when there was one
	Detail   string // ROMarr's sentence: why it failed, where an import went
	Library  string // the library server an import went to
	At       time.Time
}

// History returns ROMarr's newest limit history events (limit <= 0: DefaultLimit, at most
// MaxHistory), newest first.
func (c *Client) History(ctx context.Context, limit int) ([]Event, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxHistory)
	ctx, cancel := c.operation(ctx)
	defer cancel()
	// ROMarr slices its events with [-limit:]: a limit of 0 would be all of them, so one is
	// always sent.
	b, err := c.get(ctx, "/api/v1/history", url.Values{"limit": {strconv.Itoa(limit)}}, maxListBody)
	if err != nil {
		return nil, fmt.Errorf("romarr history: %w", err)
	}
	out, err := c.decodeHistory(b, limit)
	if err != nil {
		return nil, fmt.Errorf("romarr history: %w", err)
	}
	return out, nil
}

// decodeHistory keeps the first limit events: ROMarr sends them newest first.
func (c *Client) decodeHistory(b []byte, limit int) ([]Event, error) {
	var out []Event
	err := walkObject(b, func(key string, dec *json.Decoder) error {
		if key != "items" {
			return skip(dec)
		}
		return eachElement(dec, func(_ int, dec *json.Decoder) error {
			var raw struct {
				Kind     string `json:"kind"`
				Game     string `json:"game"`
				Platform string `json:"platform"`
				Release  string `json:"release"`
				Detail   string `json:"detail"`
				Library  string `json:"library"`
				At       string `json:"at"`
			}
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if len(out) < limit {
				out = append(out, Event{
					Kind:     c.text(raw.Kind, maxShort),
					Title:    c.text(raw.Game, maxTitle),
					Platform: c.text(raw.Platform, maxSlug),
					Release:  c.text(raw.Release, maxTitle),
					Detail:   c.text(raw.Detail, maxSentence),
					Library:  c.text(raw.Library, maxName),
					At:       parseTime(raw.At),
				})
			}
			return nil
		})
	})
	if err != nil {
		return nil, shapeErr("GET /api/v1/history", err)
	}
	return out, nil
}
