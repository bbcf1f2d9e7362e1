package events

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/cabinettest"
)

// frame is one block of an SSE stream: an event, or a comment.
type frame struct {
	ID, Event, Data, Comment, Retry string
}

// sseReader reads an SSE stream block by block.
type sseReader struct{ r *bufio.Reader }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReader(r)} }

func (s *sseReader) next() (frame, error) {
	var f frame
	seen := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return f, err
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if seen {
				return f, nil
			}
			continue
		}
		seen = true
		field, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch field {
		case "":
			f.Comment = v
		case "id":
			f.ID = v
		case "event":
			f.Event = v
		case "data":
			f.Data = v
		case "retry":
			f.Retry = v
		}
	}
}

// nextEvent skips comments.
func (s *sseReader) nextEvent() (frame, error) {
	for {
		f, err := s.next()
		if err != nil || f.Event != "" {
			return f, err
		}
	}
}

// TestStreamHeartbeat: the stream starts with its retry delay, replays
// the last events, sends a heartbeat comment every Heartbeat of the
// (fake) clock while idle, and the events as they are published.
func TestStreamHeartbeat(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 12, 6, 20, 0, 0, 0, time.UTC))
	h := New(Options{Clock: clk, Heartbeat: 15 * time.Second})
	h.Publish(KindSelection, Selection{Game: "Alpha Quest", System: "nes"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := cabinettest.Context(t)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-store, no-transform" {
		t.Fatalf("status %d, Content-Type %q, Cache-Control %q", resp.StatusCode, ct, resp.Header.Get("Cache-Control"))
	}
	sr := newSSEReader(resp.Body)
	if f, err := sr.next(); err != nil || f.Retry != "2000" {
		t.Fatalf("first block %+v %v, want the retry delay", f, err)
	}
	f, err := sr.next()
	if err != nil || f.Event != KindSelection || f.Data != `{"game":"Alpha Quest","system":"nes","at":""}` || !strings.HasSuffix(f.ID, "-1") {
		t.Fatalf("replay %+v %v", f, err)
	}
	for range 3 {
		if err := clk.BlockUntil(ctx, 1); err != nil { // the handler's ticker
			t.Fatal(err)
		}
		clk.Advance(15 * time.Second)
		if f, err := sr.next(); err != nil || f.Comment != "ping" {
			t.Fatalf("after 15 s idle: %+v %v, want a heartbeat", f, err)
		}
	}
	h.Publish(KindNowPlaying, NowPlaying{Playing: true, Game: "Beta Racer"})
	if f, err := sr.next(); err != nil || f.Event != KindNowPlaying || !strings.Contains(f.Data, `"Beta Racer"`) || !strings.HasSuffix(f.ID, "-2") {
		t.Fatalf("published: %+v %v", f, err)
	}
}

// TestStreamStuckClient: a client that connects and never reads. Its
// socket fills, the handler's write times out, the stream ends and the
// connection is closed; the publisher never waits for it, and a client
// that reads gets every event meanwhile.
func TestStreamStuckClient(t *testing.T) {
	h := New(Options{WriteTimeout: 300 * time.Millisecond, Buffer: 1 << 12})
	srv := httptest.NewUnstartedServer(h)
	var mu sync.Mutex
	closed := 0 // connections the server closed
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			mu.Lock()
			closed++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	cabinettest.Await(t, "the stuck client to connect", nil, func() bool { return h.Stats().Clients == 1 })

	// A reading client, through the same server.
	ctx := cabinettest.Context(t)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sr := newSSEReader(resp.Body)
	big := strings.Repeat("x", DefaultMaxData-200)
	stuckGone := false
	for i := 0; !stuckGone; i++ {
		if i > 20000 {
			t.Fatal("20,000 events of 16 KiB and the stuck client is still connected")
		}
		if err := h.Publish(KindSelection, Selection{Game: big, At: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		f, err := sr.nextEvent()
		if err != nil || !strings.HasSuffix(f.Data, fmt.Sprintf(`"at":"%d"}`, i)) {
			t.Fatalf("the reading client, event %d: %v %.80s…", i, err, f.Data)
		}
		stuckGone = h.Stats().Clients == 1
	}
	// The server closed the stuck connection (a client that drains it
	// would take long: its window is small), the reading one is served on.
	cabinettest.Await(t, "the server to close the stuck connection", nil, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return closed == 1
	})
	h.Publish(KindSelection, Selection{Game: "after"})
	if f, err := sr.nextEvent(); err != nil || !strings.Contains(f.Data, `"after"`) {
		t.Fatalf("the reading client after: %v %+v", err, f)
	}
}

// TestStreamFull: past MaxClients a client is told to come back later.
func TestStreamFull(t *testing.T) {
	h := New(Options{MaxClients: 1})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithCancel(cabinettest.Context(t))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	first, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Body.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "too many screens") {
		t.Errorf("a second client: %d %q", resp.StatusCode, b)
	}
	cancel()
	cabinettest.Await(t, "the first client to leave", nil, func() bool { return h.Stats().Clients == 0 })
}
