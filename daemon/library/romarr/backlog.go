package romarr

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Wanted is one entry of ROMarr's Wanted list (GET /api/v1/wanted/missing): a request not yet
// satisfied. ROMarr gives entries no id and no state; it knows them by title and platform, and
// a second request of the same pair is a retry of the same entry.
type Wanted struct {
	Title     string
	Platform  string // ROMarr's platform slug, such as "snes" or "genesis-slash-megadrive"
	Added     time.Time
	Attempts  int    // searches that found nothing usable
	LastError string // ROMarr's sentence for the last failure
	// Searched is when ROMarr's scheduler last searched for it; zero when it never has.
	Searched time.Time
}

// Wanted returns the newest limit entries of ROMarr's Wanted list (limit <= 0: DefaultLimit, at
// most MaxLimit), newest first, only those of platform (a ROMarr slug, compared without case)
// unless platform is empty. ROMarr cannot filter, so the whole list is read and streamed.
func (c *Client) Wanted(ctx context.Context, platform string, limit int) ([]Wanted, error) {
	ctx, cancel := c.operation(ctx)
	defer cancel()
	b, err := c.get(ctx, "/api/v1/wanted/missing", nil, maxListBody)
	if err != nil {
		return nil, fmt.Errorf("romarr wanted list: %w", err)
	}
	out, err := c.decodeWanted(b, strings.TrimSpace(platform), clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("romarr wanted list: %w", err)
	}
	return out, nil
}

func clampLimit(limit int) int {
	if limit <= 0 {
		return DefaultLimit
	}
	return min(limit, MaxLimit)
}

func (c *Client) decodeWanted(b []byte, platform string, limit int) ([]Wanted, error) {
	keep := ring[Wanted]{n: limit}
	err := walkObject(b, func(key string, dec *json.Decoder) error {
		if key != "items" {
			return skip(dec)
		}
		return eachElement(dec, func(_ int, dec *json.Decoder) error {
			var raw struct {
				Game       string `json:"game"`
				Platform   string `json:"platform"`
				Added      string `json:"added"`
				Attempts   count  `json:"attempts"`
				LastError  string `json:"last_error"`
				SearchedAt string `json:"searched_at"`
			}
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			if platform != "" && !strings.EqualFold(raw.Platform, platform) {
				return nil
			}
			keep.add(Wanted{
				Title:     c.text(raw.Game, maxTitle),
				Platform:  c.text(raw.Platform, maxSlug),
				Added:     parseTime(raw.Added),
				Attempts:  int(raw.Attempts),
				LastError: c.text(raw.LastError, maxSentence),
				Searched:  parseTime(raw.SearchedAt),
			})
			return nil
		})
	})
	if err != nil {
		return nil, shapeErr("GET /api/v1/wanted/missing", err)
	}
	return keep.newestFirst(), nil
}

// QueueItem is one row of ROMarr's download queue (GET /api/v1/queue). ROMarr reports no
// download progress: a row is queued, grabbed (handed to a download client), imported or failed.
type QueueItem struct {
	// Index is the row's position in ROMarr's queue, which is how ROMarr's queue actions
	// (POST /api/v1/queue/action) address it. It shifts when earlier rows are removed.
	Index    int
	Title    string // the game as requested
	Platform string // ROMarr's platform slug
	Release  string // the release chosen, empty when none was
	Seeders  int
	State    string // queued | grabbed | imported | failed
	Detail   string // ROMarr's sentence, such as why a row failed
	At       time.Time
}

// Queue returns the newest MaxQueue rows of ROMarr's download queue, newest first. ROMarr keeps
// the queue in memory: a restart empties it.
func (c *Client) Queue(ctx context.Context) ([]QueueItem, error) {
	ctx, cancel := c.operation(ctx)
	defer cancel()
	b, err := c.get(ctx, "/api/v1/queue", nil, maxListBody)
	if err != nil {
		return nil, fmt.Errorf("romarr queue: %w", err)
	}
	out, err := c.decodeQueue(b, MaxQueue)
	if err != nil {
		return nil, fmt.Errorf("romarr queue: %w", err)
	}
	return out, nil
}

func (c *Client) decodeQueue(b []byte, limit int) ([]QueueItem, error) {
	keep := ring[QueueItem]{n: limit}
	err := walkObject(b, func(key string, dec *json.Decoder) error {
		if key != "items" {
			return skip(dec)
		}
		return eachElement(dec, func(i int, dec *json.Decoder) error {
			var raw struct {
				Game     string `json:"game"`
				Platform string `json:"platform"`
				Release  string `json:"release"`
				Seeders  count  `json:"seeders"`
				State    string `json:"state"`
				Detail   string `json:"detail"`
				At       string `json:"at"`
			}
			if err := dec.Decode(&raw); err != nil {
				return err
			}
			keep.add(QueueItem{
				Index:    i,
				Title:    c.text(raw.Game, maxTitle),
				Platform: c.text(raw.Platform, maxSlug),
				Release:  c.text(raw.Release, maxTitle),
				Seeders:  int(raw.Seeders),
				State:    c.text(raw.State, maxShort),
				Detail:   c.text(raw.Detail, maxSentence),
				At:       parseTime(raw.At),
			})
			return nil
		})
	})
	if err != nil {
		return nil, shapeErr("GET /api/v1/queue", err)
	}
	return keep.newestFirst(), nil
}
