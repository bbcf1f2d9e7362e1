package fakees

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/batocera-cabinet/cabinet/simulator/library"
)

// findGame resolves a game through a system or collection, as the
// /systems/{sys}/games/{id} routes do.
func (s *Server) findGame(system, id string) (library.Game, bool) {
	v, ok := s.view(system)
	if !ok {
		return library.Game{}, false
	}
	return v.findGame(id)
}

// getMedia is GET /systems/{sys}/games/{id}/media/{type}.
func (s *Server) getMedia(w http.ResponseWriter, r *http.Request, system, id, kind string) {
	g, ok := s.findGame(system, id)
	if ok && library.IsPathKey(kind) {
		if path := g.Meta(kind); path != "" {
			if data, ok := s.cfg.Media(path); ok {
				s.send(w, r, http.StatusOK, mimeType(path), data, false)
				return
			}
			s.sendEmpty(w, r, http.StatusOK) // ES: metadata set, file unreadable
			return
		}
	}
	s.sendText(w, r, http.StatusNotFound, "404 media not found")
}

// uploadMedia is POST /systems/{sys}/games/{id}/media/{type}
// (HttpApi::ImportMedia): a path-typed type and a content type it takes for
// that type; the bytes are written at the scraper's save-as path and the
// game's metadata for the type set to that path. Any failure answers 404
// "404 media not found".
func (s *Server) uploadMedia(w http.ResponseWriter, r *http.Request, system, id, kind string, body []byte) {
	g, ok := s.findGame(system, id)
	ext, accepted := mediaExtension(kind, r.Header.Get("Content-Type"))
	if ok && library.IsPathKey(kind) && accepted {
		path := s.saveAsPath(g, kind, ext)
		// ES ignores what Utils::FileSystem::writeAllText returns.
		_ = s.cfg.WriteFile(path, body)
		if _, ok := s.lib.SetMedia(g.System, g.ID, kind, path); ok {
			s.post(posted{kind: postOther}) // ES refreshes the view on the UI thread
			s.sendEmpty(w, r, http.StatusOK)
			return
		}
	}
	s.sendText(w, r, http.StatusNotFound, "404 media not found")
}

// saveAsPath is Scraper::getSaveAsPath: <system folder>/<folder>/<rom
// stem>-<suffix><ext>, the system being the game's source system and the
// stem that of the ROM file (a game in a subfolder has its media in the
// system folder's). Types the scraper has no case for (image, mix) use
// images/ and "-image".
func (s *Server) saveAsPath(g library.Game, kind, ext string) string {
	suffix, folder := "image", "images"
	switch kind {
	case "thumbnail":
		suffix = "thumb"
	case "marquee", "fanart", "boxback", "wheel", "titleshot", "map", "cartridge", "bezel":
		suffix = kind
	case "boxart":
		suffix = "box"
	case "video":
		suffix, folder = "video", "videos"
	case "manual":
		suffix, folder = "manual", "manuals"
	case "magazine":
		suffix, folder = "magazine", "magazines"
	}
	return s.lib.RomsRoot() + "/" + g.System + "/" + folder + "/" + library.Stem(g.Path) + "-" + suffix + ext
}

// keepUpload is the WriteFile of a Config without one: uploads kept in
// memory for uploadedMedia.
func (s *Server) keepUpload(path string, data []byte) error {
	s.uploadsMu.Lock()
	defer s.uploadsMu.Unlock()
	if s.uploads == nil {
		s.uploads = map[string][]byte{}
	}
	s.uploads[path] = append([]byte(nil), data...)
	return nil
}

// uploadedMedia is the Media of a Config without one: what keepUpload
// kept, else DefaultMedia.
func (s *Server) uploadedMedia(path string) ([]byte, bool) {
	s.uploadsMu.Lock()
	data, ok := s.uploads[path]
	s.uploadsMu.Unlock()
	if ok {
		return data, true
	}
	return DefaultMedia(path)
}

// postMetadata is POST /systems/{sys}/games/{id} (HttpApi::ImportFromJson):
// string values of known non-path keys are applied; nothing changed, a
// non-object or invalid JSON all answer 404 "404 game not found".
func (s *Server) postMetadata(w http.ResponseWriter, r *http.Request, system, id string, body []byte) {
	g, ok := s.findGame(system, id)
	var raw map[string]json.RawMessage
	if ok && json.Unmarshal(body, &raw) == nil {
		values := map[string]string{}
		for k, v := range raw {
			var str string
			if json.Unmarshal(v, &str) == nil {
				values[k] = str
			}
		}
		if changed, _ := s.lib.SetMeta(g.System, g.ID, values); changed {
			s.post(posted{kind: postOther})
			s.sendEmpty(w, r, http.StatusOK)
			return
		}
	}
	s.sendText(w, r, http.StatusNotFound, "404 game not found")
}

// mediaExtension mirrors ImportMedia's content-type checks: the file
// extension the content type gives, and whether the media type takes it.
func mediaExtension(kind, ctype string) (string, bool) {
	var ext string
	switch {
	case strings.HasPrefix(ctype, "image/"):
		ext = "." + ctype[6:]
		switch ext {
		case ".jpeg":
			ext = ".jpg"
		case ".svg+xml":
			ext = ".svg"
		}
	case strings.HasPrefix(ctype, "video/"):
		ext = "." + ctype[6:]
		if ext == ".quicktime" {
			ext = ".mov"
		}
	case strings.HasPrefix(ctype, "application/"):
		ext = "." + ctype[12:]
	default:
		return "", false
	}
	oneOf := func(list ...string) bool {
		for _, x := range list {
			if ext == x {
				return true
			}
		}
		return false
	}
	switch kind {
	case "video":
		return ext, oneOf(".mp4", ".avi", ".mkv", ".webm")
	case "manual", "magazine":
		return ext, oneOf(".pdf", ".cbz")
	case "map":
		return ext, oneOf(".jpg", ".png", ".gif", ".pdf", ".cbz")
	}
	return ext, oneOf(".jpg", ".png", ".gif")
}

// mimeType is HttpServerThread::getMimeType.
func mimeType(path string) string {
	ext := ""
	if i := strings.LastIndexByte(path, '.'); i >= 0 && !strings.ContainsRune(path[i:], '/') {
		ext = strings.ToLower(path[i+1:])
	}
	switch ext {
	case "html", "htm":
		return "text/html"
	case "css":
		return "text/css"
	case "jpeg", "jpg":
		return "image/jpg"
	case "png":
		return "image/png"
	case "gif":
		return "image/gif"
	case "webp":
		return "image/webp"
	case "svg":
		return "image/svg+xml"
	case "ico":
		return "image/x-icon"
	case "json":
		return "application/json"
	case "pdf":
		return "application/pdf"
	case "js":
		return "application/javascript"
	case "wasm":
		return "application/wasm"
	case "xml":
		return "application/xml"
	case "xhtml":
		return "application/xhtml+xml"
	}
	return "text/plain"
}

// tinyPNG is the 4x4 PNG the captured ES served as a game image.
const tinyPNG = "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x04\x00\x00\x00\x04" +
	"\x08\x02\x00\x00\x00\x26\x93\x09\x29\x00\x00\x00\x10\x49\x44\x41\x54\x78\x9c\x63\xf8\xcf\xc0\x00\x47" +
	"\x0c\xc4\x71\x00\xae\x93\x0f\xf1\xd0\x5f\x23\x9e\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82"

// DefaultMedia is what the fake serves for a media path nothing was
// uploaded to: a tiny PNG for .png paths and, for the rest, nothing (ES
// then answers 200 with an empty body, as for a file it cannot read).
func DefaultMedia(path string) ([]byte, bool) {
	if strings.HasSuffix(strings.ToLower(path), ".png") {
		return []byte(tinyPNG), true
	}
	return nil, false
}
