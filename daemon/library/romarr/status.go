package romarr

import (
	"context"
	"encoding/json"
	"fmt"
)

// Status is what ROMarr reports about itself, from three routes: GET /api/v1/system/status (the
// System page), GET /api/v1/system/counts and GET /api/v1/indexer. ROMarr reports no disk space.
type Status struct {
	Version string // "0.8.0"
	Uptime  string // ROMarr's own rendering, "3h 12m"
	// LibraryServerOK: ROMarr's default library (RomM, a folder…) answers. RommOK: one of its
	// libraries is a RomM and answers its heartbeat (it does not prove the token works: see
	// Library.Readable).
	LibraryServerOK, RommOK bool
	// Prowlarr: ROMarr has a Prowlarr API key (it does not say whether Prowlarr answers).
	Prowlarr bool
	// Indexers is how many indexers ROMarr can search: its own plus those Prowlarr proxies.
	// IndexerError is ROMarr's sentence when asking Prowlarr for its indexers failed (only set
	// when Prowlarr is configured).
	Indexers     int
	IndexerError string
	// DownloadClients and Libraries are every one ROMarr has, answering or not.
	DownloadClients []DownloadClient
	Libraries       []Library
	LibraryPath     string // where ROMarr files ROMs (a path on ROMarr's machine)
	LibraryOK       bool   // that path exists
	Platforms       int    // platforms ROMarr knows
	DATs            int    // DAT files loaded for verification
	Wanted          int    // entries on the Wanted list
	Queued          int    // queue rows still queued or grabbed (failed and imported rows do not count)
	// Games, GamesOnDisk are ROMarr's cached library counts; nil until it has read the library.
	Games, GamesOnDisk *int
}

// DownloadClient is one of ROMarr's download clients.
type DownloadClient struct {
	Name, Protocol string
	Configured, OK bool
	Detail         string // ROMarr's note when it has one, such as why it is not answering
}

// Library is one of ROMarr's game libraries (RomM, a folder, Gaseous…).
type Library struct {
	Name, Type   string
	OK, Readable bool // answers its heartbeat; ROMarr could read games from it
	Detail       string
}

// Status asks ROMarr how it is.
func (c *Client) Status(ctx context.Context) (Status, error) {
	ctx, cancel := c.operation(ctx)
	defer cancel()
	b, err := c.get(ctx, "/api/v1/system/status", nil, maxSmallBody)
	if err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	st, err := c.decodeStatus(b)
	if err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	if b, err = c.get(ctx, "/api/v1/system/counts", nil, maxSmallBody); err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	if err := c.decodeCounts(b, &st); err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	if b, err = c.get(ctx, "/api/v1/indexer", nil, maxListBody); err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	if err := c.decodeIndexers(b, &st); err != nil {
		return Status{}, fmt.Errorf("romarr status: %w", err)
	}
	return st, nil
}

// shapeErr says an answer is not what ROMarr 0.8 sends.
func shapeErr(route string, err error) error {
	return fmt.Errorf("%s is not in the shape ROMarr 0.8 answers (%v): check cabinet.romarr.url is ROMarr", route, err)
}

func (c *Client) decodeStatus(b []byte) (Status, error) {
	var raw struct {
		Version     string  `json:"version"`
		Uptime      string  `json:"uptime"`
		Romm        bool    `json:"romm"`
		Prowlarr    bool    `json:"prowlarr"`
		Library     bool    `json:"library"`
		LibraryPath string  `json:"library_path"`
		Platforms   count   `json:"platforms"`
		DATs        count   `json:"dats"`
		Clients     []rawDC `json:"clients"`
		Libraries   []rawLb `json:"libraries"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Status{}, shapeErr("GET /api/v1/system/status", err)
	}
	if raw.Version == "" {
		return Status{}, shapeErr("GET /api/v1/system/status", fmt.Errorf("no version"))
	}
	st := Status{
		Version:         c.text(raw.Version, maxShort),
		Uptime:          c.text(raw.Uptime, maxShort),
		LibraryServerOK: raw.Romm,
		Prowlarr:        raw.Prowlarr,
		LibraryOK:       raw.Library,
		LibraryPath:     c.text(raw.LibraryPath, maxPath),
		Platforms:       int(raw.Platforms),
		DATs:            int(raw.DATs),
	}
	for i, d := range raw.Clients {
		if i == MaxLimit {
			break
		}
		st.DownloadClients = append(st.DownloadClients, DownloadClient{
			Name: c.text(d.Name, maxName), Protocol: c.text(d.Protocol, maxShort),
			Configured: d.Configured, OK: d.OK, Detail: c.text(d.Detail, maxSentence),
		})
	}
	for i, l := range raw.Libraries {
		if i == MaxLimit {
			break
		}
		st.Libraries = append(st.Libraries, Library{
			Name: c.text(l.Name, maxName), Type: c.text(l.Type, maxShort),
			OK: l.OK, Readable: l.Readable, Detail: c.text(l.Detail, maxSentence),
		})
		if l.Type == "romm" && l.OK {
			st.RommOK = true
		}
	}
	return st, nil
}

type rawDC struct {
	Name       string `json:"name"`
	Protocol   string `json:"protocol"`
	Configured bool   `json:"configured"`
	OK         bool   `json:"ok"`
	Detail     string `json:"detail"`
}

type rawLb struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	OK       bool   `json:"ok"`
	Readable bool   `json:"readable"`
	Detail   string `json:"detail"`
}

func (c *Client) decodeCounts(b []byte, st *Status) error {
	var raw struct {
		Games       *count `json:"games"`
		GamesOnDisk *count `json:"games_on_disk"`
		Missing     count  `json:"missing"`
		Queued      count  `json:"queued"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return shapeErr("GET /api/v1/system/counts", err)
	}
	st.Wanted, st.Queued = int(raw.Missing), int(raw.Queued)
	st.Games, st.GamesOnDisk = intPtr(raw.Games), intPtr(raw.GamesOnDisk)
	return nil
}

func intPtr(n *count) *int {
	if n == nil {
		return nil
	}
	v := int(*n)
	return &v
}

// decodeIndexers counts {"items": [...], "proxied": [...], "error": …} without keeping the items.
func (c *Client) decodeIndexers(b []byte, st *Status) error {
	n := 0
	errText := ""
	err := walkObject(b, func(key string, dec *json.Decoder) error {
		switch key {
		case "items", "proxied":
			return eachElement(dec, func(_ int, dec *json.Decoder) error {
				n++
				return skip(dec)
			})
		case "error":
			var s *string
			if err := dec.Decode(&s); err != nil {
				return err
			}
			if s != nil {
				errText = *s
			}
			return nil
		}
		return skip(dec)
	})
	if err != nil {
		return shapeErr("GET /api/v1/indexer", err)
	}
	st.Indexers = n
	// Without Prowlarr, ROMarr still asks it (at an empty URL) and reports requests' complaint
	// about a URL with no scheme: noise, not a fault.
	if st.Prowlarr {
		st.IndexerError = c.text(errText, maxSentence)
	}
	return nil
}
