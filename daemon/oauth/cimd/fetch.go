package cimd

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/bounded"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

const userAgent = "batocera-cabinet-cimd/1 (+https://github.com/batocera-cabinet/cabinet)"

// fetch gets and checks the document at clientID, and says how long it stays fresh.
func (f *Fetcher) fetch(ctx context.Context, clientID string, t target) (Document, time.Duration, error) {
	addrs, err := f.resolve(ctx, clientID, t.host)
	if err != nil {
		return Document{}, 0, err
	}
	tr := &http.Transport{
		Proxy:                  nil, // a proxy would make its own lookup, past the address check
		DialContext:            pinned(f.dial, addrs, t.port),
		TLSClientConfig:        &tls.Config{ServerName: t.host, RootCAs: f.roots, MinVersion: tls.VersionTLS12},
		DisableKeepAlives:      true,
		DisableCompression:     true, // so the size bound is on what the server sends
		MaxResponseHeaderBytes: 16 << 10,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{
		Transport: tr,
		// The draft forbids following redirects: the document must live at its own URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return Document{}, 0, refuse(ErrClientID, clientID, "it is not a valid URL")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return Document{}, 0, refuse(ErrUnavailable, clientID, "%s; try again later", failure(ctx, t.host, err))
	}
	defer resp.Body.Close()

	if err := checkStatus(clientID, resp.StatusCode); err != nil {
		return Document{}, 0, err
	}
	if err := checkType(clientID, resp.Header.Get("Content-Type")); err != nil {
		return Document{}, 0, err
	}
	if resp.ContentLength > maxBody {
		return Document{}, 0, refuse(ErrDocument, clientID, "the document is %d bytes; this cabinet reads at most %s", resp.ContentLength, bounded.Size(maxBody))
	}
	body, err := bounded.ReadBody(resp.Body, resp.ContentLength, maxBody)
	if len(body) > maxBody {
		return Document{}, 0, refuse(ErrDocument, clientID, "the document is longer than %s, the most this cabinet reads", bounded.Size(maxBody))
	}
	if err != nil || ctx.Err() != nil {
		// A body cut short by the deadline can end cleanly on a race with the closing
		// connection; it is the timeout, not a broken document.
		return Document{}, 0, refuse(ErrUnavailable, clientID, "reading the document: %s; try again later", failure(ctx, t.host, cmp.Or(err, ctx.Err())))
	}
	doc, err := parseDocument(body, clientID)
	if err != nil {
		return Document{}, 0, err
	}
	return doc, freshness(resp.Header), nil
}

// resolve looks the host up and checks every address it has: one non-public address refuses
// the host, since a name that points into the home network on some answers is not a client's.
// IPv4 comes first, the path most homes have.
func (f *Fetcher) resolve(ctx context.Context, clientID, host string) ([]netip.Addr, error) {
	ips, err := f.resolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, refuse(ErrUnavailable, clientID, "looking up %s: %s; check the cabinet's network and DNS, or try again later", host, failure(ctx, host, err))
	}
	if len(ips) == 0 {
		return nil, refuse(ErrUnavailable, clientID, "%s has no address; try again later", host)
	}
	addrs := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		a, ok := netip.AddrFromSlice(ip.IP)
		a = a.Unmap() // the resolver writes IPv4 in 16 bytes; nonPublic sees through a mapped AAAA anyway
		if ok && ip.Zone != "" {
			a = a.WithZone(ip.Zone)
		}
		if why := nonPublic(a); why != "" {
			return nil, refuse(ErrAddress, clientID, "%s resolves to %s, %s; this cabinet fetches client metadata only from public internet addresses", host, a, why)
		}
		addrs = append(addrs, a)
	}
	sort.SliceStable(addrs, func(i, j int) bool { return addrs[i].Is4() && !addrs[j].Is4() })
	return addrs, nil
}

// pinned dials the checked addresses, in turn, whatever address the transport asks for: the
// connection can only go where the check said. Each attempt gets a fair share of the time left,
// so a dead IPv6 route leaves time for IPv4.
func pinned(dial func(context.Context, string, string) (net.Conn, error), addrs []netip.Addr, port uint16) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var last error
		for i, a := range addrs {
			actx, cancel := ctx, context.CancelFunc(func() {})
			if deadline, ok := ctx.Deadline(); ok {
				actx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(len(addrs)-i))
			}
			conn, err := dial(actx, "tcp", netip.AddrPortFrom(a, port).String())
			cancel()
			if err == nil {
				return conn, nil
			}
			last = err
			if ctx.Err() != nil {
				break
			}
		}
		return nil, last
	}
}

// checkStatus accepts 200 only. A redirect or a missing document is the publisher's word
// (ErrDocument, which drops a cached copy); any other answer may pass (ErrUnavailable).
func checkStatus(clientID string, code int) error {
	switch {
	case code == http.StatusOK:
		return nil
	case code >= 300 && code < 400:
		return refuse(ErrDocument, clientID, "the server redirects (HTTP %d); a client metadata document must be served at its own URL, so the client's publisher has to fix it", code)
	case code == http.StatusNotFound || code == http.StatusGone:
		return refuse(ErrDocument, clientID, "there is no document at that URL (HTTP %d); check the client_id the client sends", code)
	case code < 300:
		return refuse(ErrDocument, clientID, "the server answered HTTP %d instead of 200 with the document", code)
	}
	return refuse(ErrUnavailable, clientID, "the server answered HTTP %d %s; try again later", code, http.StatusText(code))
}

// checkType wants JSON: application/json or a +json type. A missing type is refused too: the
// clients known to publish documents all send one, and a server that does not say what it sent
// is not one to read a client's identity from.
func checkType(clientID, header string) error {
	if header == "" {
		return refuse(ErrDocument, clientID, "the server sent no Content-Type; a client metadata document must be served as application/json")
	}
	mt, _, err := mime.ParseMediaType(header)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return refuse(ErrDocument, clientID, "the server sent it as %s; a client metadata document must be served as application/json", show(header, 60))
}

// freshness is how long a document stays fresh: the answer's max-age less its Age, or an hour
// without one, held between five minutes and a day. no-store and no-cache get the five minutes
// too: one authorization reads the document several times, and a host that wants to be asked
// on every request would be asked on every one of anyone's requests.
func freshness(h http.Header) time.Duration {
	d, set := time.Duration(-1), false
	for _, line := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				d, set = 0, true
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64)
				if err != nil || n < 0 {
					n = 0 // an unreadable max-age is stale (RFC 9111 4.2.1)
				}
				if n = min(n, int64(maxFresh/time.Second)); !set || time.Duration(n)*time.Second < d {
					d, set = time.Duration(n)*time.Second, true
				}
			}
		}
	}
	if !set {
		return defaultFresh
	}
	if age, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && age > 0 {
		d -= time.Duration(min(age, int64(maxFresh/time.Second))) * time.Second
	}
	return min(max(d, minFresh), maxFresh)
}

// failure says what went wrong with a connection, in words of ours: a TLS error names every
// name on the server's certificate, and other errors can carry the server's words, so only
// their kind is told, or their cleaned and shortened text.
func failure(ctx context.Context, host string, err error) string {
	var (
		hostErr  x509.HostnameError
		authErr  x509.UnknownAuthorityError
		certErr  x509.CertificateInvalidError
		dnsErr   *net.DNSError
		recError tls.RecordHeaderError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "no answer in time"
	case errors.As(err, &hostErr):
		return fmt.Sprintf("its TLS certificate is not valid for %s", host)
	case errors.As(err, &authErr):
		return "its TLS certificate is not signed by an authority this cabinet trusts"
	case errors.As(err, &certErr):
		return "its TLS certificate is invalid or expired (check the cabinet's clock)"
	case errors.As(err, &recError):
		return "it does not speak TLS on that port"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr) && dnsErr.IsTimeout:
		return "the DNS server did not answer in time"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH):
		return "the host is unreachable from here"
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // not the URL again
	}
	return untrusted.Clean(err.Error(), 160)
}
