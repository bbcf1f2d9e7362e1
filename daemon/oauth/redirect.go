package oauth

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Redirect URI classes (RFC 8252 and OAuth 2.1 §2.3.1 as MCP clients use them).
const (
	RedirectHTTPS    = "https"    // a hosted client (claude.ai, an IDE's web callback)
	RedirectLoopback = "loopback" // http on 127.0.0.1, [::1] or localhost, any port (a native app's local listener)
	RedirectApp      = "app"      // a private-use scheme such as cursor:// or com.example.app:/
)

const maxRedirectLen = 2048

// notAppSchemes can never be a native app's private-use scheme: they run
// code, read files or reach servers a browser would open anyway.
var notAppSchemes = map[string]bool{
	"javascript": true, "data": true, "file": true, "vbscript": true, "about": true, "blob": true,
	"filesystem": true, "ws": true, "wss": true, "ftp": true, "mailto": true, "tel": true, "sms": true,
	"chrome": true, "chrome-extension": true, "view-source": true, "intent": true, "jar": true, "http": true, "https": true,
}

// CheckRedirect classifies a redirect URI, or says why it cannot be one:
// https anywhere, http only on loopback, or a private-use scheme; never a
// fragment, user info or a relative URI.
func CheckRedirect(raw string) (class string, err error) {
	if raw == "" || len(raw) > maxRedirectLen {
		return "", fmt.Errorf("a redirect URI must be 1 to %d characters", maxRedirectLen)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] <= 0x20 || raw[i] == 0x7f {
			return "", fmt.Errorf("redirect URI %q has a space or control character", clip(raw))
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("redirect URI %q is not an absolute URI", clip(raw))
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "", fmt.Errorf("redirect URI %q has a fragment", clip(raw))
	}
	if u.User != nil {
		return "", fmt.Errorf("redirect URI %q has user info", clip(raw))
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "https":
		if u.Host == "" || u.Hostname() == "" {
			return "", fmt.Errorf("redirect URI %q has no host", clip(raw))
		}
		return RedirectHTTPS, nil
	case "http":
		if !loopbackHost(u.Hostname()) {
			return "", fmt.Errorf("redirect URI %q: http is allowed only on the client's own machine (127.0.0.1, [::1] or localhost); use https", clip(raw))
		}
		return RedirectLoopback, nil
	}
	if notAppSchemes[scheme] {
		return "", fmt.Errorf("redirect URI %q: the scheme %s cannot be an app's", clip(raw), scheme)
	}
	if u.Opaque == "" && u.Host == "" && u.Path == "" {
		return "", fmt.Errorf("redirect URI %q is not an absolute URI", clip(raw))
	}
	return RedirectApp, nil
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// redirectMatches: the redirect of a request is one registered, exactly,
// except that a loopback one may name any port (RFC 8252 §7.3: a native
// app takes whatever port is free).
func redirectMatches(registered []string, got string) bool {
	for _, r := range registered {
		if r == got {
			return true
		}
	}
	gu, err := url.Parse(got)
	if err != nil || gu.Scheme != "http" || !loopbackHost(gu.Hostname()) {
		return false
	}
	for _, r := range registered {
		ru, err := url.Parse(r)
		if err != nil || ru.Scheme != "http" || !loopbackHost(ru.Hostname()) {
			continue
		}
		if ru.Hostname() == gu.Hostname() && ru.EscapedPath() == gu.EscapedPath() && ru.RawQuery == gu.RawQuery {
			return true
		}
	}
	return false
}

// redirectHost is what the consent page names: the host of an http(s)
// redirect, the scheme of an app's.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Host
	}
	return u.Scheme + ":"
}

// formActionSource is the CSP form-action source that lets the consent
// form's answer redirect to raw (Chrome holds redirects after a form
// submission to form-action).
func formActionSource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + ":"
}

// clip bounds text from a request that goes into an error message.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
