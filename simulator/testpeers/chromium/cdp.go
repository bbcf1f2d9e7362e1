package chromium

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// maxMessage bounds one message read from the DevTools pipe. A PNG
// screenshot of a phone-size page is well under a megabyte; 64 MB leaves
// room for a large page captured at a high device scale factor.
const maxMessage = 64 << 20

// errTooLarge is a message over maxMessage: the pipe is then out of step
// and the browser is given up.
var errTooLarge = fmt.Errorf("devtools message over %d bytes", maxMessage)

// readMessage reads one NUL-terminated message of at most max bytes (the
// NUL not included) from r.
func readMessage(r *bufio.Reader, max int) ([]byte, error) {
	var msg []byte
	for {
		chunk, err := r.ReadSlice(0)
		switch {
		case err == nil:
			chunk = chunk[:len(chunk)-1]
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF) && len(msg)+len(chunk) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
		if len(msg)+len(chunk) > max {
			return nil, errTooLarge
		}
		msg = append(msg, chunk...)
		if err == nil {
			return msg, nil
		}
	}
}

// message is any message on the pipe: a reply has an ID, an event a Method.
type message struct {
	ID        int64           `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

func (e *cdpError) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// event is what listeners see.
type event struct {
	SessionID, Method string
	Params            json.RawMessage
}

// conn speaks the Chrome DevTools Protocol over the pipe pair.
type conn struct {
	w   io.WriteCloser
	wmu sync.Mutex // one message written at a time

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]chan message
	listeners map[int]func(event)
	nextL     int
	closed    chan struct{} // closed when reading stops
	err       error         // why reading stopped; set before closed is closed
	dead      func() error  // says why the browser is gone (stderr tail), for err
}

func newConn(r io.Reader, w io.WriteCloser, dead func() error) *conn {
	c := &conn{
		w:         w,
		pending:   map[int64]chan message{},
		listeners: map[int]func(event){},
		closed:    make(chan struct{}),
		dead:      dead,
	}
	go c.read(bufio.NewReaderSize(r, 64<<10))
	return c
}

func (c *conn) read(r *bufio.Reader) {
	for {
		b, err := readMessage(r, maxMessage)
		if err != nil {
			c.shut(err)
			return
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil {
			c.shut(fmt.Errorf("devtools message is not JSON: %w", err))
			return
		}
		c.mu.Lock()
		if m.ID != 0 {
			if ch, ok := c.pending[m.ID]; ok {
				delete(c.pending, m.ID)
				ch <- m // buffered
			}
			c.mu.Unlock()
			continue
		}
		ev := event{SessionID: m.SessionID, Method: m.Method, Params: m.Params}
		for _, l := range c.listeners {
			l(ev) // listeners do not block and do not call the conn
		}
		c.mu.Unlock()
	}
}

// shut stops the conn: pending and later calls fail with the reason.
func (c *conn) shut(err error) {
	if c.errOf() != nil {
		return
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) {
		if why := c.dead(); why != nil {
			err = fmt.Errorf("%w; %w", err, why)
		}
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		close(c.closed)
	}
	c.mu.Unlock()
}

// errClosing is the conn shut on purpose.
var errClosing = errors.New("browser closed")

// listen calls f with every event until the returned func is called. f
// runs on the reading goroutine with the conn locked: it must not block.
func (c *conn) listen(f func(event)) (stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextL
	c.nextL++
	c.listeners[id] = f
	return func() {
		c.mu.Lock()
		delete(c.listeners, id)
		c.mu.Unlock()
	}
}

// call sends method with params in session ("" for the browser) and
// decodes the result into out (when not nil). The context's deadline
// bounds the wait; the caller makes sure there is one.
func (c *conn) call(ctx context.Context, session, method string, params, out any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ch := make(chan message, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	b, err := json.Marshal(message{ID: id, SessionID: session, Method: method, Params: p})
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if err := c.write(ctx, append(b, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				return fmt.Errorf("%s: decode result: %w", method, err)
			}
		}
		return nil
	case <-c.closed:
		return fmt.Errorf("%s: %w", method, c.err)
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// write sends one message. A pipe the browser stopped reading blocks the
// write; the context ends the wait (the conn is then unusable and shut).
func (c *conn) write(ctx context.Context, b []byte) error {
	done := make(chan error, 1)
	go func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		_, err := c.w.Write(b)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-c.closed:
		return c.err
	case <-ctx.Done():
		c.shut(fmt.Errorf("write to the devtools pipe blocked: %w", ctx.Err()))
		return ctx.Err()
	}
}

// errOf is why the conn stopped, or nil.
func (c *conn) errOf() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// trimJSON shortens raw JSON for an error message.
func trimJSON(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}
