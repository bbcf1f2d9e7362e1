// Package pairing owns the cabinet's pairing with RomM: the device authorization flow of RomM 5.0
// and later (a code the user approves in RomM's web UI, shown in the terminal and on the cabinet's
// screen until it is approved, denied or expired), the pair-code exchange of RomM 4.8 and later,
// the registration of the cabinet as a RomM device, and the Store that keeps the paired token.
//
// A token configured in cabinet.romm.token always wins over a paired one; pairing refuses while one
// is set. Nothing here prints, logs or returns the token.
package pairing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
)

// Scopes are the least the cabinet's features need: who it is, the library reads, the player's
// ROM data (play sessions, activity) and its own device.
func Scopes() []string {
	return []string{"me.read", "roms.read", "platforms.read", "collections.read", "firmware.read",
		"roms.user.read", "roms.user.write", "devices.read", "devices.write"}
}

// SyncScopes are Scopes plus what syncing the games' saves needs: RomM's saves are assets
// (negotiate and download read them, upload writes them).
func SyncScopes() []string { return append(Scopes(), "assets.read", "assets.write") }

// CanSyncSaves reports whether a pairing's scopes let the cabinet sync saves. An unknown grant
// (nil: RomM did not say) is taken as able: RomM's own refusal then says which scope is missing.
func CanSyncSaves(granted []string) bool {
	if granted == nil {
		return true
	}
	for _, s := range []string{"assets.read", "assets.write", "devices.read", "devices.write"} {
		if !slices.Contains(granted, s) {
			return false
		}
	}
	return true
}

// What the cabinet calls itself in RomM's device list.
const (
	Client   = "cabinet"
	Platform = "batocera"
)

// ErrConfiguredToken: cabinet.romm.token (or _file) is set, and it would win over a paired token.
var ErrConfiguredToken = errors.New("remove cabinet.romm.token (and _file) first: a configured token wins over a paired one")

// Server is what pairing uses of RomM. ClientServer adapts a *romm.Client.
type Server interface {
	Version(ctx context.Context) (romm.Version, error)
	DeviceInit(ctx context.Context, r romm.DeviceInitRequest) (romm.DeviceCode, error)
	DeviceToken(ctx context.Context, deviceCode string) (romm.DeviceToken, error)
	ExchangePairCode(ctx context.Context, code string) (romm.DeviceToken, error)
	// RegisterDevice registers the cabinet with RomM as the holder of token (not the client's own
	// credential: pairing starts without one) and returns the device id.
	RegisterDevice(ctx context.Context, token string, d romm.DeviceInfo) (string, error)
}

// ClientServer is a Server over a *romm.Client without a token.
type ClientServer struct{ *romm.Client }

// RegisterDevice calls POST /api/devices with token.
func (c ClientServer) RegisterDevice(ctx context.Context, token string, d romm.DeviceInfo) (string, error) {
	withToken, err := c.Client.WithToken(token)
	if err != nil {
		return "", err
	}
	return withToken.RegisterDevice(ctx, d)
}

// Options configure Pair and PairCode.
type Options struct {
	Server Server
	URL    string // cabinet.romm.url: recorded with the token, and the base of a relative verification URL
	Store  Store
	Screen Screen    // nil: the terminal only
	Out    io.Writer // what the user reads; nil: discarded
	Clock  clock.Clock
	// RepeatEvery is how often the code is shown again on the screen; 0 means 4 s.
	RepeatEvery time.Duration
	// ConfiguredToken: cabinet.romm.token or cabinet.romm.token_file is set.
	ConfiguredToken bool
	// Identifier is the cabinet id (RomM's client_device_identifier).
	Identifier string
	// Device describes the cabinet; empty Client and Platform mean Client and Platform.
	Device romm.DeviceInfo
	// Scopes requested; nil means Scopes().
	Scopes []string
}

const (
	defaultRepeat   = 4 * time.Second
	defaultInterval = 5 * time.Second // RFC 8628's default
	slowDownStep    = 5 * time.Second // RFC 8628 §3.5
	defaultExpiry   = 10 * time.Minute
	maxExpiry       = 30 * time.Minute
	finalTimeout    = 3 * time.Second
	maxNetFailures  = 3
)

func (o *Options) defaults() {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.RepeatEvery <= 0 {
		o.RepeatEvery = defaultRepeat
	}
	if o.Scopes == nil {
		o.Scopes = Scopes()
	}
	if o.Device.Client == "" {
		o.Device.Client = Client
	}
	if o.Device.Platform == "" {
		o.Device.Platform = Platform
	}
}

// gate checks RomM's version: pair codes need 4.8 (client tokens), the device flow 5.0.
func gate(ctx context.Context, s Server, deviceFlow bool) error {
	v, err := s.Version(ctx)
	if err != nil {
		return err
	}
	switch {
	case !v.AtLeast(4, 8):
		return fmt.Errorf("RomM %s is older than 4.8 and cannot pair a device (client tokens came in 4.8): upgrade RomM to 5.0 or newer and run `cabinet romm pair` again", v)
	case deviceFlow && !v.AtLeast(5, 0):
		return fmt.Errorf("RomM %s has no device pairing (it came in 5.0): in RomM open Profile → Client tokens, create a token with the scopes %s, press Pair, and run `cabinet romm pair --code XXXXXXXX` with the code it shows (valid 60 s); or upgrade RomM to 5.0",
			v, strings.Join(Scopes(), " "))
	}
	return nil
}

// finish registers the cabinet when the token carries no device id and stores the pairing. A
// failed registration keeps the token (it works for reads) and is reported on Out.
func finish(ctx context.Context, o *Options, tok romm.DeviceToken) (Paired, error) {
	if err := checkToken(tok.Token); err != nil {
		return Paired{}, fmt.Errorf("RomM answered with a token that %v: pair again, and report it if it persists", err)
	}
	p := Paired{Token: tok.Token, DeviceID: tok.DeviceID, URL: o.URL, Scopes: tok.Scopes,
		PairedAt: o.Clock.Now(), ExpiresAt: tok.ExpiresAt}
	if p.DeviceID == "" {
		id, err := o.Server.RegisterDevice(ctx, tok.Token, o.Device)
		switch {
		case err != nil:
			fmt.Fprintf(o.Out, "RomM did not register the cabinet as a device: %v\n"+
				"The token works for the library; run `cabinet romm pair` again to register it.\n", err)
		case id == "":
			fmt.Fprintln(o.Out, "RomM registered the cabinet but gave no device id; run `cabinet romm pair` again.")
		default:
			p.DeviceID = id
		}
	}
	// Paired again with the same RomM (a token revoked, a device lost): the
	// reporting goes on from where it began, so the sessions that waited
	// for the new token are not taken for ones from before the pairing.
	if old, err := o.Store.Load(); err == nil && sameURL(old.URL, o.URL) && !old.PairedAt.IsZero() {
		p.ReportSince = old.PairedAt
		if !old.ReportSince.IsZero() && old.ReportSince.Before(old.PairedAt) {
			p.ReportSince = old.ReportSince
		}
	}
	if err := o.Store.Save(p); err != nil {
		return Paired{}, err
	}
	return p, nil
}

// PairCode exchanges a pair code (8 characters, shown by RomM 4.8 and later under Profile →
// Client tokens → Pair, valid 60 s) for the token it pairs, registers the device and stores it.
func PairCode(ctx context.Context, o Options, code string) (Paired, error) {
	o.defaults()
	if o.ConfiguredToken {
		return Paired{}, ErrConfiguredToken
	}
	if err := gate(ctx, o.Server, false); err != nil {
		return Paired{}, err
	}
	tok, err := o.Server.ExchangePairCode(ctx, code) // it checks the code before sending it
	if err != nil {
		return Paired{}, fmt.Errorf("exchange the pair code: %w", err)
	}
	p, err := finish(ctx, &o, tok)
	if err != nil {
		return Paired{}, err
	}
	if o.Screen != nil {
		showFinal(ctx, o.Screen, msgPaired)
	}
	return p, nil
}
