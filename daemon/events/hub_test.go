package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recv takes what c has queued now, without waiting (Publish queues
// before it returns).
func recv(c *Client) []*Event {
	var out []*Event
	for {
		select {
		case ev := <-c.Events():
			out = append(out, ev)
		default:
			return out
		}
	}
}

func kindsOf(evs []*Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Kind+"="+string(ev.Data))
	}
	return strings.Join(s, " ")
}

// TestFanOut: 50 clients reading at their own pace each get every event,
// in order; the publisher never waits for them.
func TestFanOut(t *testing.T) {
	const clients, n = 50, 40
	h := New(Options{Buffer: n}) // room for all: none is dropped however slowly it reads
	var wg sync.WaitGroup
	got := make([][]int, clients)
	for i := range clients {
		c, err := h.Subscribe("")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			for len(got[i]) < n {
				select {
				case ev := <-c.Events():
					var v int
					json.Unmarshal(ev.Data, &v)
					got[i] = append(got[i], v)
				case <-c.Gone():
					return
				}
			}
		}()
	}
	for i := range n {
		if err := h.Publish(KindSelection, i); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	for i, g := range got {
		if len(g) != n {
			t.Fatalf("client %d got %d events, want %d", i, len(g), n)
		}
		for j, v := range g {
			if v != j {
				t.Fatalf("client %d: event %d is %d: out of order", i, j, v)
			}
		}
	}
	if s := h.Stats(); s.Clients != 0 || s.Published != n || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestStuckClientDropped: a client that never reads is dropped once its
// buffer is full; the publisher goes on, and a client that reads misses
// nothing.
func TestStuckClientDropped(t *testing.T) {
	h := New(Options{Buffer: 4})
	stuck, _ := h.Subscribe("")
	live, _ := h.Subscribe("")
	for i := range 100 {
		if err := h.Publish(KindNowPlaying, NowPlaying{Playing: true, Game: fmt.Sprint("game ", i)}); err != nil {
			t.Fatal(err)
		}
		if evs := recv(live); len(evs) != 1 {
			t.Fatalf("event %d: the reading client got %d", i, len(evs))
		}
	}
	select {
	case <-stuck.Gone():
	default:
		t.Fatal("the client that never reads was not dropped")
	}
	select {
	case <-live.Gone():
		t.Fatal("the reading client was dropped")
	default:
	}
	if n := len(recv(stuck)); n != 4+len(Kinds) {
		t.Errorf("the stuck client kept %d events, want its buffer (%d)", n, 4+len(Kinds))
	}
	if s := h.Stats(); s.Clients != 1 || s.Dropped != 1 || s.Published != 100 {
		t.Errorf("stats %+v", s)
	}
	stuck.Close() // after being dropped: nothing happens
	live.Close()
	live.Close()
	if s := h.Stats(); s.Clients != 0 {
		t.Errorf("clients %d after closing", s.Clients)
	}
}

// TestBoundedMemory: MaxClients clients that never read and thousands of
// large events: the clients are dropped, the 65th is refused, and the heap
// holds a few events, not one per client or per publish.
func TestBoundedMemory(t *testing.T) {
	h := New(Options{})
	var clients []*Client
	for range DefaultMaxClients {
		c, err := h.Subscribe("")
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	if _, err := h.Subscribe(""); !errors.Is(err, ErrFull) {
		t.Fatalf("client %d: %v, want ErrFull", DefaultMaxClients+1, err)
	}
	big := strings.Repeat("x", DefaultMaxData-100)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := range 3000 {
		if err := h.Publish(Kinds[i%len(Kinds)], Selection{Game: big, At: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	after := heap()
	// Unbounded, 3,000 events of 16 KiB would be 48 MiB (and 64 times that
	// copied per client); bounded, the clients' buffers share 20 of them.
	if grew := int64(after) - int64(before); grew > 4<<20 {
		t.Errorf("the heap grew by %d KiB", grew>>10)
	}
	for i, c := range clients {
		select {
		case <-c.Gone():
		default:
			t.Fatalf("client %d never read and was not dropped", i)
		}
	}
	if s := h.Stats(); s.Clients != 0 || s.Dropped != DefaultMaxClients || s.Refused != 1 {
		t.Errorf("stats %+v", s)
	}
	if err := h.Publish(KindSelection, Selection{Game: big + big}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an event over MaxData: %v", err)
	}
	runtime.KeepAlive(clients)
}

// TestReplay: a new client first gets the last event of each kind, oldest
// first; a browser reconnecting with Last-Event-ID gets only what it
// missed, unless the id is another hub's (the daemon restarted).
func TestReplay(t *testing.T) {
	h := New(Options{})
	c, _ := h.Subscribe("")
	if evs := recv(c); len(evs) != 0 {
		t.Fatalf("a client before any event got %s", kindsOf(evs))
	}
	c.Close()
	h.Publish(KindSelection, "a")
	h.Publish(KindNowPlaying, "x")
	h.Publish(KindSelection, "b")
	h.Publish(KindSession, "s")
	all := `now_playing="x" selection="b" session="s"`
	c, _ = h.Subscribe("")
	evs := recv(c)
	if got := kindsOf(evs); got != all {
		t.Fatalf("replay %s, want %s", got, all)
	}
	x := evs[0].ID
	other := New(Options{})
	other.Publish(KindSelection, "z")
	otherID, _ := other.Last(KindSelection)
	for _, tc := range []struct{ lastID, want string }{
		{x, `selection="b" session="s"`},
		{evs[2].ID, ""},
		{otherID.ID, all},
		{strings.Replace(x, "-2", "-99", 1), all}, // from the future: not this hub's
		{"garbage", all},
		{"", all},
	} {
		c, _ := h.Subscribe(tc.lastID)
		if got := kindsOf(recv(c)); got != tc.want {
			t.Errorf("Last-Event-ID %q: replay %s, want %s", tc.lastID, got, tc.want)
		}
		c.Close()
	}
	if last, ok := h.Last(KindSelection); !ok || string(last.Data) != `"b"` {
		t.Errorf("Last(selection) %+v %v", last, ok)
	}
	if _, ok := h.Last(KindAchievement); ok {
		t.Error("Last(achievement) before any")
	}
}

func TestPublishRefuses(t *testing.T) {
	h := New(Options{})
	c, _ := h.Subscribe("")
	if err := h.Publish("marquee", 1); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if err := h.Publish(KindSelection, make(chan int)); err == nil {
		t.Error("data that does not encode was published")
	}
	if evs := recv(c); len(evs) != 0 || h.Stats().Published != 0 {
		t.Errorf("refused events were sent: %s", kindsOf(evs))
	}
}

func TestDisconnectAll(t *testing.T) {
	h := New(Options{})
	a, _ := h.Subscribe("")
	b, _ := h.Subscribe("")
	h.DisconnectAll()
	for _, c := range []*Client{a, b} {
		select {
		case <-c.Gone():
		default:
			t.Fatal("a client is still connected")
		}
	}
	if _, err := h.Subscribe(""); err != nil {
		t.Errorf("after DisconnectAll: %v", err)
	}
}

func TestValidKey(t *testing.T) {
	for key, want := range map[string]bool{
		"nes/0123abcd": true, "pc-engine/x.y_z+1": true, "nes": true,
		"": false, "../etc": false, "nes/../x": false, "nes//x": false, "/nes": false, "nes/": false,
		"nes/a b": false, "nes/é": false, "nes/a?b": false, strings.Repeat("a", 161): false,
	} {
		if got := ValidKey(key); got != want {
			t.Errorf("ValidKey(%q) = %v", key, got)
		}
	}
	if got := ImageURL("nes/0123"); got != "/marquee/image?game=nes%2F0123" {
		t.Errorf("ImageURL %q", got)
	}
	if got := ImageURL("../x"); got != "" {
		t.Errorf("ImageURL of a bad key %q", got)
	}
}

func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"nes/abc", "../x", "a/./b", "a%2Fb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if !ValidKey(key) {
			return
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q accepted with segment %q", key, seg)
			}
		}
		if strings.ContainsAny(key, "?#%\\ \x00") {
			t.Fatalf("%q accepted", key)
		}
	})
}
