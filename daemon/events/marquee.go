package events

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Paths of the second screens.
const (
	EventsPath  = "/events"
	MarqueePath = "/marquee"
)

// Pictures are the marquee pictures: the bytes of key's picture (a key an
// event's Image names, see ImageURL) and their content type, or an error
// wrapping ErrNoPicture when the game has none.
type Pictures interface {
	Marquee(ctx context.Context, key string) (data []byte, contentType string, err error)
}

// ErrNoPicture: the game has no picture the page can show (answered 404).
var ErrNoPicture = errors.New("no marquee picture for this game")

// MaxPicture bounds a picture served; pictureTimeout the look-up of one.
const (
	MaxPicture     = 2 << 20
	pictureTimeout = 10 * time.Second
)

// pictureTypes are the content types served: what a browser shows in an
// img and nothing that can carry script (no SVG).
var pictureTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// Routes are the second screens' routes, for httpauth.Options.Routes: the
// marquee page, open (HTML without data); the event stream and the
// pictures, for a caller with the read scope. pics may be nil: every
// picture is then missing. log is told about pictures that failed.
func Routes(h *Hub, pics Pictures, log zerolog.Logger) []httpauth.Route {
	return []httpauth.Route{
		{Pattern: "GET " + MarqueePath, Handler: http.HandlerFunc(servePage), Open: true},
		{Pattern: "GET " + EventsPath, Handler: h, Scope: httpauth.ScopeRead},
		{Pattern: "GET " + ImagePath, Handler: pictureHandler{pics: pics, log: log}, Scope: httpauth.ScopeRead},
	}
}

//go:embed marquee.html
var pageHTML string

// servePage writes the marquee page (no html/template: it costs the
// binary 3 MB, and the page has no value to escape, only its nonce). Its
// script and style run by nonce; it may connect to its own origin only and
// show only the pictures it made object URLs of.
func servePage(w http.ResponseWriter, r *http.Request) {
	var b [16]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	body := strings.ReplaceAll(pageHTML, "{{NONCE}}", nonce)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+nonce+"'; style-src 'nonce-"+nonce+"'; img-src blob:; "+
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.Write([]byte(body))
}

// pictureHandler serves GET /marquee/image?game=KEY.
type pictureHandler struct {
	pics Pictures
	log  zerolog.Logger
}

func (p pictureHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("game")
	if !ValidKey(key) {
		jsonError(w, http.StatusBadRequest, "game: want the key an event's image names (/marquee/image?game=…)")
		return
	}
	if p.pics == nil {
		jsonError(w, http.StatusNotFound, ErrNoPicture.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), pictureTimeout)
	defer cancel()
	data, ctype, err := p.pics.Marquee(ctx, key)
	switch {
	case errors.Is(err, ErrNoPicture):
		jsonError(w, http.StatusNotFound, ErrNoPicture.Error())
		return
	case err != nil:
		p.log.Warn().Str("game", key).Str("reason", untrusted.Clean(err.Error(), 300)).Msg("marquee: the picture could not be read")
		jsonError(w, http.StatusBadGateway, "the picture could not be read: the cabinet's log says why")
		return
	case !pictureTypes[ctype] || len(data) == 0 || len(data) > MaxPicture:
		p.log.Warn().Str("game", key).Str("content_type", untrusted.Clean(ctype, 80)).Int("bytes", len(data)).
			Msg("marquee: the picture is not one the page shows")
		jsonError(w, http.StatusBadGateway, "the picture is not one the page shows")
		return
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Write(data)
}
