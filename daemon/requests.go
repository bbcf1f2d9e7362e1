package daemon

import (
	"context"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/requests"
	"github.com/batocera-cabinet/cabinet/daemon/links"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// requestsLink is the follower over one set of links (the library servers, the installer and
// the screen of the configuration in force).
type requestsLink struct {
	links *links.Links
	f     *requests.Follower
}

// followRequests follows the library requests (library_request, package requests' Loop) with
// the follower of the clients in force, woken when library_request records or changes one.
func (d *Daemon) followRequests(ctx context.Context) error {
	var link *requestsLink
	return requests.Loop{Clock: d.clock, Log: d.log, Wake: d.requestsWake, Follower: func() *requests.Follower {
		link = d.requestsLinkFor(link)
		return link.f
	}}.Run(ctx)
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
