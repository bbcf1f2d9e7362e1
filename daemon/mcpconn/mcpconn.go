// Package mcpconn serves MCP over one stream connection (the daemon's socket, which `cabinet mcp`
// and `cabinet call` dial): newline-delimited JSON-RPC, as stdio, with a session of its own per
// connection. mcp-go's StdioServer cannot do that: all its servers share one process-wide session,
// so while one client is connected every other connection is refused ("session already exists").
package mcpconn

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Bounds of one connection.
const (
	// MaxMessage bounds one JSON-RPC message: a line longer than this ends the connection.
	MaxMessage = 4 << 20
	// inFlight bounds the requests one connection has handled at once: a slow tool (a launch
	// waiting for ES) does not stop a ping or a cancellation behind it.
	inFlight = 8
)

// ErrTooLong is a message over MaxMessage.
var ErrTooLong = errors.New("mcp message over 4 MiB")

// Serve answers the MCP messages read from conn until it reaches EOF, a read fails or ctx ends,
// then waits for the requests under way (their context is cancelled) and returns. Each connection
// is a session of s of its own: its initialize, log level and notifications.
func Serve(ctx context.Context, s *server.MCPServer, conn io.ReadWriter) error {
	var raw [8]byte
	rand.Read(raw[:])
	w := &writer{w: conn}
	ask := &asker{w: w, pending: map[string]chan response{}}
	// The session asks the client (2025-11-25's elicitation/create, which mcp-go sends for a tool
	// that asks the person) on this connection; the client's answer comes back on it.
	sess := server.NewInProcessSessionWithHandlers("socket-"+hex.EncodeToString(raw[:]), nil, ask, nil)
	if err := s.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register the connection's session: %w", err)
	}
	defer s.UnregisterSession(context.WithoutCancel(ctx), sess.SessionID())
	ctx, cancel := context.WithCancel(s.WithContext(ctx, sess))
	defer cancel()

	if c, ok := conn.(io.Closer); ok {
		stop := context.AfterFunc(ctx, func() { c.Close() }) // unblocks the read when ctx ends
		defer stop()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for {
			select {
			case n := <-sess.ClientNotifications():
				w.write(n)
			case <-ctx.Done():
				return
			}
		}
	})
	slots := make(chan struct{}, inFlight)
	r := bufio.NewReaderSize(conn, 64<<10)
	for {
		line, err := readLine(r)
		if len(line) > 0 && ask.answer(line) {
			line = nil // a response to our question, not a request
		}
		if len(line) > 0 {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			wg.Go(func() {
				defer func() { <-slots }()
				if resp := s.HandleMessage(ctx, line); resp != nil {
					w.write(resp)
				}
			})
		}
		switch {
		case errors.Is(err, ErrTooLong):
			w.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST, "message over 4 MiB", nil))
			cancel()
			return err
		case err != nil:
			cancel() // EOF or the connection gone: the requests under way end with it
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// readLine reads one line (its newline dropped), at most MaxMessage bytes; blank lines are skipped.
func readLine(r *bufio.Reader) (json.RawMessage, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxMessage {
			return nil, ErrTooLong
		}
		line = append(line, chunk...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(line) == 0:
			return nil, err
		case err != nil:
			return trim(line), err
		}
		if t := trim(line); len(t) > 0 {
			return t, nil
		}
		line = line[:0]
	}
}

func trim(b []byte) json.RawMessage {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return json.RawMessage(b)
}

// writer writes one message per line, one at a time; after a failed write it writes nothing more
// (the reader then sees the connection go).
type writer struct {
	mu     sync.Mutex
	w      io.Writer
	failed bool
}

func (w *writer) write(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.failed {
		return
	}
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		w.failed = true
	}
}

// asker asks the client on the connection and waits for its answer.
type asker struct {
	w       *writer
	mu      sync.Mutex
	n       int
	pending map[string]chan response // by the request's id, as JSON
}

// response is a JSON-RPC response the client sent.
type response struct {
	ID     json.RawMessage          `json:"id"`
	Method string                   `json:"method"`
	Result json.RawMessage          `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

// askWait bounds the wait for a person's answer: a question nobody answers ends the call (and
// frees its request slot) rather than hold it for as long as the client stays connected.
const askWait = 10 * time.Minute

// Elicit sends elicitation/create and waits for the answer, for askWait at most, or until ctx
// ends (the tool call's: the client cancelling the call, or the connection going).
func (a *asker) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	ctx, cancel := context.WithTimeout(ctx, askWait)
	defer cancel()
	a.mu.Lock()
	a.n++
	id := fmt.Sprintf(`"cabinet-%d"`, a.n)
	ch := make(chan response, 1)
	a.pending[id] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.pending, id)
		a.mu.Unlock()
	}()
	a.w.write(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": json.RawMessage(id), "method": string(mcp.MethodElicitationCreate),
		"params": req.Params})
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("the client refused the question: %d %s", r.Error.Code, r.Error.Message)
		}
		var res mcp.ElicitationResult
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return nil, fmt.Errorf("the client's answer: %w", err)
		}
		return &res, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("no answer to the question: %w", ctx.Err())
	}
}

// answer hands a response to the question it answers and reports whether line was one (a
// response to nothing asked is dropped).
func (a *asker) answer(line json.RawMessage) bool {
	var r response
	if json.Unmarshal(line, &r) != nil || r.Method != "" || len(r.ID) == 0 || (r.Result == nil && r.Error == nil) {
		return false
	}
	a.mu.Lock()
	ch := a.pending[string(r.ID)]
	delete(a.pending, string(r.ID))
	a.mu.Unlock()
	if ch != nil {
		ch <- r
	}
	return true
}
