package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/batocera-cabinet/cabinet/daemon/events"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// fakePlaying is a Playing the test sets.
type fakePlaying struct {
	np      atomic.Pointer[events.NowPlaying]
	artwork []byte
}

func (f *fakePlaying) NowPlaying() events.NowPlaying {
	if np := f.np.Load(); np != nil {
		return *np
	}
	return events.NowPlaying{}
}

func (f *fakePlaying) Artwork(context.Context) ([]byte, string, error) {
	if !f.NowPlaying().Playing {
		return nil, "", nil
	}
	return f.artwork, "image/jpeg", nil
}

// updates records the resources/updated a client gets, in order.
type updates struct {
	mu   sync.Mutex
	got  []mcp.JSONRPCNotification
	cond chan struct{}
}

func newUpdates(c *client.Client) *updates {
	u := &updates{cond: make(chan struct{}, 1)}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationResourceUpdated) {
			return
		}
		u.mu.Lock()
		u.got = append(u.got, n)
		u.mu.Unlock()
		select {
		case u.cond <- struct{}{}:
		default:
		}
	})
	return u
}

// next waits for the next update and returns its uri and subscription id ("" without one).
func (u *updates) next(t *testing.T) (uri, sub string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		u.mu.Lock()
		if len(u.got) > 0 {
			n := u.got[0]
			u.got = u.got[1:]
			u.mu.Unlock()
			uri, _ = n.Params.AdditionalFields["uri"].(string)
			if id, ok := n.Params.Meta[mcp.MetaKeySubscriptionID]; ok {
				b, _ := json.Marshal(id)
				sub = string(b)
			}
			return uri, sub
		}
		u.mu.Unlock()
		select {
		case <-u.cond:
		case <-deadline:
			t.Fatal("no resources/updated within 10 s")
		}
	}
}

// TestResourceSubscriptions: a client of each era is told of the resources it subscribed to, in
// the order they changed, and of nothing else; unsubscribing (2025-11-25) or ending the listen
// (2026-07-28) stops the updates and forgets the subscriber.
func TestResourceSubscriptions(t *testing.T) {
	playing := &fakePlaying{artwork: []byte("\xff\xd8\xff fake jpeg")}
	r := newRig(t, rigConfig{deps: func(d *Deps) { d.Playing = playing }})
	ctx := cabinettest.Context(t)

	legacy := r.connect(mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	lu := newUpdates(legacy)
	for _, uri := range []string{ResourceNowPlaying, ResourceStatus} {
		if err := legacy.Subscribe(ctx, mcp.SubscribeRequest{Params: mcp.SubscribeParams{URI: uri}}); err != nil {
			t.Fatal(err)
		}
	}
	modern := r.connect("")
	mu := newUpdates(modern)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	listenErr := make(chan error, 1)
	go func() {
		listenErr <- modern.Listen(lctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{ResourceNowPlaying, "cabinet://unknown"}})
	}()
	cabinettest.Await(t, "both subscribers", nil, func() bool { return r.srv.subs.count() == 2 })

	playing.np.Store(&events.NowPlaying{Playing: true, Game: "Tetris", System: "nes", Rom: "/userdata/roms/nes/Tetris.nes", Started: "2026-12-06T16:00:00Z"})
	r.srv.ResourcesChanged(ResourceNowPlaying, ResourceArtwork, ResourceStatus)
	for _, want := range []string{ResourceNowPlaying, ResourceStatus} {
		if uri, sub := lu.next(t); uri != want || sub != "" {
			t.Errorf("2025-11-25 client: %s (subscription %q), want %s untagged", uri, sub, want)
		}
	}
	uri, sub := mu.next(t)
	if uri != ResourceNowPlaying || sub == "" {
		t.Errorf("2026-07-28 client: %s (subscription %q), want %s tagged with the listen's id", uri, sub, ResourceNowPlaying)
	}
	got, err := modern.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: ResourceNowPlaying}})
	if err != nil {
		t.Fatal(err)
	}
	var np nowPlayingView
	if err := json.Unmarshal([]byte(got.Contents[0].(mcp.TextResourceContents).Text), &np); err != nil {
		t.Fatal(err)
	}
	if !np.Playing || np.Game != "Tetris" || np.GameID == "" || np.Artwork != ResourceArtwork || np.Since == "" {
		t.Errorf("now-playing: %+v", np)
	}
	art, err := modern.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: ResourceArtwork}})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := art.Contents[0].(mcp.BlobResourceContents); !ok || b.MIMEType != "image/jpeg" || b.Blob == "" {
		t.Errorf("artwork: %+v", art.Contents[0])
	}

	// Unsubscribed from now-playing, the legacy client hears only of status; the update of
	// now-playing would have come first.
	if err := legacy.Unsubscribe(ctx, mcp.UnsubscribeRequest{Params: mcp.UnsubscribeParams{URI: ResourceNowPlaying}}); err != nil {
		t.Fatal(err)
	}
	stop()
	<-listenErr
	cabinettest.Await(t, "the listen forgotten", nil, func() bool { return r.srv.subs.count() == 1 })
	playing.np.Store(&events.NowPlaying{})
	r.srv.ResourcesChanged(ResourceNowPlaying, ResourceStatus)
	if uri, _ := lu.next(t); uri != ResourceStatus {
		t.Errorf("after unsubscribing from now-playing: %s", uri)
	}
	if _, err := modern.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: ResourceArtwork}}); err == nil ||
		!strings.Contains(err.Error(), "Nothing is playing") {
		t.Errorf("artwork with nothing playing: %v", err)
	}
	mu.mu.Lock()
	if len(mu.got) != 0 {
		t.Errorf("the ended listen was told %d more", len(mu.got))
	}
	mu.mu.Unlock()

	legacy.Close()
	cabinettest.Await(t, "the closed session forgotten", nil, func() bool { return r.srv.subs.count() == 0 })
}

// TestSubscriptionBounds: subscribers past maxSubscribers are not kept, unknown resources are
// never recorded, and a subscriber whose channel is full costs the others nothing.
func TestSubscriptionBounds(t *testing.T) {
	r := newSubscriptions()
	for i := range maxPerClient + 5 {
		r.add(subKey{sess: &stuckSession{id: i}, listen: "1"}, 1, "token greedy", []string{ResourceStatus})
	}
	if n := r.count(); n != maxPerClient {
		t.Fatalf("one token kept %d subscribers", n)
	}
	r = newSubscriptions()
	for i := range maxSubscribers + 10 {
		r.add(subKey{sess: &stuckSession{id: i}}, nil, fmt.Sprint("session ", i), []string{ResourceStatus, "cabinet://nope"})
	}
	if n := r.count(); n != maxSubscribers {
		t.Fatalf("%d subscribers kept", n)
	}
	for _, s := range r.subs {
		if !slices.Equal(s.uris, []string{ResourceStatus}) {
			t.Fatalf("recorded %q", s.uris)
		}
	}
	done := make(chan struct{})
	go func() {
		for range 3 {
			r.changed(ResourceStatus)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("changed blocked on full channels")
	}
	if d := r.dropped.Load(); d != 3*maxSubscribers-maxSubscribers {
		t.Errorf("dropped %d, want %d (each channel holds one)", d, 2*maxSubscribers)
	}
}

// stuckSession is a session whose client reads nothing (a channel of one).
type stuckSession struct {
	id int
	ch chan mcp.JSONRPCNotification
}

func (s *stuckSession) Initialize()       {}
func (s *stuckSession) Initialized() bool { return true }
func (s *stuckSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	if s.ch == nil {
		s.ch = make(chan mcp.JSONRPCNotification, 1)
	}
	return s.ch
}
func (s *stuckSession) SessionID() string { return "stuck" }
