package fakees

import (
	"io"
	"net/http"
	"strings"
)

// maxRequestBody bounds what the fake reads from a request.
const maxRequestBody = 16 << 20

// ServeHTTP routes like ES's HttpServerThread: exact routes and greedy
// cpp-httplib patterns tried in registration order, the first full match
// winning; an unmatched POST (or any other method) gets cpp-httplib's empty
// 404, an unmatched GET ES's own catch-all "404 not found".
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.preflight(w, r) {
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		s.serveGet(w, r)
		return
	}
	var body []byte
	if expectsContent(r) {
		// cpp-httplib reads a request without Content-Length until the
		// client closes or its 5 s read timeout fires, then answers 400
		// with no body; the fake answers at once.
		if r.Header.Get("Content-Length") == "" && len(r.TransferEncoding) == 0 {
			s.sendEmpty(w, r, http.StatusBadRequest)
			return
		}
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		if err != nil {
			s.sendEmpty(w, r, http.StatusBadRequest)
			return
		}
		if len(body) > maxRequestBody {
			s.sendEmpty(w, r, http.StatusRequestEntityTooLarge)
			return
		}
	}
	if r.Method == http.MethodPost && s.servePost(w, r, body) {
		return
	}
	s.sendEmpty(w, r, http.StatusNotFound)
}

// expectsContent is cpp-httplib's detail::expect_content.
func expectsContent(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, "PRI":
		return true
	case http.MethodDelete:
		return r.Header.Get("Content-Length") != ""
	}
	return false
}

func (s *Server) serveGet(w http.ResponseWriter, r *http.Request) {
	if s.forbid(w, r) {
		return // every GET path matches some ES route, so every one checks
	}
	p := r.URL.Path
	switch p {
	case "/":
		w.Header().Set("Location", "/index.html")
		s.sendEmpty(w, r, http.StatusFound)
		return
	case "/favicon.png":
		s.sendEmpty(w, r, http.StatusOK) // no resource: the handler sets nothing
		return
	case "/index.html":
		s.send(w, r, http.StatusOK, "text/html", []byte(indexPage), false)
		return
	case "/quit", "/restart", "/shutdown":
		// Recorded, and their events fired as ES fires them; nothing
		// quits, reboots or powers off (see quitRoute).
		s.record(strings.TrimPrefix(p, "/"), r.Method, p, nil)
		s.quitRoute(p, r.URL.Query().Get("confirm"))
		s.sendEmpty(w, r, http.StatusOK)
		return
	case "/emukill":
		s.record(RouteEmuKill, r.Method, p, nil)
		s.emuKill(r.Context())
		s.sendEmpty(w, r, http.StatusOK)
		return
	case "/caps":
		s.sendJSON(w, r, http.StatusOK, capsJSON(s.cfg.Version))
		return
	case "/systems":
		s.sendJSON(w, r, http.StatusOK, systemsJSON(s.views()))
		return
	case "/runningGame":
		if g, ok := s.Running(); ok {
			s.sendJSON(w, r, http.StatusOK, s.gameJSON(g, false))
		} else {
			s.sendJSON(w, r, http.StatusCreated, []byte(`{"msg":"NO GAME RUNNING"}`))
		}
		return
	case "/isIdle":
		if _, running := s.Running(); running {
			s.sendJSON(w, r, http.StatusCreated, []byte("[ false ]"))
		} else {
			s.sendJSON(w, r, http.StatusOK, []byte("[ true ]"))
		}
		return
	}
	localpaths := r.URL.Query().Get("localpaths") == "true"
	if s.routes.logo.MatchString(p) {
		s.sendText(w, r, http.StatusNotFound, "404 not found") // the fake has no theme
	} else if m := s.routes.games.FindStringSubmatch(p); m != nil {
		if v, ok := s.view(m[1]); ok {
			s.sendJSON(w, r, http.StatusOK, s.gamesJSON(v.games))
		} else {
			s.sendText(w, r, http.StatusNotFound, "404 system not found")
		}
	} else if m := s.routes.media.FindStringSubmatch(p); m != nil {
		s.getMedia(w, r, m[1], m[2], m[3])
	} else if m := s.routes.game.FindStringSubmatch(p); m != nil {
		if g, ok := s.findGame(m[1], m[2]); ok {
			s.sendJSON(w, r, http.StatusOK, s.gameJSON(g, localpaths))
		} else {
			s.sendText(w, r, http.StatusNotFound, "404 game not found")
		}
	} else if m := s.routes.system.FindStringSubmatch(p); m != nil {
		if v, ok := s.view(m[1]); ok {
			s.sendJSON(w, r, http.StatusOK, systemJSON(v))
		} else {
			s.sendText(w, r, http.StatusNotFound, "404 not found")
		}
	} else if p == "/reloadgames" {
		s.record(RouteReloadGames, r.Method, p, nil)
		s.post(posted{kind: postReload})
		s.sendEmpty(w, r, http.StatusOK)
	} else {
		// /resources/... and the /{path} fallback: no resource files here.
		s.sendText(w, r, http.StatusNotFound, "404 not found")
	}
}

// servePost reports whether a POST route matched.
func (s *Server) servePost(w http.ResponseWriter, r *http.Request, body []byte) bool {
	p := r.URL.Path
	var route string
	var m []string
	switch {
	case s.routes.media.MatchString(p):
		route, m = RouteMediaUpload, s.routes.media.FindStringSubmatch(p)
	case s.routes.game.MatchString(p):
		route, m = RouteMetadata, s.routes.game.FindStringSubmatch(p)
	case p == "/messagebox":
		route = RouteMessageBox
	case p == "/notify":
		route = RouteNotify
	case p == "/storage/event":
		route = RouteStorageEvent
	case p == "/launch":
		route = RouteLaunch
	case s.routes.addgames.MatchString(p):
		route, m = RouteAddGames, s.routes.addgames.FindStringSubmatch(p)
	case s.routes.removegames.MatchString(p):
		route, m = RouteRemoveGames, s.routes.removegames.FindStringSubmatch(p)
	default:
		return false
	}
	if s.forbid(w, r) {
		return true
	}
	if len(body) == 0 {
		ctype := "text/html"
		if route == RouteStorageEvent {
			ctype = "text/plain"
		}
		s.send(w, r, http.StatusBadRequest, ctype, []byte("400 bad request - body is missing"), false)
		return true
	}
	if route == RouteMediaUpload && r.Header.Get("Content-Type") == "" {
		s.sendText(w, r, http.StatusBadRequest, "400 missing content-type")
		return true
	}
	s.record(route, r.Method, p, body)
	switch route {
	case RouteMediaUpload:
		s.uploadMedia(w, r, m[1], m[2], m[3], body)
	case RouteMetadata:
		s.postMetadata(w, r, m[1], m[2], body)
	case RouteMessageBox:
		s.post(posted{kind: postOther})
		s.sendEmpty(w, r, http.StatusOK)
	case RouteNotify:
		// displayNotificationMessage runs on the HTTP thread: nothing posted.
		s.sendEmpty(w, r, http.StatusOK)
	case RouteStorageEvent:
		s.post(posted{kind: postOther})
		s.send(w, r, http.StatusOK, "text/plain", []byte("OK"), false)
	case RouteLaunch:
		s.launchPath(string(body))
		s.sendEmpty(w, r, http.StatusOK) // whether or not anything matched
	case RouteAddGames:
		if _, ok := s.lib.System(m[1]); !ok {
			s.sendText(w, r, http.StatusNotFound, "404 System not found")
		} else {
			s.sendEmpty(w, r, http.StatusNoContent) // "nothing added": the fake never adds
		}
	case RouteRemoveGames:
		if _, ok := s.view(m[1]); !ok {
			s.sendText(w, r, http.StatusNotFound, "404 not found")
		} else {
			s.sendEmpty(w, r, http.StatusNoContent) // "nothing removed": the fake never deletes
		}
	}
	return true
}

// indexPage is ES's built-in page for a build without resources/services.
const indexPage = "<!DOCTYPE html>\r\n<html lang='fr'>\r\n<head>\r\n<title>EmulationStation services</title>\r\n" +
	"<link rel=\"shortcut icon\" href=\"favicon.png\">\r\n</head>\r\n" +
	"<body style='font-family: Open Sans, sans-serif;'>\r\n<p>EmulationStation services</p>\r\n" +
	"<script type='text/javascript'>\r\n" +
	"function quitES() {\r\nvar xhr = new XMLHttpRequest();\r\nxhr.open('GET', '/quit');\r\nxhr.send(); }\r\n" +
	"function reloadGamelists() {\r\nvar xhr = new XMLHttpRequest();\r\nxhr.open('GET', '/reloadgames');\r\nxhr.send(); }\r\n" +
	"function emuKill() {\r\nvar xhr = new XMLHttpRequest();\r\nxhr.open('GET', '/emukill');\r\nxhr.send(); }\r\n" +
	"</script>\r\n<img src='vid.jpg'/>\r\n" +
	"<input type='button' value='Reload games' onClick='reloadGamelists()'/>\r\n<br/>" +
	"<input type='button' value='Quit' onClick='quitES()'/>\r\n<br/>" +
	"<input type='button' value='Kill emulator' onClick='emuKill()'/>\r\n</body>\r\n</html>"
