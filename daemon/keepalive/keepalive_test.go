package keepalive

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// TestIdleStreamGetsComments: an event stream that goes quiet gets comments between its events
// (never inside one), with X-Accel-Buffering: no; a plain response gets neither; nothing is
// written once the handler has returned.
func TestIdleStreamGetsComments(t *testing.T) {
	release := make(chan struct{})
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/plain" {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte("{}"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("event: message\ndata: 1\n\n"))
		w.(http.Flusher).Flush()
		<-release
		w.Write([]byte("event: message\ndata: 2\n\n"))
	}), 40*time.Millisecond)
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Accel-Buffering") != "" {
		t.Error("a plain response marked as a stream")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/stream", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Errorf("X-Accel-Buffering %q", resp.Header.Get("X-Accel-Buffering"))
	}
	r := bufio.NewReader(resp.Body)
	var lines []string
	comments := 0
	for comments < 2 {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", lines, err)
		}
		lines = append(lines, l)
		if strings.HasPrefix(l, ":") {
			comments++
		}
	}
	close(release)
	rest := new(strings.Builder)
	for {
		l, err := r.ReadString('\n')
		rest.WriteString(l)
		if err != nil {
			break
		}
	}
	all := strings.Join(lines, "") + rest.String()
	if !strings.HasPrefix(all, "event: message\ndata: 1\n\n: keep-alive\n\n: keep-alive\n\n") || !strings.HasSuffix(all, "event: message\ndata: 2\n\n") {
		t.Errorf("stream %q", all)
	}
}

// TestMCPListenStream: mcp-go's own subscriptions/listen stream (protocol 2026-07-28), quiet after
// its acknowledgement, gets comments through Wrap.
func TestMCPListenStream(t *testing.T) {
	s := server.NewMCPServer("t", "1", server.WithResourceCapabilities(true, false))
	srv := httptest.NewServer(Wrap(server.NewStreamableHTTPServer(s), 40*time.Millisecond))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"resourceSubscriptions":["x://y"]}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	var got []string
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%d %q: %v", resp.StatusCode, got, err)
		}
		got = append(got, l)
		if strings.HasPrefix(l, ": keep-alive") {
			break
		}
	}
	if !strings.Contains(strings.Join(got, ""), "notifications/subscriptions/acknowledged") {
		t.Errorf("the stream %q", got)
	}
}
