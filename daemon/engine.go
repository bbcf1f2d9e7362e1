package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/haentities/outbox"
	"github.com/batocera-cabinet/cabinet/hook/tracker"
	"github.com/batocera-cabinet/cabinet/hook/tracker/journal"
)

// publisher is the MQTT side the engine drains into (the daemon's Link).
type publisher interface {
	Publish(ctx context.Context, msgs []haentities.Message) (int, error)
	Connected() bool
}

// engine owns the store for the daemon's life: every event (from a hook over
// the socket, the spool, the ES watcher) goes through the shared journal in
// one fsynced transaction, and one drainer publishes what is pending, in
// order, whenever the broker is there.
type engine struct {
	store *outbox.Store
	spool journal.Spool
	log   zerolog.Logger
	now   func() tracker.Stamp

	mu      sync.Mutex // guards j, pub and the flush timer
	j       journal.Journal
	pub     publisher
	flush   *time.Timer
	retry   time.Duration // the current backoff after failed writes
	stopped bool          // no timer is armed any more
	applied chan struct{} // closed and replaced after every apply (watchers wait on it)

	wake chan struct{} // drain request
	// draining admits one drain at a time: the drain loop, the announce
	// after a connect and the last drain at shutdown would otherwise read
	// the same pending messages and publish them twice, out of order.
	draining chan struct{}
}

func newEngine(store *outbox.Store, spool journal.Spool, j journal.Journal, log zerolog.Logger, now func() tracker.Stamp) *engine {
	j.Store = store
	return &engine{store: store, spool: spool, j: j, log: log, now: now, wake: make(chan struct{}, 1), applied: make(chan struct{}), draining: make(chan struct{}, 1)}
}

// setJournal swaps settings and tracker rules after a configuration change.
func (e *engine) setJournal(settings haentities.Settings, tc tracker.Config, publishing bool) {
	e.mu.Lock()
	e.j.Settings, e.j.Tracker, e.j.Publishing = settings, tc, publishing
	e.j.DiscoveryRecorded = false // new names, topics or entities: record them again
	e.mu.Unlock()
}

func (e *engine) setPublisher(p publisher) {
	e.mu.Lock()
	e.pub = p
	e.mu.Unlock()
	e.kick()
}

func (e *engine) journal() journal.Journal {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.j
}

// apply persists events (keyed, so a duplicate is applied once) together
// with whatever waits in the spool. It returns once everything is committed
// and fsynced.
func (e *engine) apply(items ...journal.Spooled) (journal.Result, error) {
	spooled, err := e.spool.Read()
	if err != nil {
		e.log.Warn().Err(err).Msg("spool unreadable")
	}
	j := e.journal()
	res, err := j.Apply(e.now(), true, append(spooled, items...))
	if errors.Is(err, outbox.ErrCorrupt) {
		if rerr := e.store.Reset(); rerr == nil {
			e.log.Error().AnErr("cause", err).Str("moved_to", e.store.Quarantined).Msg("the store was damaged; it was moved aside and tracking goes on with a new one")
			res, err = j.Apply(e.now(), true, append(spooled, items...))
		}
	}
	if err != nil {
		e.log.Error().Err(err).Msg("store write failed")
		e.retryLater()
		return res, err
	}
	if !j.DiscoveryRecorded && j.Publishing {
		e.mu.Lock()
		if e.j.Settings == j.Settings { // no reload meanwhile
			e.j.DiscoveryRecorded = true
		}
		e.mu.Unlock()
	}
	e.spool.Remove(res.Ingested)
	if res.Reset != nil {
		e.log.Error().Err(res.Reset).Msg("tracker state unreadable; tracking restarted from a blank state")
	}
	for _, err := range res.Skipped {
		e.log.Warn().Err(err).Msg("event not applied")
	}
	for _, s := range res.Logged {
		e.log.Info().Str("session", s.ID).Str("system", s.System).Dur("duration", s.Duration).Msg("session logged")
	}
	e.mu.Lock()
	e.retry = 0
	if res.FlushIn > 0 && !e.stopped {
		if e.flush != nil {
			e.flush.Stop()
		}
		e.flush = time.AfterFunc(res.FlushIn+50*time.Millisecond, func() { e.apply() })
	}
	close(e.applied)
	e.applied = make(chan struct{})
	e.mu.Unlock()
	e.kick()
	return res, nil
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
	if e.flush != nil {
		e.flush.Stop()
	}
	e.flush = time.AfterFunc(e.retry, func() { e.apply() })
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
	items, err := e.store.Pending(time.Now())
	if err != nil {
		e.log.Error().Err(err).Msg("read outbox")
		return
	}
	if len(items) == 0 {
		return
	}
	msgs := make([]haentities.Message, len(items))
	for i, it := range items {
		msgs[i] = it.Message
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := pub.Publish(pctx, msgs)
	cancel()
	if n > 0 {
		if err := e.store.MarkDelivered(items[:n]); err != nil {
			e.log.Error().Err(err).Msg("mark delivered")
		}
	}
	if err != nil {
		e.log.Debug().Err(err).Int("sent", n).Int("pending", len(items)).Msg("drain incomplete; the rest waits for the next connect")
	}
}

// announce re-publishes discovery and every retained state (not
// availability: the link owns it while connected), then drains. It runs on
// every connect and after Home Assistant's birth message.
func (e *engine) announce(ctx context.Context) {
	e.mu.Lock()
	pub, settings := e.pub, e.j.Settings
	e.mu.Unlock()
	if pub == nil {
		return
	}
	retained, err := e.store.Retained()
	if err != nil {
		e.log.Error().Err(err).Msg("read retained states")
		return
	}
	// What is still undelivered goes out with the drain below, in order:
	// announce only the rest, so nothing is sent twice.
	pending := map[string]bool{}
	if items, err := e.store.Pending(time.Now()); err == nil {
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
	if e.flush != nil {
		e.flush.Stop()
	}
	e.mu.Unlock()
}
