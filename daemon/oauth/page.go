package oauth

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/httpauth"
)

// scopeText says what each scope lets a client do, for the consent page.
func scopeText(scope string) string {
	switch scope {
	case httpauth.ScopeRead:
		return "See what the cabinet is doing, its games and play history"
	case httpauth.ScopePlay:
		return "Launch, pause and quit games, change the volume"
	case httpauth.ScopeLibrary:
		return "Search the household's game servers and install games"
	case httpauth.ScopePower:
		return "Restart or shut down the cabinet"
	case httpauth.ScopeHousehold:
		return "Change the children's play-time rules"
	}
	return ""
}

type pageScope struct {
	Name, Text string
	Checked    bool
}

type pageData struct {
	Title, Message string
	// The consent form's, when it is one.
	Consent      bool
	ClientName   string
	ClientID     string
	Verified     string // the host a metadata document came from
	RedirectHost string
	RedirectURI  string
	Loopback     bool // the callback is on the client's own machine
	Scopes       []pageScope
	Request      string
	CSRF         string
	Expires      string
	Error        string
	Nonce        string
}

// pageCSS is the pages' only style. The page is plain HTML and CSS (no
// script): it must work on a phone and in any browser an app opens.
const pageCSS = `
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f4f4f6;color:#1d1d22}
main{max-width:30rem;margin:0 auto;padding:1.2rem}
.card{background:#fff;border-radius:12px;padding:1.2rem 1.3rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 .8rem}
.client{font-weight:600;word-break:break-word}
.tag{display:inline-block;font-size:.75rem;font-weight:600;padding:.05rem .45rem;border-radius:6px;background:#fff1c2;color:#6b4e00;margin-left:.3rem;vertical-align:middle}
.where{background:#f0f3f8;border-radius:8px;padding:.6rem .8rem;margin:.8rem 0;word-break:break-all;font-family:ui-monospace,Menlo,monospace;font-size:.9rem}
.warn{color:#8a4b00}
fieldset{border:0;padding:0;margin:1rem 0}
legend{font-weight:600;margin-bottom:.4rem}
label.scope{display:flex;gap:.6rem;align-items:flex-start;padding:.45rem 0;border-top:1px solid #eee}
label.scope input{margin-top:.3rem;width:1.2rem;height:1.2rem}
.scope b{display:block}
label.pin{display:block;font-weight:600;margin:1rem 0 .3rem}
input.pin{font-size:1.8rem;letter-spacing:.3rem;width:100%;box-sizing:border-box;padding:.4rem .6rem;border:2px solid #99a;border-radius:8px;text-align:center}
.error{background:#fde8e8;color:#8b1111;border-radius:8px;padding:.6rem .8rem;margin:.8rem 0}
.buttons{display:flex;gap:.8rem;margin-top:1.2rem}
button{flex:1;font-size:1.05rem;padding:.75rem;border-radius:8px;border:0;cursor:pointer}
button.ok{background:#2556d8;color:#fff}
button.no{background:#e4e4ea;color:#1d1d22}
.small{font-size:.85rem;color:#555}
`

// render writes the page's HTML, every value escaped. (Not html/template:
// its reflection keeps every exported method in the binary, 3 MB more.)
func (d pageData) render() []byte {
	var b strings.Builder
	e := html.EscapeString
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>` + e(d.Title) + ` · Cabinet</title>
<style nonce="` + e(d.Nonce) + `">` + pageCSS + `</style></head>
<body><main><div class="card">
<h1>` + e(d.Title) + `</h1>
`)
	if !d.Consent {
		b.WriteString(`<p id="message">` + e(d.Message) + `</p>
</div></main></body></html>
`)
		return []byte(b.String())
	}
	b.WriteString(`<p><span class="client">` + e(d.ClientName) + `</span><span class="tag">unverified name</span> asks to use this cabinet.</p>
`)
	if d.Verified != "" {
		b.WriteString(`<p class="small">Its description came from <b>` + e(d.Verified) + `</b>.</p>
`)
	}
	b.WriteString(`<p>After you approve, you return to:</p>
<div class="where" id="redirect">` + e(d.RedirectURI) + `</div>
`)
	if d.Loopback {
		b.WriteString(`<p class="warn small">That address is on the computer that opened this page. Approve only if you started this sign-in there yourself.</p>
`)
	}
	if d.Error != "" {
		b.WriteString(`<div class="error" id="error" role="alert">` + e(d.Error) + `</div>
`)
	}
	b.WriteString(`<form method="post" action="/oauth/authorize" autocomplete="off">
<input type="hidden" name="request" value="` + e(d.Request) + `">
<input type="hidden" name="csrf" value="` + e(d.CSRF) + `">
<fieldset><legend>It may:</legend>
`)
	for _, sc := range d.Scopes {
		checked := ""
		if sc.Checked {
			checked = " checked"
		}
		b.WriteString(`<label class="scope"><input type="checkbox" name="scope" value="` + e(sc.Name) + `"` + checked + `><span><b>` +
			e(sc.Name) + `</b>` + e(sc.Text) + `</span></label>
`)
	}
	b.WriteString(`</fieldset>
<label class="pin" for="pin">The PIN on the cabinet's TV</label>
<input class="pin" id="pin" name="pin" inputmode="numeric" pattern="[0-9 ]*" maxlength="7" autocomplete="one-time-code" required autofocus>
<p class="small">Only someone in front of the cabinet can see it. This request ends in ` + e(d.Expires) + `.</p>
<div class="buttons"><button class="no" type="submit" name="action" value="deny" formnovalidate>Deny</button>
<button class="ok" type="submit" name="action" value="approve">Approve</button></div>
</form>
</div></main></body></html>
`)
	return []byte(b.String())
}

// page writes an HTML page with the headers every one of ours carries: no
// framing, no script, forms only to the cabinet (and, for the consent, to
// the client's return address, where the approval redirects).
func (s *Server) page(w http.ResponseWriter, status int, d pageData, formTargets ...string) {
	d.Nonce = newID()
	body := d.render()
	action := "'self'"
	for _, t := range formTargets {
		if t != "" {
			action += " " + t
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+d.Nonce+"'; img-src 'self'; form-action "+action+
		"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer Chromium sends the
	// form's POST with Origin: null, which the origin check refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	w.WriteHeader(status)
	w.Write(body)
}

// consentPage shows p's consent form, with an error line when given.
func (s *Server) consentPage(w http.ResponseWriter, status int, p *pending, errText string) {
	d := pageData{Title: "Connect an app to the cabinet", Consent: true, ClientName: p.client.Name, ClientID: p.client.ID,
		Verified: p.verified, RedirectHost: redirectHost(p.redirect), RedirectURI: p.redirect, Request: p.id, CSRF: p.csrf,
		Expires: minutesLeft(p.expires.Sub(s.clock.Now())), Error: errText}
	if c, err := CheckRedirect(p.redirect); err == nil && c == RedirectLoopback {
		d.Loopback = true
	}
	for _, k := range p.asked {
		d.Scopes = append(d.Scopes, pageScope{Name: k, Text: scopeText(k), Checked: defaultGranted(k)})
	}
	s.page(w, status, d, formActionSource(p.redirect))
}

// minutesLeft says how long a request has left, as the page shows it (a
// time of day would be in the cabinet's zone, not the phone's).
func minutesLeft(d time.Duration) string {
	if m := int((d + time.Minute - 1) / time.Minute); m > 1 {
		return fmt.Sprintf("%d minutes", m)
	}
	return "a minute"
}
