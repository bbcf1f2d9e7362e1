package mqttlink

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// Availability payloads (ha-entities.md).
const (
	PayloadOnline  = "online"
	PayloadOffline = "offline"
)

// DefaultBirthTopic is Home Assistant's default birth topic
// (cabinet.mqtt.ha_status_topic).
const DefaultBirthTopic = "homeassistant/status"

// LinkConfig configures the daemon's persistent connection.
type LinkConfig struct {
	// Options reach the broker; ClientID is cabinet.mqtt.client_id
	// (default cabinet_<id>). Options.Will is ignored: the link's will is
	// PayloadOffline, retained, QoS 1, on AvailabilityTopic.
	Options           Options
	AvailabilityTopic string   // <base>/<id>/status
	BirthTopic        string   // default DefaultBirthTopic
	CommandTopics     []string // filters such as <base>/<id>/+/set

	// OnConnect runs after every (re)connect, once the subscriptions are in
	// place and `online` is acknowledged: re-publish discovery, availability
	// and states, then drain the outbox. ctx ends with the connection; the
	// next connection waits for OnConnect to return, so drains never overlap.
	OnConnect func(ctx context.Context)
	// OnBirth runs BirthDelay after Home Assistant announced itself
	// (`online` on BirthTopic) while the link is up: re-send everything.
	OnBirth func(ctx context.Context)
	// OnCommand receives messages on CommandTopics, one at a time in order.
	// Retained messages are dropped (a stale "reboot" must not replay). dup
	// is MQTT's DUP flag: the broker may be redelivering a QoS 1 command the
	// daemon already received (a press that grants time must not count twice).
	OnCommand func(topic string, payload []byte, dup bool)

	// BirthDelay is the wait before OnBirth; default random 1–5 s
	// (ha-mqtt-discovery.md §16). Tests inject 0.
	BirthDelay func() time.Duration
	// Backoff is the wait before reconnect attempt number failures (1, 2,
	// …); default DefaultBackoff.
	Backoff func(failures int) time.Duration
	Log     zerolog.Logger // zero value: silent
}

// Link is the daemon's single MQTT connection. Create it with NewLink.
type Link struct {
	cfg LinkConfig

	mu       sync.Mutex
	opts     Options
	cur      *session // nil unless connected and announced
	lastErr  error
	stopErr  error
	stopCtx  context.Context
	abort    context.CancelFunc // cancels a connect attempt in progress
	cancel   context.CancelFunc
	done     chan struct{}
	started  bool
	reconfig chan struct{}
	births   chan struct{}
	commands chan command

	reconnects atomic.Int64
	workers    sync.WaitGroup
}

type command struct {
	topic   string
	payload []byte
	dup     bool
}

// NewLink checks cfg and returns a stopped link.
func NewLink(cfg LinkConfig) (*Link, error) {
	if err := cfg.Options.Validate(); err != nil {
		return nil, err
	}
	if !validTopic(cfg.AvailabilityTopic) {
		return nil, fmt.Errorf("mqtt link: availability topic %q is not a valid topic name", cfg.AvailabilityTopic)
	}
	if cfg.BirthTopic == "" {
		cfg.BirthTopic = DefaultBirthTopic
	}
	if cfg.BirthDelay == nil {
		cfg.BirthDelay = func() time.Duration { return time.Second + rand.N(4*time.Second) }
	}
	if cfg.Backoff == nil {
		cfg.Backoff = DefaultBackoff
	}
	cfg.CommandTopics = append([]string(nil), cfg.CommandTopics...)
	return &Link{
		cfg:      cfg,
		opts:     cfg.Options,
		reconfig: make(chan struct{}, 1),
		births:   make(chan struct{}, 1),
		commands: make(chan command, 64),
	}, nil
}

// DefaultBackoff is capped exponential backoff with jitter: about 0.5 s,
// 1 s, 2 s … up to 60 s, each drawn from [d/2, d].
func DefaultBackoff(failures int) time.Duration {
	d := 60 * time.Second
	if failures < 8 {
		d = min(d, (time.Second/2)<<max(failures-1, 0))
	}
	return d/2 + rand.N(d/2+1)
}

// Start runs the link in the background until Stop or until ctx ends (then
// it says `offline` within a couple of seconds). It never waits for the
// broker: while the broker is unreachable the link retries with backoff and
// Publish reports ErrNotConnected. A Link runs once.
func (l *Link) Start(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return errors.New("mqtt link: already started")
	}
	l.started = true
	run, cancel := context.WithCancel(ctx)
	l.cancel, l.done = cancel, make(chan struct{})
	l.workers.Add(2)
	go l.birthWorker(run)
	go l.commandWorker(run)
	go l.run(run)
	return nil
}

// Stop publishes `offline` (retained) if connected, disconnects cleanly and
// waits for the link's goroutines, all within ctx. It returns the error of
// the offline publish, if any.
func (l *Link) Stop(ctx context.Context) error {
	l.mu.Lock()
	if !l.started || l.cancel == nil {
		l.mu.Unlock()
		return nil
	}
	l.stopCtx = ctx
	cancel, done := l.cancel, l.done
	l.cancel = nil
	l.mu.Unlock()
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("mqtt link stop: %w", ctx.Err())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopErr
}

// Publish sends msgs in order on the current connection and returns how many
// of the first were acknowledged (see Conn.Publish). While the link is down
// it returns 0, ErrNotConnected at once: the caller keeps the messages.
func (l *Link) Publish(ctx context.Context, msgs []haentities.Message) (int, error) {
	l.mu.Lock()
	s := l.cur
	l.mu.Unlock()
	if s == nil || s.isLost() {
		return 0, ErrNotConnected
	}
	return s.publish(ctx, msgs)
}

// Connected reports whether the link is connected and has announced `online`.
func (l *Link) Connected() bool {
	l.mu.Lock()
	s := l.cur
	l.mu.Unlock()
	return s != nil && !s.isLost()
}

// Reconnects counts the connections established after the first one since
// Start (after a loss or a Reconfigure), for the diagnostics entity.
func (l *Link) Reconnects() int64 { return l.reconnects.Load() }

// LastError is why the last connection attempt failed or the connection was
// lost, or nil while connected.
func (l *Link) LastError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != nil && l.cur.isLost() {
		// The loop has not caught up with paho yet; say so already, to
		// agree with Connected.
		return fmt.Errorf("mqtt connection lost: %w", l.cur.lostReason())
	}
	return l.lastErr
}

// Reconfigure applies new broker options without restarting the process:
// when they differ from the current ones the link says `offline` to the old
// broker, disconnects and connects with the new options at once. Invalid
// options are refused and the link keeps the old ones.
func (l *Link) Reconfigure(opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts.Will = nil
	l.mu.Lock()
	defer l.mu.Unlock()
	if sameOptions(l.opts, opts) {
		return nil
	}
	l.opts = opts
	select {
	case l.reconfig <- struct{}{}:
	default:
	}
	if l.abort != nil {
		l.abort()
	}
	return nil
}

func sameOptions(a, b Options) bool {
	a.Will, b.Will = nil, nil
	return a == b
}

func (l *Link) options() Options {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := l.opts
	o.Will = &Will{Topic: l.cfg.AvailabilityTopic, Payload: []byte(PayloadOffline)}
	return o
}

func (l *Link) setState(s *session, err error) {
	l.mu.Lock()
	l.cur, l.lastErr = s, err
	l.mu.Unlock()
}
