package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/daemon/clock"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// publisher is the MQTT side the engine drains into (the daemon's Link).
type publisher interface {
	journal.Publisher
	Connected() bool
}

// engine owns the store for the daemon's life: every event (from a hook over
// the socket, the spool, the ES watcher) goes through the journal's Owner in
// one fsynced transaction, and one drainer publishes what is pending, in
// order, whenever the broker is there. What it adds to the Owner are the
// daemon's timers: the flush that makes a session final, and retries with
// backoff while the store refuses writes.
type engine struct {
	owner *journal.Owner
	clock clock.Clock
	log   zerolog.Logger
	// after runs once per event applied for the first time.
	after func(journal.Keyed)
	// observe, when set, is told every apply's result and the rules it was
	// applied with, in apply order (under mu: it must not block); the
	// second screens' events (screens.go).
	observe func(journal.Result, journal.Rules)

	mu      sync.Mutex // guards rules, pub and the timer
	rules   journal.Rules
	pub     publisher
	timer   clock.Timer   // the pending flush or retry
	retry   time.Duration // the current backoff after failed writes
	stopped bool          // no timer is armed any more
	applied chan struct{} // closed and replaced after every apply (watchers wait on it)

	wake chan struct{} // drain request
	// logged is signalled when an apply logged sessions or started or ended
	// a game: the RomM reporter acts without waiting for its next round.
	logged chan struct{}
	// ended is signalled when an apply ended a game (the installs part
	// finishes the ES side of installs made while it ran).
	ended chan struct{}
	snap  haentities.Snapshot // the states after the latest apply
	// draining admits one drain at a time: the drain loop, the announce
	// after a connect and the last drain at shutdown would otherwise read
	// the same pending messages and publish them twice, out of order.
	draining chan struct{}
}

func newEngine(owner *journal.Owner, rules journal.Rules, clk clock.Clock, log zerolog.Logger, after func(journal.Keyed)) *engine {
	return &engine{owner: owner, rules: rules, clock: clk, log: log, after: after,
		wake: make(chan struct{}, 1), logged: make(chan struct{}, 1), ended: make(chan struct{}, 1), applied: make(chan struct{}), draining: make(chan struct{}, 1)}
}

func (e *engine) store() *store.Store { return e.owner.Store }

// setRules swaps settings and tracker rules after a configuration change.
func (e *engine) setRules(r journal.Rules) {
	e.mu.Lock()
	r.DiscoveryRecorded = false                       // new names, topics or entities: record them again
	r.Settings.Favorites = e.rules.Settings.Favorites // ES's, not the file's (setFavorites)
	e.rules = r
	e.mu.Unlock()
}

// setFavorites puts the favourites select's options (haentities.FavoriteOptions) in the settings,
// and says whether they changed: the discovery is then recorded again at the next apply.
func (e *engine) setFavorites(options string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rules.Settings.Favorites == options {
		return false
	}
	e.rules.Settings.Favorites, e.rules.DiscoveryRecorded = options, false
	return true
}

func (e *engine) setPublisher(p publisher) {
	e.mu.Lock()
	e.pub = p
	e.mu.Unlock()
	e.kick()
}

func (e *engine) currentRules() journal.Rules {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rules
}

// apply persists events (keyed, so a duplicate is applied once) after
// whatever waits in the intake log and the spool. It returns once
// everything is committed and fsynced.
func (e *engine) apply(items ...journal.Keyed) (journal.Result, error) {
	r := e.currentRules()
	res, err := e.owner.Apply(r, true, items...)
	if err != nil {
		e.retryLater()
		return res, err
	}
	e.mu.Lock()
	if !r.DiscoveryRecorded && r.Publishing && e.rules.Settings == r.Settings { // no reload meanwhile
		e.rules.DiscoveryRecorded = true
	}
	e.retry = 0
	if res.FlushIn > 0 && !e.stopped {
		e.arm(res.FlushIn + 50*time.Millisecond)
	}
	close(e.applied)
	e.applied = make(chan struct{})
	gameChanged := e.snap.Playing != res.Snapshot.Playing || e.snap.Current.ID != res.Snapshot.Current.ID
	e.snap = res.Snapshot
	if e.observe != nil {
		e.observe(res, r)
	}
	e.mu.Unlock()
	for _, k := range res.Applied {
		e.after(k)
	}
	if len(res.Logged) > 0 || gameChanged {
		select {
		case e.logged <- struct{}{}:
		default:
		}
	}
	if gameChanged && !res.Snapshot.Playing {
		select {
		case e.ended <- struct{}{}:
		default:
		}
	}
	e.kick()
	return res, nil
}

// snapshot is the states after the latest apply.
func (e *engine) snapshot() haentities.Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.snap
}

// arm (e.mu held) replaces the pending flush or retry: one timer, because
// either makes the other unnecessary (both apply everything pending).
func (e *engine) arm(d time.Duration) {
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer = e.clock.AfterFunc(d, func() { e.apply() })
}

// retryLater applies again after a failed write (a full disk, a failing
// card), backing off from 2 s to a minute: the flush that makes a session
// final has no other trigger than the next event, which may be hours away.
func (e *engine) retryLater() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return
	}
	e.retry = min(max(2*e.retry, 2*time.Second), time.Minute)
	e.arm(e.retry)
}

// appliedCh is closed at the next apply.
func (e *engine) appliedCh() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applied
}

// kick asks the drainer to publish what is pending.
func (e *engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// drainLoop publishes pending messages whenever kicked.
func (e *engine) drainLoop(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		}
		e.drain(ctx)
	}
}

// drain publishes everything pending, in order, and marks what the broker
// acknowledged. Anything left waits for the next connect.
func (e *engine) drain(ctx context.Context) {
	e.mu.Lock()
	pub := e.pub
	e.mu.Unlock()
	if pub == nil || !pub.Connected() {
		return
	}
	select {
	case e.draining <- struct{}{}:
		defer func() { <-e.draining }()
	case <-ctx.Done():
		return
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	d, err := e.owner.Deliver(pctx, pub)
	cancel()
	if err != nil {
		e.log.Debug().Err(err).Int("sent", d.Sent).Int("pending", d.Pending).Msg("drain incomplete; the rest waits for the next connect")
	}
}

// announce re-publishes discovery and every retained state (not
// availability: the link owns it while connected), then drains. It runs on
// every connect and after Home Assistant's birth message.
func (e *engine) announce(ctx context.Context) {
	e.mu.Lock()
	pub, settings := e.pub, e.rules.Settings
	e.mu.Unlock()
	if pub == nil {
		return
	}
	st := e.store()
	retained, err := st.Retained()
	if err != nil {
		e.log.Error().Err(err).Msg("read retained states")
		return
	}
	// What is still undelivered goes out with the drain below, in order:
	// announce only the rest, so nothing is sent twice.
	pending := map[string]bool{}
	if items, err := st.Pending(e.clock.Now()); err == nil {
		for _, it := range items {
			pending[it.Topic] = true
		}
	}
	avail := settings.AvailabilityTopic()
	msgs := retained[:0]
	for _, m := range retained {
		if m.Topic != avail && !pending[m.Topic] {
			msgs = append(msgs, m)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := pub.Publish(pctx, msgs)
	cancel()
	if err != nil {
		e.log.Warn().Err(err).Int("sent", n).Int("of", len(msgs)).Msg("announce incomplete")
	} else {
		e.log.Debug().Int("messages", n).Msg("announced")
	}
	e.drain(ctx)
}

// stop waits for a pending flush no longer.
func (e *engine) stop() {
	e.mu.Lock()
	e.stopped = true
	if e.timer != nil {
		e.timer.Stop()
	}
	e.mu.Unlock()
}
