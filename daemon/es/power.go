package es

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultPowerTimeout bounds a power request. ES answers GET /restart and
// GET /shutdown only after its root quit scripts have run (quitES fires
// quit on the HTTP thread and waits for them, Platform.cpp), Cabinet's own
// quit hook among them.
const DefaultPowerTimeout = 10 * time.Second

// ErrUnconfirmed: a power request went out but ES did not answer it in
// time. ES was most likely quitting: it runs its quit scripts before it
// answers and closes its server on the way out.
var ErrUnconfirmed = errors.New("the request was sent but EmulationStation did not answer it")

// PowerClient asks ES to do what its own Quit menu does (GuiMenu
// openQuitMenu_static): GET /quit is QUIT EMULATIONSTATION (on Batocera,
// emulationstation-standalone starts ES again after a plain quit), GET
// /restart is RESTART SYSTEM (a reboot of the machine), GET /shutdown
// (Batocera's patch 004-http-api-shutdown) is SHUTDOWN SYSTEM. ES fires its
// quit events, saves its game lists, and reboots or powers off with
// `shutdown -r now` or `shutdown -P -h now`.
//
// Only the power runner (package power) holds one: the MCP tools get a
// *Client, which has no such method, so no tool argument reaches these
// routes.
type PowerClient struct {
	c       *Client
	timeout time.Duration
}

// NewPowerClient is a PowerClient over c's connection settings.
func NewPowerClient(c *Client) *PowerClient {
	return &PowerClient{c: c, timeout: DefaultPowerTimeout}
}

// RestartES is GET /quit: ES quits and, on Batocera, is started again.
func (p *PowerClient) RestartES(ctx context.Context) error { return p.get(ctx, "/quit") }

// Reboot is GET /restart: ES quits and reboots the machine.
func (p *PowerClient) Reboot(ctx context.Context) error { return p.get(ctx, "/restart") }

// Shutdown is GET /shutdown: ES quits and powers the machine off.
func (p *PowerClient) Shutdown(ctx context.Context) error { return p.get(ctx, "/shutdown") }

// get sends one power request. ES may close the connection, or never
// answer, once it is quitting: a reset or EOF after the request was written
// counts as sent (nil), a timeout after it is ErrUnconfirmed. A refused
// connection, or one lost before the request was written, is
// ErrUnavailable: nothing was sent.
func (p *PowerClient) get(ctx context.Context, path string) error {
	op := "GET " + path
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var wrote atomic.Bool // set by the transport's writer goroutine
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.c.base+path, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	resp, err := p.c.http.Do(req)
	if err != nil {
		return powerError(op, err, wrote.Load(), p.timeout)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.c.cfg.MaxObjectBytes))
	switch {
	case resp.StatusCode != http.StatusOK:
		return statusError(op, resp.StatusCode, body)
	case err != nil && isNetTimeout(err):
		return fmt.Errorf("%s: %w (limit %v)", op, ErrUnconfirmed, p.timeout)
	}
	return nil // a body cut short by ES going away still answered 200
}

// powerError classifies a failed power request by whether it was written.
func powerError(op string, err error, wrote bool, timeout time.Duration) error {
	timedOut := errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err)
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", op, err)
	case !wrote && timedOut:
		return fmt.Errorf("%s: nothing was sent: %w (limit %v): %w", op, ErrTimeout, timeout, err)
	case !wrote:
		return fmt.Errorf("%s: nothing was sent: %w: %w", op, ErrUnavailable, err)
	case timedOut:
		return fmt.Errorf("%s: %w (limit %v)", op, ErrUnconfirmed, timeout)
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return nil // ES closed the connection on its way out: the request reached it
	}
	return fmt.Errorf("%s: %w: %w", op, ErrUnconfirmed, err)
}
