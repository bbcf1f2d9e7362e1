package es

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// MetadataWriter sets the metadata and media of a game through ES's own
// routes (POST /systems/{sys}/games/{id} and .../media/{type}), which ES
// keeps the way it keeps its scraper's: in gamelist.xml and the system's
// media folders. Only the library installer holds one, for the game it
// has just installed: the MCP tools get a *Client, which has no such
// method, so no tool argument reaches these routes.
type MetadataWriter struct{ c *Client }

// NewMetadataWriter is a MetadataWriter over c's connection settings.
func NewMetadataWriter(c *Client) *MetadataWriter { return &MetadataWriter{c: c} }

// ErrUnchanged: ES answered that nothing changed (its metadata route says
// 404 then, as for a game it does not have; the caller knows which).
var ErrUnchanged = errors.New("ES changed nothing")

// GameID is ES's id of the game at path: the md5 of the path, in hex
// (FileData's id, HttpApi.cpp).
func GameID(path string) string {
	sum := md5.Sum([]byte(path))
	return hex.EncodeToString(sum[:])
}

// maxMetadataBytes bounds one metadata body; ES's own descriptions are
// far shorter.
const maxMetadataBytes = 64 << 10

// SetMetadata sets metadata keys (ES's names: name, desc, releasedate,
// developer, publisher, genre, players, rating…) of a game; every value is
// a string, as ES keeps them. Path-typed keys (image, video…) are ignored
// by ES; use UploadMedia.
func (w *MetadataWriter) SetMetadata(ctx context.Context, system, id string, values map[string]string) error {
	op := "POST /systems/{sys}/games/{id}"
	if err := checkSystem(op, system); err != nil {
		return err
	}
	if err := checkID(op, id); err != nil {
		return err
	}
	for k := range values {
		if k == "" || strings.IndexFunc(k, isControl) >= 0 || len(k) > 64 {
			return fmt.Errorf("%s: %w: metadata key %q", op, ErrInvalidArgument, k)
		}
	}
	body, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(body) > maxMetadataBytes {
		return fmt.Errorf("%s: %w: %d bytes of metadata, limit %d", op, ErrInvalidArgument, len(body), maxMetadataBytes)
	}
	status, _, err := w.c.do(ctx, call{method: http.MethodPost, path: systemPath(system, "games", id), body: string(body),
		contentType: "application/json", limit: w.c.cfg.MaxObjectBytes})
	switch {
	case err != nil:
		return err
	case status == http.StatusOK:
		return nil
	case status == http.StatusNotFound:
		return ErrUnchanged // HttpApi::ImportFromJson returns false when nothing changed
	}
	return statusError(op, status, nil)
}

// maxMediaBytes bounds one uploaded media file (a cover).
const maxMediaBytes = 8 << 20

// UploadMedia stores a media file of a game (kind: image, thumbnail,
// marquee…); ES saves it where its scraper would and points the game's
// metadata at it. contentType picks the extension (image/png → .png).
func (w *MetadataWriter) UploadMedia(ctx context.Context, system, id, kind, contentType string, data []byte) error {
	op := "POST /systems/{sys}/games/{id}/media/" + kind
	if err := checkSystem(op, system); err != nil {
		return err
	}
	if err := checkID(op, id); err != nil {
		return err
	}
	switch kind {
	case "image", "thumbnail", "marquee", "fanart", "boxart", "titleshot", "wheel":
	default:
		return fmt.Errorf("%s: %w: media kind %q", op, ErrInvalidArgument, kind)
	}
	switch contentType {
	case "image/png", "image/jpeg", "image/gif":
	default:
		return fmt.Errorf("%s: %w: content type %q (ES takes png, jpeg and gif images)", op, ErrInvalidArgument, contentType)
	}
	if len(data) == 0 || len(data) > maxMediaBytes {
		return fmt.Errorf("%s: %w: %d bytes (1 to %d)", op, ErrInvalidArgument, len(data), maxMediaBytes)
	}
	_, _, err := w.c.expect(ctx, call{method: http.MethodPost, path: systemPath(system, "games", id, "media", kind), body: string(data),
		contentType: contentType, limit: w.c.cfg.MaxObjectBytes}, http.StatusOK)
	return err
}
