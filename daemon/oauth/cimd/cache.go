package cimd

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Fetcher resolves client_id URLs to documents and keeps them. It is safe for concurrent use;
// at most one fetch of a URL is under way at a time, and every caller asking meanwhile gets
// its result.
type Fetcher struct {
	hosts    map[string]bool
	hostList []string // for errors
	anyHost  bool
	resolver HostResolver
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	roots    *x509.CertPool
	now      func() time.Time
	timeout  time.Duration

	mu      sync.Mutex
	entries map[string]*entry // by client_id
	calls   map[string]*call  // fetches under way, by client_id
}

// entry is what the cache knows of one client_id: the last good document, if any, and the last
// failed fetch, if any.
type entry struct {
	doc     Document
	has     bool
	fetched time.Time // of doc
	expires time.Time // doc is fresh until then
	failed  time.Time // the last failed fetch; zero after a good one
	lastErr error
	used    time.Time // for eviction: the least recently used goes first
}

// call is one fetch under way.
type call struct {
	done    chan struct{}
	waiters int // callers waiting, for tests
	doc     Document
	err     error
}

// New returns a Fetcher with o's settings (see Options for the defaults).
func New(o Options) *Fetcher {
	f := &Fetcher{
		hosts:    map[string]bool{},
		resolver: o.Resolver,
		dial:     o.Dial,
		roots:    o.RootCAs,
		now:      o.Now,
		timeout:  o.Timeout,
		entries:  map[string]*entry{},
		calls:    map[string]*call{},
	}
	hosts := o.Hosts
	if hosts == nil {
		hosts = DefaultHosts
	}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" {
			f.anyHost = true
			continue
		}
		if h != "" && !f.hosts[h] {
			f.hosts[h] = true
			f.hostList = append(f.hostList, h)
		}
	}
	if len(f.hostList) == 0 {
		f.hostList = []string{"none"}
	}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	if f.dial == nil {
		f.dial = (&net.Dialer{}).DialContext
	}
	if f.now == nil {
		f.now = time.Now
	}
	if f.timeout <= 0 {
		f.timeout = defaultTimeout
	}
	return f
}

// cached answers from the cache, or joins or starts the fetch of clientID and waits for it.
func (f *Fetcher) cached(ctx context.Context, clientID string, t target) (Document, error) {
	f.mu.Lock()
	now := f.now()
	if e := f.entries[clientID]; e != nil {
		if e.has && now.Before(e.expires) {
			e.used = now
			f.mu.Unlock()
			return e.doc.clone(), nil
		}
		if !e.failed.IsZero() && now.Sub(e.failed) < retryAfter {
			// The host failed moments ago: asking again now would only add load to its trouble.
			defer f.mu.Unlock()
			if e.has && now.Sub(e.fetched) < maxStale {
				e.used = now
				return e.doc.clone(), nil
			}
			return Document{}, fmt.Errorf("%w (not asked again for %s)", e.lastErr, (retryAfter - now.Sub(e.failed)).Round(time.Second))
		}
	}
	c := f.calls[clientID]
	if c == nil {
		if len(f.calls) >= maxInFlight {
			f.mu.Unlock()
			return Document{}, refuse(ErrUnavailable, clientID, "%d other client metadata documents are being fetched; try again in a few seconds", maxInFlight)
		}
		c = &call{done: make(chan struct{})}
		f.calls[clientID] = c
		// The fetch is the URL's, not this caller's: it goes on when this caller gives up, so
		// the others waiting, and the next request, get its answer.
		go f.run(context.WithoutCancel(ctx), clientID, t, c)
	}
	c.waiters++
	f.mu.Unlock()

	select {
	case <-c.done:
		return c.doc.clone(), c.err
	case <-ctx.Done():
		f.mu.Lock()
		c.waiters--
		f.mu.Unlock()
		return Document{}, refuse(ErrUnavailable, clientID, "gave up waiting for the document (%v); try again", ctx.Err())
	}
}

// run fetches, files the result in the cache and hands it to the callers waiting.
func (f *Fetcher) run(ctx context.Context, clientID string, t target, c *call) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	doc, fresh, err := f.fetch(ctx, clientID, t)
	cancel()

	f.mu.Lock()
	c.doc, c.err = f.settle(clientID, f.now(), doc, fresh, err)
	delete(f.calls, clientID)
	f.mu.Unlock()
	close(c.done)
}

// settle files a fetch's outcome and says what the callers get. A failure that may pass
// (ErrUnavailable) leaves the last good copy, and the callers get it while it is under a week
// old. A failure that says the document is wrong or gone (any other) drops the copy: the
// publisher changed or withdrew it, and serving the old one would outvote them.
func (f *Fetcher) settle(clientID string, now time.Time, doc Document, fresh time.Duration, err error) (Document, error) {
	e := f.entries[clientID]
	if e == nil {
		e = &entry{}
		f.entries[clientID] = e
		f.evict(clientID)
	}
	e.used = now
	if err == nil {
		*e = entry{doc: doc, has: true, fetched: now, expires: now.Add(fresh), used: now}
		return doc, nil
	}
	e.failed, e.lastErr = now, err
	if !errors.Is(err, ErrUnavailable) {
		e.doc, e.has = Document{}, false
		return Document{}, err
	}
	if e.has && now.Sub(e.fetched) < maxStale {
		return e.doc, nil
	}
	return Document{}, err
}

// evict drops the least recently used entries but keep while there are more than maxEntries.
func (f *Fetcher) evict(keep string) {
	for len(f.entries) > maxEntries {
		var oldest string
		var at time.Time
		for id, e := range f.entries {
			if id != keep && (oldest == "" || e.used.Before(at)) {
				oldest, at = id, e.used
			}
		}
		delete(f.entries, oldest)
	}
}

// clone copies d's lists, so that a caller changing its Document leaves the cache's alone.
func (d Document) clone() Document {
	d.RedirectURIs = slices.Clone(d.RedirectURIs)
	d.GrantTypes = slices.Clone(d.GrantTypes)
	d.ResponseTypes = slices.Clone(d.ResponseTypes)
	return d
}
