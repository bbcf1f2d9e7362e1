package retroarch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Version asks VERSION, RetroArch's liveness probe, and returns e.g. "1.14.0".
func (c *Client) Version(ctx context.Context) (string, error) {
	b, err := c.request(ctx, "VERSION", func(b []byte) bool {
		_, err := parseVersion(b)
		return err == nil
	})
	if err != nil {
		return "", err
	}
	return parseVersion(b)
}

// Status asks GET_STATUS: playing, paused or contentless, and which game.
func (c *Client) Status(ctx context.Context) (Status, error) {
	b, err := c.request(ctx, "GET_STATUS", func(b []byte) bool {
		return strings.HasPrefix(string(b), statusPrefix)
	})
	if err != nil {
		return Status{}, err
	}
	st, err := parseStatus(b)
	if err != nil {
		return Status{}, fmt.Errorf("retroarch GET_STATUS: %w", err)
	}
	return st, nil
}

// ConfigParam reads one of the settings GET_CONFIG_PARAM supports. The value
// may be empty (the setting is unset). A setting this RetroArch does not know
// gives an error wrapping ErrUnsupported.
func (c *Client) ConfigParam(ctx context.Context, name ConfigName) (string, error) {
	key := name.String()
	if key == "" {
		return "", fmt.Errorf("retroarch GET_CONFIG_PARAM %d: %w", int(name), ErrInvalidCommand)
	}
	// The argument is never empty: RetroArch would read stale bytes instead.
	b, err := c.request(ctx, "GET_CONFIG_PARAM "+key, func(b []byte) bool {
		return strings.HasPrefix(string(b), configReplyPrefix(key))
	})
	if err != nil {
		return "", err
	}
	v, err := parseConfigParam(b, key)
	if err != nil {
		return "", fmt.Errorf("retroarch GET_CONFIG_PARAM %s: %w", key, err)
	}
	return v, nil
}

// ShowMessage shows text over the game (SHOW_MSG, about three seconds). The
// text must pass ValidateMessage. RetroArch does not reply, so success means
// the datagram went out and the port was not refused.
func (c *Client) ShowMessage(ctx context.Context, text string) error {
	if err := ValidateMessage(text); err != nil {
		return fmt.Errorf("retroarch %s: %w", showMsg, err)
	}
	return c.send(ctx, showMsg+" "+text)
}

// Send presses a hotkey. RetroArch does not reply, so success means the
// datagram went out and the port was not refused; read Status to see an
// effect such as pausing.
func (c *Client) Send(ctx context.Context, cmd Command) error {
	wire := cmd.String()
	if wire == "" {
		return fmt.Errorf("retroarch send %d: %w", int(cmd), ErrInvalidCommand)
	}
	return c.send(ctx, wire)
}

// Quit closes the running game: QUIT, then QUIT again after the quit interval,
// which closes it whether or not quit_press_twice is on. A refusal of the
// second QUIT means the first one already worked.
func (c *Client) Quit(ctx context.Context) error {
	if err := c.Send(ctx, CmdQuit); err != nil {
		return err
	}
	t := time.NewTimer(c.quitInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("retroarch QUIT: %w", ctx.Err())
	case <-t.C:
	}
	if err := c.Send(ctx, CmdQuit); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	return nil
}
