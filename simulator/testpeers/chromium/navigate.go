package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// Response is how a main-frame navigation ended.
type Response struct {
	// URL is the last URL the navigation requested, after redirects:
	// for an OAuth redirect to a callback nobody serves, the callback URL
	// with its code, though the page then shows Chromium's error page.
	URL string
	// Status and Header are the main document's response (the last one,
	// after redirects); Status is 0 when no response arrived. Header keys
	// are canonical whatever the protocol (HTTP/2 sends them lower case).
	// Chromium leaves Set-Cookie out of them: read cookies with Cookies.
	Status int
	Header http.Header
	// SecurityState is Chromium's verdict on the connection: "secure" for
	// HTTPS with a trusted (or TrustCerts) certificate, and for plain HTTP
	// to 127.0.0.1 or localhost; "insecure" for plain HTTP to a name
	// (Options.Hosts); "" when no response arrived.
	SecurityState string
	// NetError is Chromium's error when the navigation failed
	// ("net::ERR_CONNECTION_REFUSED", "net::ERR_ABORTED" when a
	// Content-Security-Policy form-action blocked it or a 204 left the
	// page as it was). A failed navigation is a result, not an error:
	// the error return is for the browser or the deadline failing.
	NetError string
	// Redirects are the URLs that answered with a redirect, in order.
	Redirects []string
}

// navigations follows the main frame's navigations through the events:
// requestWillBeSent (again per redirect), responseReceived, then the load
// event of the committed document, or loadingFailed.
type navigations struct {
	conn    *conn
	mu      sync.Mutex
	order   []string // loader ids, in the order the navigations started
	byID    map[string]*navigation
	changed chan struct{} // a token when a navigation ended
}

type navigation struct {
	resp   Response
	failed bool
	done   bool
}

// watch follows the main frame's navigations from now on. Register it
// before starting a navigation; stop it after.
func (b *Browser) watch() (*navigations, func()) {
	n := &navigations{conn: b.conn, byID: map[string]*navigation{}, changed: make(chan struct{}, 1)}
	session, frame := b.session, b.frame
	stop := b.conn.listen(func(e event) {
		if e.SessionID == session {
			n.see(frame, e)
		}
	})
	return n, stop
}

func (n *navigations) see(frame string, e event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var p struct {
		RequestID string `json:"requestId"`
		LoaderID  string `json:"loaderId"`
		FrameID   string `json:"frameId"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		ErrorText string `json:"errorText"`
		Canceled  bool   `json:"canceled"`
		URL       string `json:"url"`
		NavType   string `json:"navigationType"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
		RedirectResponse *struct {
			URL string `json:"url"`
		} `json:"redirectResponse"`
		Response struct {
			URL           string            `json:"url"`
			Status        int               `json:"status"`
			Headers       map[string]string `json:"headers"`
			SecurityState string            `json:"securityState"`
		} `json:"response"`
	}
	switch e.Method {
	case "Page.frameStartedNavigating", "Network.requestWillBeSent", "Network.responseReceived",
		"Network.loadingFinished", "Network.loadingFailed", "Page.lifecycleEvent":
	default:
		return
	}
	if json.Unmarshal(e.Params, &p) != nil {
		return
	}
	if e.Method == "Page.frameStartedNavigating" {
		// (about:blank and the like send no request.)
		if p.FrameID != frame || p.LoaderID == "" || strings.HasPrefix(p.NavType, "sameDocument") {
			return
		}
		if nav := n.start(p.LoaderID); !nav.done && nav.resp.URL == "" {
			nav.resp.URL = p.URL
		}
		return
	}
	if e.Method == "Network.requestWillBeSent" {
		// A navigation request's id is its loader id.
		if p.Type != "Document" || p.FrameID != frame || p.RequestID != p.LoaderID {
			return
		}
		nav := n.start(p.LoaderID)
		if nav.done {
			return
		}
		if p.RedirectResponse != nil {
			nav.resp.Redirects = append(nav.resp.Redirects, p.RedirectResponse.URL)
		}
		nav.resp.URL = p.Request.URL
		return
	}
	id := p.RequestID
	if e.Method == "Page.lifecycleEvent" {
		if p.FrameID != frame {
			return
		}
		id = p.LoaderID
	}
	nav := n.byID[id]
	if nav == nil || nav.done {
		return
	}
	switch e.Method {
	case "Network.responseReceived":
		r := p.Response
		nav.resp.URL, nav.resp.Status, nav.resp.SecurityState = r.URL, r.Status, r.SecurityState
		nav.resp.Header = http.Header{}
		for k, v := range r.Headers {
			for _, line := range strings.Split(v, "\n") { // repeated headers
				nav.resp.Header.Add(k, line)
			}
		}
	case "Network.loadingFinished":
		if nav.resp.Status == 204 || nav.resp.Status == 205 {
			n.end(nav) // No Content: nothing commits, the page stays
		}
	case "Network.loadingFailed":
		if nav.failed {
			return
		}
		nav.resp.NetError, nav.failed = p.ErrorText, true
		if p.Canceled {
			n.end(nav) // blocked or abandoned: nothing commits
		}
		// Otherwise an error page commits under the same loader id;
		// its load ends the navigation.
	case "Page.lifecycleEvent":
		if p.Name == "load" {
			n.end(nav)
		}
	}
}

// start is the navigation with loader id, new or seen before; n.mu is held.
func (n *navigations) start(loader string) *navigation {
	nav := n.byID[loader]
	if nav == nil {
		nav = &navigation{}
		n.byID[loader] = nav
		n.order = append(n.order, loader)
	}
	return nav
}

// end marks nav ended; n.mu is held.
func (n *navigations) end(nav *navigation) {
	nav.done = true
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

// wait returns the outcome of the navigation with loader id loader, or of
// the first one seen when loader is "", once it has ended.
func (n *navigations) wait(ctx context.Context, loader, what string) (Response, error) {
	for {
		n.mu.Lock()
		id := loader
		if id == "" && len(n.order) > 0 {
			id = n.order[0]
		}
		nav := n.byID[id]
		if nav != nil && nav.done {
			resp := nav.resp
			n.mu.Unlock()
			return resp, nil
		}
		n.mu.Unlock()
		select {
		case <-n.changed:
		case <-n.conn.closed:
			return Response{}, fmt.Errorf("%s: %w", what, n.conn.errOf())
		case <-ctx.Done():
			if nav == nil {
				return Response{}, fmt.Errorf("%s: no navigation started: %w", what, ctx.Err())
			}
			n.mu.Lock()
			resp := nav.resp
			n.mu.Unlock()
			return resp, fmt.Errorf("%s: navigation to %s did not finish loading: %w", what, resp.URL, ctx.Err())
		}
	}
}

// Navigate loads url in the page and waits for its load event (or for
// the navigation to fail: see Response.NetError).
func (b *Browser) Navigate(ctx context.Context, url string) (Response, error) {
	ctx, cancel := b.deadline(ctx)
	defer cancel()
	n, stop := b.watch()
	defer stop()
	var r struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := b.conn.call(ctx, b.session, "Page.navigate", map[string]any{"url": url}, &r); err != nil {
		return Response{}, fmt.Errorf("navigate %s: %w", url, err)
	}
	if r.LoaderID == "" {
		// Same document (a fragment): nothing loads.
		return Response{URL: url, NetError: r.ErrorText}, nil
	}
	resp, err := n.wait(ctx, r.LoaderID, "navigate "+url)
	if err == nil && resp.NetError == "" {
		resp.NetError = r.ErrorText
	}
	return resp, err
}
