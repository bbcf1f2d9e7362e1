package pairing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// The last toast of a device flow.
const (
	msgPaired    = "Paired with RomM"
	msgDenied    = "RomM pairing denied"
	msgExpired   = "RomM pairing expired"
	msgCancelled = "RomM pairing cancelled"
	msgFailed    = "RomM pairing failed"
)

// ErrDenied and ErrExpired end a device flow that was not approved.
var (
	ErrDenied  = errors.New("the pairing was denied in RomM: run `cabinet romm pair` to try again")
	ErrExpired = errors.New("the pairing code expired before it was approved: run `cabinet romm pair` again and approve the new code")
)

// Pair runs RomM's device authorization flow: it asks RomM for a code, prints the code and the
// address to approve it at on Out, shows them on Screen every RepeatEvery until the flow ends,
// polls RomM at the interval it gives (5 s longer after each slow_down), registers the cabinet as
// a device when the token has none, and stores the pairing. A denial, an expiry or ctx ending
// stops it with one sentence and a last toast saying which.
func Pair(ctx context.Context, o Options) (Paired, error) {
	o.defaults()
	if o.ConfiguredToken {
		return Paired{}, ErrConfiguredToken
	}
	if err := gate(ctx, o.Server, true); err != nil {
		return Paired{}, err
	}
	dc, err := o.Server.DeviceInit(ctx, romm.DeviceInitRequest{Identifier: o.Identifier, Name: o.Device.Name,
		Client: o.Device.Client, Platform: o.Device.Platform, ClientVersion: o.Device.ClientVersion, Scopes: o.Scopes})
	if err != nil {
		return Paired{}, fmt.Errorf("start pairing with RomM: %w", err)
	}
	code := untrusted.Clean(dc.UserCode, 32)
	if code == "" || dc.DeviceCode == "" {
		return Paired{}, errors.New("start pairing with RomM: RomM answered without a code: check that cabinet.romm.url is RomM 5.0 or newer")
	}
	link, page := verificationURL(o.URL, dc.VerificationURL, code)
	expiry := dc.ExpiresIn
	if expiry <= 0 {
		expiry = defaultExpiry
	}
	expiry = min(expiry, maxExpiry)
	fmt.Fprintf(o.Out, "To pair this cabinet with RomM, open this address on a phone or computer signed in to RomM and approve it:\n\n  %s\n\n"+
		"(or open %s and enter the code %s). The code is valid for %s and shows on the cabinet's screen too.\n"+
		"Waiting for the approval; Ctrl-C stops.\n", link, page, code, minutes(expiry))

	tok, err := poll(ctx, &o, dc, expiry, toastText(link, page, code))
	if err != nil {
		return Paired{}, err
	}
	p, err := finish(ctx, &o, tok)
	if err != nil {
		showFinal(ctx, o.Screen, msgFailed)
		return Paired{}, err
	}
	showFinal(ctx, o.Screen, msgPaired)
	return p, nil
}

// poll waits for the approval on one timer armed for whichever comes first: the next toast, the
// next poll or the expiry. (One timer keeps a fake clock's test deterministic.)
func poll(ctx context.Context, o *Options, dc romm.DeviceCode, expiry time.Duration, toast string) (romm.DeviceToken, error) {
	interval := max(dc.Interval, time.Second)
	if dc.Interval <= 0 {
		interval = defaultInterval
	}
	now := o.Clock.Now()
	deadline := now.Add(expiry)
	nextToast, nextPoll := now, now.Add(interval)
	var timer clock.Timer // armed in the loop, so a fake clock never sees a placeholder deadline
	var fired <-chan time.Time
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	shown, netFailures := false, 0
	for {
		now = o.Clock.Now()
		if !now.Before(deadline) {
			showFinal(ctx, o.Screen, msgExpired)
			return romm.DeviceToken{}, ErrExpired
		}
		if o.Screen != nil && !now.Before(nextToast) {
			if err := o.Screen.Show(ctx, toast); err != nil && !shown && ctx.Err() == nil {
				fmt.Fprintf(o.Out, "(The cabinet's screen did not show the code: %v. Use the address above.)\n", err)
			}
			shown = true
			nextToast = now.Add(o.RepeatEvery)
		}
		if !now.Before(nextPoll) {
			tok, err := o.Server.DeviceToken(ctx, dc.DeviceCode)
			var ne net.Error
			switch {
			case err == nil:
				return tok, nil
			case errors.Is(err, romm.ErrAuthorizationPending):
				netFailures = 0
			case errors.Is(err, romm.ErrSlowDown):
				netFailures = 0
				interval += slowDownStep
			case errors.Is(err, romm.ErrAccessDenied):
				showFinal(ctx, o.Screen, msgDenied)
				return romm.DeviceToken{}, ErrDenied
			case errors.Is(err, romm.ErrExpiredToken):
				showFinal(ctx, o.Screen, msgExpired)
				return romm.DeviceToken{}, ErrExpired
			case ctx.Err() != nil:
				// handled below
			case errors.As(err, &ne) && netFailures < maxNetFailures:
				netFailures++ // RomM restarting, Wi-Fi dropping: the code stays valid
			default:
				showFinal(ctx, o.Screen, msgFailed)
				return romm.DeviceToken{}, fmt.Errorf("wait for the approval: %w", err)
			}
			nextPoll = o.Clock.Now().Add(interval)
		}
		if ctx.Err() != nil {
			showFinal(ctx, o.Screen, msgCancelled)
			return romm.DeviceToken{}, fmt.Errorf("pairing stopped before it was approved: %w", ctx.Err())
		}
		next := minTime(nextPoll, deadline)
		if o.Screen != nil {
			next = minTime(next, nextToast)
		}
		if wait := max(next.Sub(o.Clock.Now()), 0); timer == nil {
			timer, fired = o.Clock.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			showFinal(ctx, o.Screen, msgCancelled)
			return romm.DeviceToken{}, fmt.Errorf("pairing stopped before it was approved: %w", ctx.Err())
		case <-fired:
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// showFinal shows the last toast even when ctx has ended (Ctrl-C), within its own bound.
func showFinal(ctx context.Context, s Screen, text string) {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
	defer cancel()
	s.Show(ctx, text)
}

// verificationURL is the address to approve the code at (with the code) and the page without it.
// RomM gives a path ("/pair/device?user_code=…") or a full URL; a path is joined to RomM's origin.
func verificationURL(rommURL, given, code string) (link, page string) {
	base, _ := url.Parse(rommURL)
	u, err := url.Parse(strings.TrimSpace(given))
	if err != nil || given == "" {
		u = &url.URL{Path: "/pair/device"}
	}
	if base != nil && u.Host == "" {
		u.Scheme, u.Host = base.Scheme, base.Host
	}
	q := u.Query()
	if q.Get("user_code") == "" {
		q.Set("user_code", code)
	}
	u.RawQuery, u.Fragment = q.Encode(), ""
	link = untrusted.Clean(u.String(), 300)
	u.RawQuery = ""
	page = untrusted.Clean(u.String(), 300)
	return link, page
}

// toastText fits one screen line (RetroArch's limit is the tightest): the full address when it
// fits, else the page and the code.
func toastText(link, page, code string) string {
	for _, t := range []string{
		"Pair with RomM: open " + link + " (code " + code + ")",
		"Pair with RomM: open " + page + " and enter " + code,
		"Pair with RomM: code " + code,
	} {
		if retroarch.ValidateMessage(t) == nil {
			return t
		}
	}
	return "Pair with RomM: see the terminal"
}

func minutes(d time.Duration) string {
	if m := int(d.Round(time.Minute) / time.Minute); m > 1 {
		return fmt.Sprintf("%d minutes", m)
	}
	return fmt.Sprintf("%d seconds", int(d/time.Second))
}
