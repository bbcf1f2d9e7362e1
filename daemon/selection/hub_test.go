package selection

import (
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

func named(n string) Selection {
	return Selection{Selected: haentities.Selected{System: "nes", Game: n}}
}

func recv(t *testing.T, ch <-chan Selection) (Selection, bool) {
	t.Helper()
	select {
	case s, ok := <-ch:
		return s, ok
	case <-time.After(10 * time.Second):
		t.Fatal("nothing received")
		return Selection{}, false
	}
}

// TestHubSubscribe: a subscriber gets the selection shown last at once, then each new one with
// its number; cancel closes its channel and stops it.
func TestHubSubscribe(t *testing.T) {
	var h Hub
	if _, ok := h.Latest(); ok {
		t.Error("Latest before any selection")
	}
	h.Publish(named("a"))
	ch, cancel := h.Subscribe()
	if s, _ := recv(t, ch); s.Game != "a" || s.Seq != 1 {
		t.Errorf("first received %q #%d, want a #1", s.Game, s.Seq)
	}
	h.Publish(named("b"))
	if s, _ := recv(t, ch); s.Game != "b" || s.Seq != 2 {
		t.Errorf("received %q #%d, want b #2", s.Game, s.Seq)
	}
	cancel()
	cancel() // twice is harmless
	if _, ok := recv(t, ch); ok {
		t.Error("the channel is open after cancel")
	}
	h.Publish(named("c")) // no subscriber left: nothing blocks
	if s, ok := h.Latest(); !ok || s.Game != "c" || s.Seq != 3 {
		t.Errorf("Latest = %q #%d", s.Game, s.Seq)
	}
}

// TestHubSlowSubscriber: a subscriber that does not read never holds the publisher up, and
// finds the newest selection when it reads.
func TestHubSlowSubscriber(t *testing.T) {
	var h Hub
	slow, cancel := h.Subscribe()
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			h.Publish(named("x"))
		}
		h.Publish(named("last"))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	if s, _ := recv(t, slow); s.Game != "last" || s.Seq != 1001 {
		t.Errorf("the slow subscriber got %q #%d, want last #1001", s.Game, s.Seq)
	}
}

// TestHubBounds: beyond MaxSubscribers a subscription is a closed channel; Close closes every
// channel, and later subscriptions get a closed one.
func TestHubBounds(t *testing.T) {
	var h Hub
	var chans []<-chan Selection
	for i := 0; i < MaxSubscribers; i++ {
		ch, _ := h.Subscribe()
		chans = append(chans, ch)
	}
	if _, ok := recv(t, func() <-chan Selection { ch, _ := h.Subscribe(); return ch }()); ok {
		t.Error("a subscription beyond MaxSubscribers is open")
	}
	h.Close()
	for _, ch := range chans {
		if _, ok := recv(t, ch); ok {
			t.Fatal("a channel is open after Close")
		}
	}
	if _, ok := recv(t, func() <-chan Selection { ch, _ := h.Subscribe(); return ch }()); ok {
		t.Error("a subscription after Close is open")
	}
}

// TestHubConcurrent: subscribers come and go while selections are published (run with -race).
func TestHubConcurrent(t *testing.T) {
	var h Hub
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				ch, cancel := h.Subscribe()
				select {
				case <-ch:
				default:
				}
				cancel()
			}
		}()
	}
	for i := 0; i < 500; i++ {
		h.Publish(named("x"))
	}
	wg.Wait()
	h.Close()
}
