package daemon

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/haentities/untrusted"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// requestsInterval is how often the daemon looks for library requests due a check (each has
// its own backoff, from a minute to half an hour); library_request makes a new one due at once.
const requestsInterval = time.Minute

// requestsLink is the follower over one set of links (the library servers, the installer and
// the screen of the configuration in force).
type requestsLink struct {
	links *links.Links
	f     *requests.Follower
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

// requestsLinkFor returns the follower for the links in force: link itself while they have not
// changed.
func (d *Daemon) requestsLinkFor(link *requestsLink) *requestsLink {
	l := d.links()
	if link != nil && link.links == l {
		return link
	}
	f := &requests.Follower{Store: requests.Kept{DB: d.eng.store()}, Platforms: l.Platforms, Now: d.clock.Now,
		Playing: func() bool { return d.eng.snapshot().Playing }, Screen: l.Screen()}
	// Only the servers configured: a nil client in an interface would look like one.
	if l.ROMarr != nil {
		f.ROMarr = l.ROMarr
	}
	if l.RomM != nil {
		f.RomM = l.RomM
	}
	if l.Installer != nil {
		f.Installer = l.Installer // library_install's too: one installer, one install at a time
	}
	return &requestsLink{links: l, f: f}
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
