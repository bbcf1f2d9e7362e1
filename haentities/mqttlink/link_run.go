package mqttlink

import (
	"context"
	"errors"
	"fmt"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/haentities"
)

const (
	// stableAfter is how long a connection must last for the backoff to
	// start over: a broker that kicks us right after CONNACK (another
	// client with our id) must not make us reconnect in a tight loop.
	stableAfter = 30 * time.Second
	// goodbyeTimeout bounds the `offline` publish on Reconfigure, or when the
	// Start context ends without Stop.
	goodbyeTimeout = 2 * time.Second
	// disconnectQuiesce bounds paho's DISCONNECT on a clean stop.
	disconnectQuiesce = 250 * time.Millisecond
)

type ending int

const (
	endLost ending = iota
	endReconfig
	endStop
)

// run is the connection loop: connect, announce, hold, and on loss wait
// with backoff; on Reconfigure say goodbye and reconnect at once.
func (l *Link) run(ctx context.Context) {
	defer func() {
		l.workers.Wait()
		close(l.done)
	}()
	failures, connects := 0, 0
	for ctx.Err() == nil {
		select {
		case <-l.reconfig: // the options read below are the newest
		default:
		}
		opts := l.options()
		s, err := l.attempt(ctx, opts)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, context.Canceled) { // Reconfigure aborted it
				failures = 0
				continue
			}
			failures++
			l.setState(nil, err)
			ev := l.cfg.Log.Debug()
			if failures == 1 {
				ev = l.cfg.Log.Warn()
			}
			ev.Err(err).Int("failures", failures).Msg("mqtt connect failed; retrying")
			switch l.pause(ctx, l.cfg.Backoff(failures)) {
			case endStop:
				return
			case endReconfig:
				failures = 0
			}
			continue
		}
		if connects++; connects > 1 {
			l.reconnects.Add(1)
		}
		up := time.Now()
		l.setState(s, nil)
		l.cfg.Log.Info().Str("broker", redactURL(opts.Broker)).Str("client_id", opts.ClientID).
			Int64("reconnects", l.reconnects.Load()).Msg("mqtt connected")

		connCtx, endConn := context.WithCancel(ctx)
		cbDone := make(chan struct{})
		go func() {
			defer close(cbDone)
			if l.cfg.OnConnect != nil {
				l.cfg.OnConnect(connCtx)
			}
		}()
		why := l.hold(ctx, s)
		endConn()
		switch why {
		case endLost:
			err := fmt.Errorf("mqtt connection to %s lost: %w", redactURL(opts.Broker), s.lostReason())
			l.setState(nil, err)
			l.cfg.Log.Warn().Err(err).Msg("mqtt connection lost; reconnecting")
			<-cbDone
			if time.Since(up) >= stableAfter {
				failures = 0
			}
			failures++
			switch l.pause(ctx, l.cfg.Backoff(failures)) {
			case endStop:
				return
			case endReconfig:
				failures = 0
			}
		case endReconfig:
			l.setState(nil, nil)
			<-cbDone
			gctx, cancel := context.WithTimeout(context.Background(), goodbyeTimeout)
			if err := l.goodbye(gctx, s); err != nil {
				l.cfg.Log.Warn().Err(err).Msg("mqtt: could not say offline to the old broker")
			}
			cancel()
			l.cfg.Log.Info().Msg("mqtt options changed; reconnecting")
			failures = 0
		case endStop:
			l.setState(nil, nil)
			sctx, cancel := l.stopContext()
			select {
			case <-cbDone:
			case <-sctx.Done():
			}
			err := l.goodbye(sctx, s)
			cancel()
			l.mu.Lock()
			l.stopErr = err
			l.mu.Unlock()
			return
		}
	}
}

// stopContext bounds the goodbye on stop: Stop's ctx, or a short timeout
// when the Start context ended on its own.
func (l *Link) stopContext() (context.Context, context.CancelFunc) {
	l.mu.Lock()
	ctx := l.stopCtx
	l.mu.Unlock()
	if ctx != nil {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(context.Background(), goodbyeTimeout)
}

// attempt is connect with a context Reconfigure can cancel, so that new
// options apply at once even while an attempt hangs on a black-holed address.
func (l *Link) attempt(ctx context.Context, opts Options) (*session, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.mu.Lock()
	l.abort = cancel
	l.mu.Unlock()
	s, err := l.connect(actx, opts)
	l.mu.Lock()
	l.abort = nil
	l.mu.Unlock()
	return s, err
}

// connect makes one attempt: connect with the will, subscribe, announce
// `online` (retained, acknowledged). Subscriptions are made on every
// connect because each connection is a clean session.
func (l *Link) connect(ctx context.Context, opts Options) (*session, error) {
	p, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	budget, deadline := attemptBudget(ctx, p.ConnectTimeout)
	s := newSession()
	co := p.clientOptions(budget, deadline)
	co.SetConnectionLostHandler(s.onLost)
	s.client = mqtt.NewClient(co)
	if err := connectClient(ctx, p, s.client, budget); err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, p.ConnectTimeout)
	defer cancel()
	if err := l.subscribe(actx, s); err != nil {
		s.client.Disconnect(0)
		return nil, err
	}
	if _, err := s.publish(actx, []haentities.Message{l.availability(PayloadOnline)}); err != nil {
		s.client.Disconnect(0)
		return nil, fmt.Errorf("mqtt announce online: %w", err)
	}
	return s, nil
}

func (l *Link) subscribe(ctx context.Context, s *session) error {
	filters := map[string]byte{l.cfg.BirthTopic: 1}
	for _, t := range l.cfg.CommandTopics {
		filters[t] = 1
	}
	tok := s.client.SubscribeMultiple(filters, l.onMessage)
	select {
	case <-tok.Done():
	case <-ctx.Done():
		return fmt.Errorf("mqtt subscribe: no acknowledgement: %w", ctx.Err())
	case <-s.lost:
		return fmt.Errorf("mqtt subscribe: %w", s.lostReason())
	}
	if err := tok.Error(); err != nil {
		return fmt.Errorf("mqtt subscribe: %w", err)
	}
	if st, ok := tok.(*mqtt.SubscribeToken); ok {
		for topic, code := range st.Result() {
			if code == 0x80 {
				l.cfg.Log.Warn().Str("topic", topic).Msg("mqtt broker refused a subscription: check its ACL for this user")
			}
		}
	}
	return nil
}

// hold waits for the end of a connection.
func (l *Link) hold(ctx context.Context, s *session) ending {
	select {
	case <-s.lost:
		return endLost
	case <-l.reconfig:
		return endReconfig
	case <-ctx.Done():
		return endStop
	}
}

// pause waits d, cut short by a Reconfigure or the end of ctx.
func (l *Link) pause(ctx context.Context, d time.Duration) ending {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return endLost
	case <-l.reconfig:
		return endReconfig
	case <-ctx.Done():
		return endStop
	}
}

// goodbye publishes `offline` (retained) and disconnects cleanly, so the
// broker does not fire the will.
func (l *Link) goodbye(ctx context.Context, s *session) error {
	var err error
	if !s.isLost() {
		_, err = s.publish(ctx, []haentities.Message{l.availability(PayloadOffline)})
	}
	q := disconnectQuiesce
	if d, ok := ctx.Deadline(); ok {
		q = max(min(q, time.Until(d)), 0)
	}
	s.client.Disconnect(uint(q / time.Millisecond))
	return err
}

func (l *Link) availability(payload string) haentities.Message {
	return haentities.Message{Topic: l.cfg.AvailabilityTopic, Payload: []byte(payload), QoS: 1, Retain: true,
		Kind: haentities.KindAvailability, Created: time.Now()}
}
