package rommreport

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

// RomMPoster sends sessions with the cabinet's device id through the
// RomM client.
type RomMPoster struct {
	Client   *romm.Client
	DeviceID string
}

// Post implements Poster.
func (p RomMPoster) Post(ctx context.Context, s []Session) ([]Result, error) {
	in := make([]romm.PlaySession, len(s))
	for i, x := range s {
		in[i] = romm.PlaySession{ROMID: x.ROMID, Start: x.Start, End: x.End, Duration: x.Duration}
	}
	res, err := p.Client.PostPlaySessions(ctx, p.DeviceID, in)
	if err != nil {
		return nil, err
	}
	out := make([]Result, len(s))
	for i := range out {
		out[i] = Result{Status: romm.SessionError, Detail: "RomM gave no result for it"}
	}
	for _, r := range res {
		if r.Index >= 0 && r.Index < len(out) {
			out[r.Index] = Result{Status: r.Status, Detail: r.Detail}
		}
	}
	return out, nil
}

// RomMLookup finds RomM ROMs through the RomM client (Lookup).
type RomMLookup struct {
	Client    *romm.Client
	Platforms *platforms.Map
}

// ByHash implements Lookup.
func (l RomMLookup) ByHash(ctx context.Context, crc, md5, sha1 string) (int, error) {
	r, err := l.Client.ROMByHash(ctx, crc, md5, sha1)
	if errors.Is(err, romm.ErrNotFound) {
		return 0, ErrUnknown
	}
	if err != nil {
		return 0, err
	}
	return r.ID, nil
}

// ByName searches the RomM platforms that map to folder for a ROM whose
// file is name (and size, when known).
func (l RomMLookup) ByName(ctx context.Context, folder, name string, size int64) (int, error) {
	pl, err := l.Client.Platforms(ctx)
	if err != nil {
		return 0, err
	}
	var ids []int
	for _, p := range pl {
		if f, ok := l.Platforms.Folder(p.Slug, p.FSSlug, nil); ok && f == folder {
			ids = append(ids, p.ID)
		}
	}
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	if len(ids) == 0 || stem == "" {
		return 0, ErrUnknown
	}
	page, err := l.Client.SearchROMs(ctx, romm.SearchQuery{Term: stem, PlatformIDs: ids, Limit: 50})
	if err != nil {
		return 0, err
	}
	for _, r := range page.Items {
		if r.FSName == name && (size < 0 || r.FSSizeBytes == size) {
			return r.ID, nil
		}
	}
	return 0, ErrUnknown
}
