package chromium

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// consentCSP is the policy the cabinet's consent page is to send.
const consentCSP = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'"

// consentPage is a stand-in for the cabinet's OAuth consent page.
const consentPage = `<!doctype html>
<html lang=en><head><meta charset=utf-8>
<meta name=viewport content="width=device-width, initial-scale=1">
<title>Allow access?</title><link rel=stylesheet href=/style.css></head>
<body><h1>Allow %s to use the cabinet?</h1>
<form method=post action=/consent>
<label>PIN <input id=pin name=pin inputmode=numeric autocomplete=one-time-code pattern="[0-9]{6}" maxlength=6 required></label>
<label><input type=checkbox id=read name=scope value=read checked> see games</label>
<label><input type=checkbox id=play name=scope value=play> start games</label>
<input type=hidden name=redirect value="%s">
<button id=approve name=action value=approve>Approve</button>
<button id=deny name=action value=deny>Deny</button>
</form>
<script>document.title = "script ran";</script>
</body></html>`

const consentCSS = `body { font-family: sans-serif; margin: 0 1em; }
h1 { font-size: 1.2em; } label { display: block; margin: 1em 0; }
button { width: 100%; padding: 1em; margin: .5em 0; }`

// consentServer serves the page at /consent (GET) and takes the form
// (POST), answering 303 to the form's redirect field with ?code= or
// ?error=. Query csp= replaces the page's policy.
type consentServer struct {
	mu    sync.Mutex
	posts []post
}

// post is what a POST /consent brought.
type post struct {
	Origin, Cookie string
	Form           url.Values
}

func (s *consentServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/style.css":
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, consentCSS)
	case r.URL.Path == "/consent" && r.Method == http.MethodGet:
		csp := consentCSP
		if c := r.URL.Query().Get("csp"); c != "" {
			csp = c
		}
		w.Header().Set("Content-Security-Policy", csp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.SetCookie(w, &http.Cookie{Name: "visible", Value: "1", Path: "/", Secure: true, SameSite: http.SameSiteStrictMode})
		fmt.Fprintf(w, consentPage, "Claude", r.URL.Query().Get("redirect"))
	case r.URL.Path == "/consent" && r.Method == http.MethodPost:
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.posts = append(s.posts, post{Origin: r.Header.Get("Origin"), Cookie: r.Header.Get("Cookie"), Form: r.PostForm})
		s.mu.Unlock()
		to, err := url.Parse(r.PostForm.Get("redirect"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		q := to.Query()
		if r.PostForm.Get("action") == "approve" {
			q.Set("code", "c0de")
		} else {
			q.Set("error", "access_denied")
		}
		to.RawQuery = q.Encode()
		http.Redirect(w, r, to.String(), http.StatusSeeOther)
	case r.URL.Path == "/done":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>done</title><p>You can close this page.")
	default:
		http.NotFound(w, r)
	}
}

// lastPost is the last form posted, or fails t.
func (s *consentServer) lastPost(t *testing.T) post {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.posts) == 0 {
		t.Fatal("no POST /consent arrived")
	}
	return s.posts[len(s.posts)-1]
}

func (s *consentServer) postCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.posts)
}

// startConsent serves the consent page over HTTPS with a leaf of a test
// CA for cabinet.test; it returns the server and the page's origin.
func startConsent(t *testing.T, pki *testPKI) (*consentServer, *httptest.Server, string) {
	t.Helper()
	cs := &consentServer{}
	srv := httptest.NewUnstartedServer(cs)
	srv.TLS = pki.serverConfig(true)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return cs, srv, "https://cabinet.test:" + portOf(t, srv.Listener.Addr().String())
}
