package selection

import (
	"sync"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Selection is a shown selection as subscribers get it: what Home Assistant is given
// (haentities.Selected: the names, the game's details, the picture's file, the source) with its
// place in the feed and the picture itself.
type Selection struct {
	haentities.Selected
	// Seq numbers the selections shown by this daemon: 1, 2, … (0: nothing shown yet).
	Seq uint64
	// Marquee is the picture published as image.batocera_selected_marquee: a JPEG of at most
	// 512 px and 200 KB (package artwork), nil when the selection has none (the placeholder is
	// published). Shared by every subscriber: read it, never change it.
	Marquee []byte
}

// MaxSubscribers bounds the subscribers of a Hub.
const MaxSubscribers = 64

// Hub hands each shown selection to its subscribers. A subscriber's channel holds one
// selection: a slow one misses the ones between and gets the newest, and the publisher never
// waits. The zero value is ready to use.
type Hub struct {
	mu     sync.Mutex
	subs   map[*chan Selection]struct{}
	latest Selection
	closed bool
}

// Subscribe returns a channel that receives every selection shown from now on (at once the one
// shown last, if any), or the newest when the subscriber falls behind, and cancel, which ends
// the subscription and closes the channel. The channel is closed too when the hub closes (the
// daemon stops), and at once when MaxSubscribers are subscribed already or the hub is closed:
// a subscriber reads until it is closed.
func (h *Hub) Subscribe() (<-chan Selection, func()) {
	ch := make(chan Selection, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.subs) >= MaxSubscribers {
		close(ch)
		return ch, func() {}
	}
	if h.subs == nil {
		h.subs = map[*chan Selection]struct{}{}
	}
	key := &ch
	h.subs[key] = struct{}{}
	if h.latest.Seq > 0 {
		ch <- h.latest
	}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if _, ok := h.subs[key]; ok {
				delete(h.subs, key)
				close(ch)
			}
		})
	}
}

// Latest is the selection shown last; ok is false before the first.
func (h *Hub) Latest() (Selection, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.latest, h.latest.Seq > 0
}

// Publish hands s to every subscriber, replacing what a slow one has not read yet; it never
// blocks. s.Seq is set by the hub.
func (h *Hub) Publish(s Selection) Selection {
	h.mu.Lock()
	defer h.mu.Unlock()
	s.Seq = h.latest.Seq + 1
	h.latest = s
	for key := range h.subs {
		ch := *key
		select {
		case ch <- s:
			continue
		default:
		}
		select { // full: the unread one goes, the newest takes its place
		case <-ch:
		default:
		}
		select {
		case ch <- s:
		default:
		}
	}
	return s
}

// Close closes every subscriber's channel; later subscriptions get a closed channel.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for key := range h.subs {
		close(*key)
	}
	h.subs = nil
}
