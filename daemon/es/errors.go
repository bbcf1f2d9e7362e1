package es

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// Errors callers can test with errors.Is. Every error also says which
// request failed and, where the user can act, what to do.
var (
	// ErrUnavailable: nothing listens (connection refused or reset). ES
	// opens its port only after loading every system, and Batocera restarts
	// it after a quit.
	ErrUnavailable = errors.New("EmulationStation is not running or still loading")
	// ErrForbidden: ES answered 403.
	ErrForbidden = errors.New("EmulationStation refused the request (403): its web API answers only 127.0.0.1 " +
		"unless PublicWebAccess is enabled in ES; run Cabinet on the cabinet with cabinet.es.url=http://127.0.0.1:1234")
	// ErrNotFound: ES answered 404 (unknown system or game).
	ErrNotFound = errors.New("not found")
	// ErrServer: ES answered with an unexpected status, 5xx included.
	ErrServer = errors.New("EmulationStation answered with an error")
	// ErrTimeout: ES did not answer within the deadline.
	ErrTimeout = errors.New("EmulationStation did not answer in time")
	// ErrTooLarge: a response body exceeded its size bound.
	ErrTooLarge = errors.New("response too large")
	// ErrMalformed: the body could not be read or is not the JSON ES sends.
	ErrMalformed = errors.New("malformed response from EmulationStation")
	// ErrInvalidArgument: an argument was rejected before anything was sent
	// (an empty text, a system name or game id ES cannot have).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrGameRunning: LaunchGame refused because a game already runs (ES
	// would queue the launch until that game ends).
	ErrGameRunning = errors.New("a game is already running")
	// ErrLaunchInProgress: LaunchGame refused because another launch of
	// this client is still being confirmed.
	ErrLaunchInProgress = errors.New("another launch is still in progress")
	// ErrLaunchNotConfirmed: the launch was sent but the game did not show
	// up in /runningGame in time.
	ErrLaunchNotConfirmed = errors.New("launch sent but not confirmed")
)

// transportError classifies a failed round trip.
func transportError(op string, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF):
		return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
	case errors.Is(err, context.DeadlineExceeded), isNetTimeout(err):
		return fmt.Errorf("%s: %w (limit %v): %w", op, ErrTimeout, timeout, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// bodyError classifies a failure while reading a response body.
func bodyError(op string, err error, timeout time.Duration) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), isNetTimeout(err):
		return fmt.Errorf("%s: reading the response: %w (limit %v): %w", op, ErrTimeout, timeout, err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%s: %w: response cut short: %w", op, ErrMalformed, err)
	}
	return fmt.Errorf("%s: reading the response: %w", op, err)
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusError turns a response status ES should not have sent into an error.
func statusError(op string, status int, body []byte) error {
	text := quoteBody(body)
	switch {
	case status == http.StatusForbidden:
		return fmt.Errorf("%s: %w", op, ErrForbidden)
	case status == http.StatusNotFound:
		return fmt.Errorf("%s: %w (%s)", op, ErrNotFound, text)
	}
	return fmt.Errorf("%s: %w: %d %s (%s)", op, ErrServer, status, http.StatusText(status), text)
}

// quoteBody renders at most 80 bytes of a server message as printable ASCII:
// it ends up in logs and tool results.
func quoteBody(b []byte) string {
	if len(b) == 0 {
		return "empty body"
	}
	var sb strings.Builder
	for i, c := range b {
		if i == 80 {
			sb.WriteString("...")
			break
		}
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		sb.WriteByte(c)
	}
	return fmt.Sprintf("%q", sb.String())
}
