package chromium

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadMessage(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     []string
		err      error
	}{
		{"two", "{\"id\":1}\x00{}\x00", 100, []string{`{"id":1}`, `{}`}, io.EOF},
		{"empty message", "\x00", 100, []string{""}, io.EOF},
		{"at the limit", "abcd\x00", 4, []string{"abcd"}, io.EOF},
		{"over the limit", "abcde\x00", 4, nil, errTooLarge},
		{"cut short", "{\"id\":", 100, nil, io.ErrUnexpectedEOF},
		{"longer than the buffer", strings.Repeat("x", 100) + "\x00", 1000, []string{strings.Repeat("x", 100)}, io.EOF},
		{"longer than the buffer, over the limit", strings.Repeat("x", 100) + "\x00", 50, nil, errTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
			var got []string
			var err error
			for {
				var m []byte
				if m, err = readMessage(r, tt.max); err != nil {
					break
				}
				got = append(got, string(m))
			}
			if !errors.Is(err, tt.err) || strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("{\"id\":1,\"result\":{}}\x00{\"method\":\"Page.loadEventFired\"}\x00"), 64)
	f.Add([]byte("\x00\x00"), 1)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<16 {
			return
		}
		r := bufio.NewReaderSize(bytes.NewReader(in), 16)
		total := 0
		for {
			m, err := readMessage(r, max)
			if err != nil {
				return
			}
			if len(m) > max || bytes.IndexByte(m, 0) >= 0 {
				t.Fatalf("message of %d bytes (max %d) or with a NUL: %q", len(m), max, m)
			}
			total += len(m) + 1
			if total > len(in) {
				t.Fatalf("read %d bytes from %d", total, len(in))
			}
		}
	})
}

// fakeBrowser is the browser's end of the two pipes.
type fakeBrowser struct {
	cmds *bufio.Reader  // what the conn sent
	out  *io.PipeWriter // what the conn reads
}

func newFakeConn(t *testing.T) (*conn, *fakeBrowser) {
	t.Helper()
	cmdR, cmdW := io.Pipe()
	outR, outW := io.Pipe()
	c := newConn(outR, cmdW, func() error { return errors.New("fake browser gone") })
	t.Cleanup(func() { outW.Close(); cmdR.Close() })
	return c, &fakeBrowser{cmds: bufio.NewReader(cmdR), out: outW}
}

// next is the next command the conn sent.
func (f *fakeBrowser) next(t *testing.T) message {
	t.Helper()
	b, err := readMessage(f.cmds, maxMessage)
	if err != nil {
		t.Error(err)
		return message{}
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Error(err)
	}
	return m
}

func (f *fakeBrowser) send(t *testing.T, m string) {
	t.Helper()
	if _, err := f.out.Write(append([]byte(m), 0)); err != nil {
		t.Error(err)
	}
}

func TestConnCall(t *testing.T) {
	c, f := newFakeConn(t)
	events := make(chan event, 1)
	c.listen(func(e event) { events <- e })
	go func() {
		m := f.next(t)
		f.send(t, `{"method":"Page.loadEventFired","sessionId":"S","params":{"timestamp":1}}`)
		if m.Method == "Runtime.evaluate" && m.SessionID == "S" {
			f.send(t, `{"id":`+itoa(m.ID)+`,"sessionId":"S","result":{"result":{"value":2}}}`)
		}
		m = f.next(t)
		f.send(t, `{"id":`+itoa(m.ID)+`,"error":{"code":-32000,"message":"Cannot navigate to invalid URL"}}`)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var r struct {
		Result struct{ Value int } `json:"result"`
	}
	if err := c.call(ctx, "S", "Runtime.evaluate", map[string]any{"expression": "1+1"}, &r); err != nil || r.Result.Value != 2 {
		t.Fatalf("got %+v, %v; want 2", r, err)
	}
	if e := <-events; e.Method != "Page.loadEventFired" || e.SessionID != "S" {
		t.Errorf("event %+v, want Page.loadEventFired in S", e)
	}
	err := c.call(ctx, "S", "Page.navigate", map[string]any{"url": "::"}, nil)
	if err == nil || !strings.Contains(err.Error(), "Cannot navigate to invalid URL") {
		t.Errorf("got %v, want the protocol error", err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestConnDeadline(t *testing.T) {
	c, f := newFakeConn(t)
	go f.next(t) // read, never answer
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.call(ctx, "", "Browser.getVersion", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Browser.getVersion") {
		t.Errorf("got %v, want Browser.getVersion: deadline exceeded", err)
	}
}

func TestConnGone(t *testing.T) {
	c, f := newFakeConn(t)
	go func() {
		f.next(t)
		f.out.Write([]byte(`{"id":`)) // no NUL: the pipe ends mid-message
		f.out.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.call(ctx, "", "Browser.getVersion", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "fake browser gone") {
		t.Fatalf("got %v, want the browser's exit reason", err)
	}
	if err := c.call(ctx, "", "Browser.getVersion", nil, nil); err == nil || !strings.Contains(err.Error(), "fake browser gone") {
		t.Errorf("a call after: got %v, want the exit reason", err)
	}
}

func TestArgs(t *testing.T) {
	a, err := args("/tmp/p", Options{Hosts: []string{"cabinet.test"}, ExtraArgs: []string{"--x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append(isolationFlags, "--user-data-dir=/tmp/p", "--remote-debugging-pipe",
		"--host-resolver-rules=MAP cabinet.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1") {
		if !contains(a, want) {
			t.Errorf("command line %q lacks %s", a, want)
		}
	}
	if a[len(a)-2] != "--x" || a[len(a)-1] != "about:blank" {
		t.Errorf("command line ends %q, want --x about:blank", a[len(a)-2:])
	}
	if _, err := args("/tmp/p", Options{Hosts: []string{"a, MAP * 1.2.3.4"}}); err == nil {
		t.Error("a host holding rules: no error")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
