package daemon

import (
	"context"
	"reflect"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/pairing"
	"github.com/batocera-cabinet/cabinet/daemon/library/platforms"
	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/daemon/retroarch"
	"github.com/batocera-cabinet/cabinet/daemon/tools"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// requestsInterval is how often the daemon looks for library requests due a check (each has
// its own backoff, from a minute to half an hour); library_request makes a new one due at once.
const requestsInterval = time.Minute

// requestsLink is the follower of one configuration of the library servers.
type requestsLink struct {
	key requestsKey
	f   *requests.Follower
}

// requestsKey is what of the configuration the follower's clients are built from.
type requestsKey struct {
	romarrURL, romarrKey           string
	rommURL, rommToken, rommCAFile string
	platformMap                    map[string]string
	esURL, retroArchAddr           string
}

// followRequests follows the library requests (library_request) on the daemon's clock: at
// start and every requestsInterval, each due request is checked once (package requests), and
// what moved is logged. A failing server is said once until its failure changes.
func (d *Daemon) followRequests(ctx context.Context) error { return d.followRequestsOn(ctx, nil) }

// followRequestsOn is followRequests also woken by wake (wakingRequests signals it when
// library_request records or changes a request); a nil wake waits for the clock only.
func (d *Daemon) followRequestsOn(ctx context.Context, wake <-chan struct{}) error {
	tick, tc := d.clock.NewTicker(requestsInterval)
	defer tick.Stop()
	var link *requestsLink
	said := map[string]string{} // what was last said of each failure
	say := func(what string, err error, msg string) {
		if err == nil {
			delete(said, what)
			return
		}
		if text := err.Error(); said[what] != text {
			said[what] = text
			d.log.Warn().Err(err).Msg(msg)
		}
	}
	for {
		link = d.requestsLinkFor(link)
		pass, err := link.f.Follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		say("store", err, "library requests not followed: the store failed")
		for _, c := range pass.Changes {
			d.log.Info().Str("request", c.ID).Str("game", untrusted.Clean(c.Game, 100)).Str("from", c.From).Str("to", c.To).
				Str("detail", c.Detail).Msg("library request moved")
		}
		if pass.Checked > 0 {
			say("romarr", pass.ROMarrErr, "ROMarr did not answer the follower of library requests; they are checked again later")
			say("romm", pass.RomMErr, "RomM did not answer the follower of library requests; they are checked again later")
			say("install", pass.InstallErr, "a requested game could not be installed; it is tried again")
			d.log.Debug().Int("checked", pass.Checked).Int("moved", len(pass.Changes)).Msg("library requests followed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tc:
		case <-wake:
		}
	}
}

// wakingRequests is the store as the daemon's tools write requests to it: a new or changed
// request wakes the follower (a full wake channel already has a pass coming).
type wakingRequests struct {
	requests.Kept
	wake chan<- struct{}
}

// PutRequest implements tools.RequestStore.
func (w wakingRequests) PutRequest(r requests.Request) error {
	err := w.Kept.PutRequest(r)
	if err == nil {
		w.nudge()
	}
	return err
}

// UpdateRequest implements tools.RequestStore.
func (w wakingRequests) UpdateRequest(id string, fn func(*requests.Request) error) error {
	err := w.Kept.UpdateRequest(id, fn)
	if err == nil {
		w.nudge()
	}
	return err
}

func (w wakingRequests) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// requestsLinkFor returns the follower for the configuration in force: link itself while it
// has not changed.
func (d *Daemon) requestsLinkFor(link *requestsLink) *requestsLink {
	cfg := d.config().Tools
	k := requestsKey{romarrURL: cfg.ROMarr.URL, romarrKey: cfg.ROMarr.APIKey, rommURL: cfg.RomM.URL, rommToken: cfg.RomM.Token,
		rommCAFile: cfg.RomM.CAFile, platformMap: cfg.RomM.PlatformMap, esURL: cfg.ESURL, retroArchAddr: cfg.RetroArchAddr}
	var installer tools.Installer
	if srv := d.mcpServer(false); srv != nil {
		installer = srv.RequestInstaller() // library_install's: one install at a time
	}
	if link == nil || !reflect.DeepEqual(link.key, k) {
		link = d.newRequestsLink(k)
	}
	link.f.Installer = nil
	if installer != nil {
		link.f.Installer = installer
	}
	return link
}

func (d *Daemon) newRequestsLink(k requestsKey) *requestsLink {
	f := &requests.Follower{Store: requests.Kept{DB: d.eng.store()}, Platforms: platforms.Default().WithOverrides(k.platformMap), Now: d.clock.Now,
		Playing: func() bool { return d.eng.snapshot().Playing },
		Screen:  pairing.CabinetScreen{ES: d.es(), RetroArch: retroarch.New(k.retroArchAddr, retroarch.WithTimeout(time.Second))}}
	if k.romarrURL != "" {
		if c, err := romarr.New(romarr.Config{URL: k.romarrURL, APIKey: k.romarrKey}); err == nil {
			f.ROMarr = c
		} else {
			d.log.Error().Err(err).Msg("library requests are not followed in ROMarr: its client cannot be built")
		}
	}
	if k.rommURL != "" {
		if c, err := romm.New(romm.Config{URL: k.rommURL, Token: k.rommToken, CAFile: k.rommCAFile}); err == nil {
			f.RomM = c
		} else {
			d.log.Error().Err(err).Msg("library requests are not looked for in RomM: its client cannot be built")
		}
	}
	return &requestsLink{key: k, f: f}
}

// PendingRequests counts the library requests still followed (doctor); 0 when the store
// cannot say.
func (d *Daemon) PendingRequests() int {
	n, err := requests.Kept{DB: d.eng.store()}.OpenRequests()
	if err != nil {
		return 0
	}
	return n
}

// StoreRequests keeps the library requests without the daemon (`cabinet call`, `cabinet mcp
// --standalone`): it opens the store for each call (briefly: a hook may need it next). The
// requests are followed once the daemon runs.
type StoreRequests struct{ Path string }

func (s StoreRequests) with(fn func(*store.Store) error) error {
	return withStore(s.Path, 5*time.Second, "open the store for the library requests", fn)
}

// PutRequest implements tools.RequestStore.
func (s StoreRequests) PutRequest(r requests.Request) error {
	return s.with(func(st *store.Store) error { return requests.Kept{DB: st}.PutRequest(r) })
}

// UpdateRequest implements tools.RequestStore.
func (s StoreRequests) UpdateRequest(id string, fn func(*requests.Request) error) error {
	return s.with(func(st *store.Store) error { return requests.Kept{DB: st}.UpdateRequest(id, fn) })
}

// Requests implements tools.RequestStore.
func (s StoreRequests) Requests() (all []requests.Request, err error) {
	err = s.with(func(st *store.Store) error { all, err = requests.Kept{DB: st}.Requests(); return err })
	return all, err
}
