package romarr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// Bounds on what Cabinet sends ROMarr in a request.
const (
	MaxGameName     = 200
	MaxPlatformName = 100
)

// RequestResult is ROMarr's answer to a request. ROMarr answers a request it could not fulfil
// with 200 and {"ok": false, "error": …}, so that is a result, not a Go error. Every failure but
// an unknown platform also puts the game on ROMarr's Wanted list and a failed row in its queue,
// and a second request of the same game and platform is a retry of that entry, not a new one.
type RequestResult struct {
	OK      bool
	Error   string // ROMarr's own sentence ("no usable release among 0 result(s)"), cleaned
	Release string // the release ROMarr chose, when it chose one
	Seeders int
}

// RequestGame asks ROMarr to find game for platform (a ROMarr platform slug, or a name or alias
// ROMarr resolves, such as "snes" or "Super Nintendo"), hand the best release to a download
// client and file it. ROMarr searches its indexers before answering, so this can take the whole
// timeout. It is never retried: a retry could queue a second download.
func (c *Client) RequestGame(ctx context.Context, game, platform string) (RequestResult, error) {
	game, err := outgoing("game", game, MaxGameName)
	if err != nil {
		return RequestResult{}, fmt.Errorf("romarr request: %w", err)
	}
	platform, err = outgoing("platform", platform, MaxPlatformName)
	if err != nil {
		return RequestResult{}, fmt.Errorf("romarr request: %w", err)
	}
	ctx, cancel := c.operation(ctx)
	defer cancel()
	body := struct {
		Game     string `json:"game"`
		Platform string `json:"platform"`
	}{game, platform}
	b, err := c.call(ctx, "POST", "/api/request", nil, body, maxSmallBody)
	if err != nil {
		return RequestResult{}, fmt.Errorf("romarr request %q for %s: %w", game, platform, err)
	}
	res, err := c.decodeRequest(b)
	if err != nil {
		return RequestResult{}, fmt.Errorf("romarr request %q for %s: %w", game, platform, err)
	}
	return res, nil
}

// outgoing cleans text Cabinet sends ROMarr (it may come from a model) and bounds it.
func outgoing(what, s string, maxRunes int) (string, error) {
	s = untrusted.Clean(s, 0)
	if s == "" {
		return "", fmt.Errorf("the %s is empty: name it", what)
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return "", fmt.Errorf("the %s is %d characters long: shorten it to at most %d", what, n, maxRunes)
	}
	return s, nil
}

func (c *Client) decodeRequest(b []byte) (RequestResult, error) {
	var raw struct {
		OK      *bool  `json:"ok"`
		Error   any    `json:"error"`
		Release string `json:"release"`
		Seeders count  `json:"seeders"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return RequestResult{}, shapeErr("POST /api/request", err)
	}
	if raw.OK == nil {
		return RequestResult{}, shapeErr("POST /api/request", errors.New(`no "ok"`))
	}
	res := RequestResult{OK: *raw.OK, Release: c.text(raw.Release, maxTitle), Seeders: int(raw.Seeders)}
	if s, ok := raw.Error.(string); ok {
		res.Error = c.text(s, maxSentence)
	}
	if !res.OK && res.Error == "" {
		// ROMarr's answer when a download client rejects the release carries no sentence; the
		// reason is on the failed queue row.
		res.Error = "ROMarr gave no reason: see the failed row in its queue"
	}
	return res, nil
}
