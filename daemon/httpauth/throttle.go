package httpauth

import (
	"container/list"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Throttle defaults: after FailLimit failed authentications within
// FailWindow a peer is answered 429 until the window ends; at most
// MaxPeers peers are tracked (the oldest is forgotten first).
const (
	DefaultFailLimit  = 10
	DefaultFailWindow = time.Minute
	DefaultMaxPeers   = 4096
)

// throttle counts failed authentications per direct peer (the connection's
// address, never a forwarded header). An IPv6 peer is its /64, which one
// machine usually holds whole.
type throttle struct {
	limit  int
	window time.Duration
	max    int

	mu    sync.Mutex
	peers map[netip.Addr]*list.Element // of *peer
	order list.List                    // oldest window first
}

type peer struct {
	addr  netip.Addr
	start time.Time // the window's
	fails int
}

func newThrottle(limit int, window time.Duration, max int) *throttle {
	return &throttle{limit: limit, window: window, max: max, peers: map[netip.Addr]*list.Element{}}
}

// peerKey is the throttled unit of a RemoteAddr ("ip:port").
func peerKey(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		a = p.Addr()
	}
	return a, true
}

// wait says how long the peer must wait before it may try again (0: it may
// now).
func (t *throttle) wait(remote string, now time.Time) time.Duration {
	a, ok := peerKey(remote)
	if !ok {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.peers[a]
	if !ok {
		return 0
	}
	p := e.Value.(*peer)
	end := p.start.Add(t.window)
	if !now.Before(end) || now.Before(p.start) { // over, or the clock went back
		t.order.Remove(e)
		delete(t.peers, a)
		return 0
	}
	if p.fails < t.limit {
		return 0
	}
	return end.Sub(now)
}

// fail counts one failed authentication.
func (t *throttle) fail(remote string, now time.Time) {
	a, ok := peerKey(remote)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.peers[a]; ok {
		p := e.Value.(*peer)
		if now.Before(p.start.Add(t.window)) && !now.Before(p.start) {
			p.fails++
			return
		}
		t.order.Remove(e)
		delete(t.peers, a)
	}
	for len(t.peers) >= t.max {
		old := t.order.Front()
		delete(t.peers, old.Value.(*peer).addr)
		t.order.Remove(old)
	}
	t.peers[a] = t.order.PushBack(&peer{addr: a, start: now, fails: 1})
}

// forgive clears a peer's failures (it authenticated).
func (t *throttle) forgive(remote string) {
	a, ok := peerKey(remote)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.peers[a]; ok {
		t.order.Remove(e)
		delete(t.peers, a)
	}
}

// tracked is how many peers are tracked (for tests).
func (t *throttle) tracked() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.peers)
}
