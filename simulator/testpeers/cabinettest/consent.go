package cabinettest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TVPIN waits for a sign-in PIN among the texts the TV showed (shown:
// the fake ES's notifications, oldest first) after the first skip of them,
// and returns it with how many texts there were.
func TVPIN(t testing.TB, shown func() []string, skip int) (pin string, seen int) {
	t.Helper()
	Await(t, "a sign-in PIN on the TV (an ES notification)", nil, func() (bool, string) {
		texts := shown()
		seen = len(texts)
		for i := len(texts) - 1; i >= skip && i >= 0; i-- {
			if p, ok := PINIn(texts[i]); ok {
				pin = p
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d texts", seen)
	})
	return pin, seen
}

// Consent is the person in the browser: it opens an authorization URL,
// reads the consent form, types the PIN the TV shows, ticks the scopes
// given (nil: those ticked by default) and approves, then returns the
// query of the redirect to the client (code, state, iss; or error).
type Consent struct {
	// Client trusts the cabinet's certificate; its redirects are not
	// followed. A cookie jar is added when it has none.
	Client *http.Client
	// Issuer is the cabinet's origin, the Origin of the form's POST.
	Issuer string
	// PIN returns the PIN on the TV once the page is open.
	PIN func() string
	// Grant are the scopes to tick; nil keeps the page's defaults.
	Grant []string
	// Deny presses Deny instead.
	Deny bool
}

var (
	formRequest = regexp.MustCompile(`name="request" value="([^"]+)"`)
	formCSRF    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	formChecked = regexp.MustCompile(`name="scope" value="([a-z]+)" checked`)
)

// Approve runs the consent for authURL.
func (c Consent) Approve(authURL string) (url.Values, error) {
	hc := *c.Client
	if hc.Jar == nil {
		hc.Jar, _ = cookiejar.New(nil)
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Get(authURL)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther { // an error sent straight back to the client
		return redirectQuery(resp)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("consent page: %d %s", resp.StatusCode, body)
	}
	req, csrf := formRequest.FindSubmatch(body), formCSRF.FindSubmatch(body)
	if req == nil || csrf == nil {
		return nil, fmt.Errorf("no consent form in the page: %s", body)
	}
	form := url.Values{"request": {string(req[1])}, "csrf": {string(csrf[1])}, "action": {"approve"}}
	if c.Deny {
		form.Set("action", "deny")
	} else {
		form.Set("pin", c.PIN())
	}
	grant := c.Grant
	if grant == nil {
		for _, m := range formChecked.FindAllSubmatch(body, -1) {
			grant = append(grant, string(m[1]))
		}
	}
	form["scope"] = grant
	post, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(c.Issuer, "/")+"/oauth/authorize", strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Origin", c.Issuer)
	resp, err = hc.Do(post)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, fmt.Errorf("consent answer: %d %s", resp.StatusCode, b)
	}
	return redirectQuery(resp)
}

func redirectQuery(resp *http.Response) (url.Values, error) {
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return u.Query(), nil
}
