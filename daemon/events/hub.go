// Package events is the cabinet's live feed for second screens: a hub that
// fans what happens (the game under ES's cursor, the game running, an
// achievement, a session) out to Server-Sent Events clients at GET /events,
// and the marquee page at GET /marquee that follows it, with the picture
// at GET /marquee/image. The hub keeps the last event of each kind, so a
// screen that connects shows the current state at once.
//
// The hub never makes its publisher wait: every client has a small
// buffer, and a client whose buffer is full (it stopped reading) is dropped,
// not waited for. Memory is bounded whatever the clients do: at most
// MaxClients clients, Buffer events queued each, MaxData bytes an event, and
// the events are shared, never copied per client.
//
// The routes are mounted by the daemon through httpauth (Routes): the page
// is HTML without data and needs no token; the stream and the picture need
// a caller with the read scope.
package events

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
)

// The kinds of event (the names are the contract: the SSE event names).
const (
	KindSelection   = "selection"   // the game or system under ES's cursor (Selection)
	KindNowPlaying  = "now_playing" // the game running, or none (NowPlaying)
	KindAchievement = "achievement" // an achievement unlocked (Achievement)
	KindSession     = "session"     // a play session started or ended (Session)
)

// Kinds are every kind, in the order a new client gets their last events.
var Kinds = []string{KindNowPlaying, KindSelection, KindSession, KindAchievement}

// Defaults of Options.
const (
	DefaultMaxClients = 64
	DefaultBuffer     = 16
	DefaultMaxData    = 16 << 10
	DefaultHeartbeat  = 15 * time.Second
	// DefaultWriteTimeout bounds one write to a client: a client that
	// stopped reading (its TCP window closed) is cut after it.
	DefaultWriteTimeout = 10 * time.Second
)

// Errors callers can tell apart (errors.Is).
var (
	ErrFull        = errors.New("too many screens are connected")
	ErrUnknownKind = errors.New("unknown event kind")
	ErrTooLarge    = errors.New("event data too large")
)

// Options configure a hub; zero values take the defaults.
type Options struct {
	MaxClients int           // clients connected at once (DefaultMaxClients)
	Buffer     int           // events queued per client before it is dropped (DefaultBuffer)
	MaxData    int           // bytes of an event's JSON (DefaultMaxData)
	Heartbeat  time.Duration // a comment line this often keeps proxies from closing an idle stream
	// WriteTimeout bounds each write to a client (real time: it is a
	// socket deadline).
	WriteTimeout time.Duration
	Clock        clock.Clock // heartbeats (nil: real time)
}

// Event is one published event as clients receive it.
type Event struct {
	ID   string          // "<hub epoch>-<sequence>": unique across restarts of the daemon
	Kind string          // one of Kinds
	Data json.RawMessage // the publisher's value, as JSON
	seq  uint64
	// frame is the event as SSE lines, encoded once for every client.
	frame []byte
}

// Stats are counters of a hub's life.
type Stats struct {
	Clients   int    // connected now
	Published uint64 // events published
	Dropped   uint64 // clients dropped because their buffer was full
	Refused   uint64 // clients refused because MaxClients were connected
}

// Hub fans events out to clients. Its zero value is not usable: New.
type Hub struct {
	opts  Options
	epoch string // this hub's part of event ids

	mu      sync.Mutex
	seq     uint64
	last    map[string]*Event // the last event of each kind
	clients map[*Client]struct{}
	stats   Stats
}

// New returns a hub with no client and no event.
func New(opts Options) *Hub {
	if opts.MaxClients <= 0 {
		opts.MaxClients = DefaultMaxClients
	}
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	if opts.MaxData <= 0 {
		opts.MaxData = DefaultMaxData
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	opts.Clock = clock.Or(opts.Clock)
	var b [4]byte
	rand.Read(b[:])
	return &Hub{opts: opts, epoch: hex.EncodeToString(b[:]), last: map[string]*Event{}, clients: map[*Client]struct{}{}}
}

// Publish sends data, encoded as JSON, to every client as an event of
// kind, and keeps it as that kind's last event for clients that connect
// later. It never blocks on a client: one whose buffer is full is dropped
// (its stream ends; a browser connects again and gets the last events). It
// fails only for an unknown kind, data that does not encode, or data over
// MaxData bytes; nothing is sent then.
func (h *Hub) Publish(kind string, data any) error {
	if !slices.Contains(Kinds, kind) {
		return fmt.Errorf("publish %q: %w (want one of %s)", kind, ErrUnknownKind, strings.Join(Kinds, ", "))
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("publish %s: %w", kind, err)
	}
	if len(raw) > h.opts.MaxData {
		return fmt.Errorf("publish %s: %w: %d bytes (at most %d)", kind, ErrTooLarge, len(raw), h.opts.MaxData)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev := &Event{ID: h.epoch + "-" + strconv.FormatUint(h.seq, 10), Kind: kind, Data: raw, seq: h.seq}
	// json.Marshal escapes newlines inside strings: the data is one line.
	ev.frame = []byte("id: " + ev.ID + "\nevent: " + kind + "\ndata: " + string(raw) + "\n\n")
	h.last[kind] = ev
	h.stats.Published++
	for c := range h.clients {
		select {
		case c.ch <- ev:
		default:
			h.dropLocked(c)
			h.stats.Dropped++
		}
	}
	return nil
}

// Last is the last event of kind (false when there was none).
func (h *Hub) Last(kind string) (Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev, ok := h.last[kind]
	if !ok {
		return Event{}, false
	}
	return *ev, true
}

// Stats are the hub's counters now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Clients = len(h.clients)
	return s
}

// Client is one subscriber: its events arrive on Events until Gone is
// closed (dropped, disconnected or closed).
type Client struct {
	hub  *Hub
	ch   chan *Event
	gone chan struct{}
	once sync.Once
}

// Subscribe adds a client. Its buffer starts with the last event of each
// kind, oldest first, except those a browser reconnecting with
// Last-Event-ID lastID already had (an id of this hub; any other id, from
// a daemon since restarted, or none, gets them all). ErrFull when
// MaxClients are connected.
func (h *Hub) Subscribe(lastID string) (*Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) >= h.opts.MaxClients {
		h.stats.Refused++
		return nil, fmt.Errorf("%w (%d): close one", ErrFull, h.opts.MaxClients)
	}
	c := &Client{hub: h, ch: make(chan *Event, h.opts.Buffer+len(Kinds)), gone: make(chan struct{})}
	after := h.seen(lastID)
	replay := make([]*Event, 0, len(Kinds))
	for _, ev := range h.last {
		if ev.seq > after {
			replay = append(replay, ev)
		}
	}
	slices.SortFunc(replay, func(a, b *Event) int { return cmp.Compare(a.seq, b.seq) })
	for _, ev := range replay {
		c.ch <- ev // room for one of each kind besides Buffer
	}
	h.clients[c] = struct{}{}
	return c, nil
}

// seen is the sequence number a Last-Event-ID of this hub names; 0 for
// an id of another hub, a malformed one, or one from the future.
func (h *Hub) seen(lastID string) uint64 {
	epoch, n, ok := strings.Cut(strings.TrimSpace(lastID), "-")
	if !ok || epoch != h.epoch {
		return 0
	}
	seq, err := strconv.ParseUint(n, 10, 64)
	if err != nil || seq > h.seq {
		return 0
	}
	return seq
}

// Events are the client's events, in publish order.
func (c *Client) Events() <-chan *Event { return c.ch }

// Gone is closed when the client is dropped (its buffer was full),
// disconnected (DisconnectAll) or closed.
func (c *Client) Gone() <-chan struct{} { return c.gone }

// Close removes the client; calling it again does nothing.
func (c *Client) Close() {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	c.hub.dropLocked(c)
}

// dropLocked removes c (h.mu held).
func (h *Hub) dropLocked(c *Client) {
	delete(h.clients, c)
	c.once.Do(func() { close(c.gone) })
}

// DisconnectAll ends every client's stream (the HTTP server is shutting
// down: a stream would keep it waiting). New clients are still taken.
func (h *Hub) DisconnectAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.clients {
		h.dropLocked(c)
	}
}
