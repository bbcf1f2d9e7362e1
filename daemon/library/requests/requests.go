// Package requests follows the games the household asked ROMarr for (library_request) until
// they are in RomM and, when the request says so, installed on the cabinet.
//
// A Follower looks at each due request in turn: first RomM's search, within the request's
// platform (RomM is where a game has arrived, whatever ROMarr remembers), then ROMarr's queue,
// history and wanted list, which say where it stands on the way (searching, downloading,
// importing, or stuck). Once RomM lists the game, a request to install it is installed through
// the Installer and the cabinet's screen says "Chrono Trigger is ready to play". Requests are
// checked with a backoff (a minute after a change, doubling to half an hour while nothing
// changes), at most MaxChecks times and for MaxAge after they were made; then they expire, said
// once. Every text from the servers is cleaned and capped before it is stored.
//
// The package holds no state between passes: the records are in the store, and the daemon
// calls Follow on its clock.
package requests

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/install"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
)

// ROMarr is what the follower reads of ROMarr (*romarr.Client).
type ROMarr interface {
	Queue(ctx context.Context) ([]romarr.QueueItem, error)
	History(ctx context.Context, limit int) ([]romarr.Event, error)
	Wanted(ctx context.Context, platform string, limit int) ([]romarr.Wanted, error)
}

// RomM is what the follower reads of RomM (*romm.Client).
type RomM interface {
	Platforms(ctx context.Context) ([]romm.Platform, error)
	SearchROMs(ctx context.Context, q romm.SearchQuery) (romm.Page, error)
}

// Installer puts a RomM ROM on the cabinet (*install.Installer).
type Installer interface {
	Install(ctx context.Context, r install.Request, progress func(install.Progress)) (install.Result, error)
}

// Screen shows one line on the cabinet (pairing.CabinetScreen).
type Screen interface {
	Show(ctx context.Context, text string) error
}

// Store keeps the requests (*store.Store).
type Store interface {
	DueRequests(now time.Time) ([]Request, error)
	UpdateRequest(id string, fn func(*Request) error) error
}

// Defaults and bounds.
const (
	MinDelay         = time.Minute      // after a change
	MaxDelay         = 30 * time.Minute // while nothing changes
	DefaultMaxChecks = 500
	DefaultMaxAge    = 7 * 24 * time.Hour
	// MaxInstallTries failed installs fail a request.
	MaxInstallTries = 3
	// InstallTimeout bounds one install (a large game over a slow link).
	InstallTimeout = time.Hour
	// unknownChecks checks of a pending request that ROMarr lists nowhere fail it.
	unknownChecks = 5
	historyDepth  = 200
	maxDetail     = 300
	showTimeout   = 5 * time.Second
)

// Follower follows the requests of Store. Its fields are its dependencies; nil servers are not
// configured (their side is not checked), a nil Installer installs nothing.
type Follower struct {
	Store     Store
	ROMarr    ROMarr
	RomM      RomM
	Installer Installer
	Screen    Screen
	// Playing reports a game running on the cabinet: installs wait until it ends, so a download
	// does not compete with the game. Nil: never.
	Playing func() bool
	// Platforms maps RomM platforms to Batocera folders; nil: the default table.
	Platforms *platforms.Map
	Now       func() time.Time // nil: time.Now
	MaxChecks int              // 0: DefaultMaxChecks
	MaxAge    time.Duration    // 0: DefaultMaxAge
}

// Change is a request whose state moved in a pass.
type Change struct {
	ID, Game, From, To, Detail string
}

// Pass is what one Follow did. The errors are the servers' last failures in the pass (each
// request they touched stays as it was and is checked again after its backoff).
type Pass struct {
	Checked                        int
	Changes                        []Change
	ROMarrErr, RomMErr, InstallErr error
}

// Follow checks every due request once. Its error is the store's, or the context's.
func (f *Follower) Follow(ctx context.Context) (Pass, error) {
	due, err := f.Store.DueRequests(f.now())
	if err != nil {
		return Pass{}, fmt.Errorf("read the library requests: %w", err)
	}
	var p Pass
	v := &view{f: f, pass: &p}
	for _, r := range due {
		next := f.check(ctx, v, r)
		if err := ctx.Err(); err != nil {
			return p, err // an interrupted check is not recorded
		}
		p.Checked++
		if err := f.Store.UpdateRequest(r.ID, func(cur *Request) error {
			install := cur.Install // library_request may have asked to install it meanwhile
			*cur = next
			if install && !next.Install {
				cur.Install = true
				if cur.State == StateInRomM {
					cur.NextCheck = f.now()
				}
			}
			return nil
		}); err != nil && !errors.Is(err, ErrNoRequest) {
			return p, fmt.Errorf("record library request %s: %w", r.ID, err)
		}
		if next.State != r.State {
			p.Changes = append(p.Changes, Change{ID: r.ID, Game: r.Game, From: r.State, To: next.State, Detail: next.Detail})
		}
	}
	return p, nil
}

func (f *Follower) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// outcome is what a check decided besides the record's fields.
type outcome struct {
	close bool // no further check
	soon  bool // check again after MinDelay, whatever the backoff
}

// check looks at one request and returns its new record.
func (f *Follower) check(ctx context.Context, v *view, r Request) Request {
	start := f.now()
	next := r
	next.Checks++
	var o outcome
	switch {
	case start.Sub(r.CreatedAt) >= f.maxAge():
		next.State, o.close = StateExpired, true
		next.Detail = clean(fmt.Sprintf("Cabinet stopped following it %s after it was asked for; it was %s: %s",
			days(f.maxAge()), r.State, r.Detail))
	case r.Checks >= f.maxChecks():
		next.State, o.close = StateExpired, true
		next.Detail = clean(fmt.Sprintf("Cabinet stopped following it after %d checks; it was %s: %s", r.Checks, r.State, r.Detail))
	case r.State == StateInRomM:
	default:
		o = f.follow(ctx, v, &next)
	}
	if next.State == StateInRomM && next.Install {
		o = f.install(ctx, v, &next)
	}
	end := f.now()
	if next.State != r.State || next.ROMID != r.ROMID {
		next.UpdatedAt = end
	}
	switch {
	case o.close, !next.Open():
		next.NextCheck = time.Time{}
	case o.soon:
		next.NextCheck = end.Add(MinDelay)
	default:
		next.NextCheck = end.Add(backoff(end.Sub(next.UpdatedAt)))
	}
	return next
}

// backoff is the wait before the next check of a request unchanged for so long: as long again,
// between MinDelay and MaxDelay (1, 2, 4, 8, 16, 30, 30… minutes).
func backoff(unchanged time.Duration) time.Duration {
	return min(max(unchanged, MinDelay), MaxDelay)
}

// follow moves an open request along: RomM first (the game has arrived, whatever ROMarr says),
// then ROMarr.
func (f *Follower) follow(ctx context.Context, v *view, r *Request) outcome {
	if f.RomM != nil {
		rom, found, err := v.findInRomM(ctx, *r)
		if err == nil && found {
			r.State, r.ROMID = StateInRomM, rom.ID
			r.Detail = clean(fmt.Sprintf("RomM lists it as %s (rom_id %d).", rom.Name, rom.ID))
			return outcome{}
		}
	}
	if f.ROMarr == nil {
		return outcome{}
	}
	s, err := v.romarrSays(ctx, r)
	switch {
	case err != nil:
		return outcome{}
	case s.state == "" && r.State == StatePending && r.Checks >= unknownChecks:
		r.State = StateFailed
		r.Detail = "ROMarr lists it nowhere (not in its queue, history or wanted list): ask for it again with library_request."
		return outcome{close: true}
	case s.state == "":
		return outcome{}
	}
	r.State, r.Detail = s.state, clean(s.detail)
	if s.release != "" {
		r.Release = s.release
	}
	if s.state == StateImporting && f.RomM == nil {
		r.Detail = clean(r.Detail + " Cabinet has no RomM server (cabinet.romm.url) to see it arrive, so it stops following here.")
		return outcome{close: true}
	}
	return outcome{}
}

func (f *Follower) maxChecks() int {
	if f.MaxChecks > 0 {
		return f.MaxChecks
	}
	return DefaultMaxChecks
}

func (f *Follower) maxAge() time.Duration {
	if f.MaxAge > 0 {
		return f.MaxAge
	}
	return DefaultMaxAge
}

func (f *Follower) platforms() *platforms.Map {
	if f.Platforms != nil {
		return f.Platforms
	}
	return platforms.Default()
}

// clean is every detail before it is stored: text from the servers is in it.
func clean(s string) string { return untrusted.Clean(s, maxDetail) }

func days(d time.Duration) string {
	if d >= 24*time.Hour && d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "a day"
	}
	return d.String()
}
