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

// uploadMedia is POST /systems/{sys}/games/{id}/media/{type}: validated like
// HttpApi::ImportMedia, recorded, and not stored.
func (s *Server) uploadMedia(w http.ResponseWriter, r *http.Request, system, id, kind string) {
	if _, ok := s.findGame(system, id); ok && library.IsPathKey(kind) && mediaAccepted(kind, r.Header.Get("Content-Type")) {
		s.post(posted{kind: postOther}) // ES refreshes the view on the UI thread
		s.sendEmpty(w, r, http.StatusOK)
		return
	}
	s.sendText(w, r, http.StatusNotFound, "404 media not found")
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

// mediaAccepted mirrors ImportMedia's content-type checks.
func mediaAccepted(kind, ctype string) bool {
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
		return false
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
		return oneOf(".mp4", ".avi", ".mkv", ".webm")
	case "manual", "magazine":
		return oneOf(".pdf", ".cbz")
	case "map":
		return oneOf(".jpg", ".png", ".gif", ".pdf", ".cbz")
	}
	return oneOf(".jpg", ".png", ".gif")
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

func defaultMedia(path string) ([]byte, bool) {
	if strings.HasSuffix(strings.ToLower(path), ".png") {
		return []byte(tinyPNG), true
	}
	return nil, false
}
