package mqttlink

import (
	"context"
	"fmt"
	"sync"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// session is one paho connection and what publishing on it needs.
type session struct {
	client mqtt.Client
	lost   chan struct{} // closed when paho reports the connection lost
	why    error         // set before lost is closed
	once   sync.Once
	// gate is held while messages are handed to paho, so that the messages
	// of successive Publish calls reach the broker in call order even when
	// an earlier caller gave up waiting.
	gate chan struct{}
}

func newSession() *session {
	return &session{lost: make(chan struct{}), gate: make(chan struct{}, 1)}
}

// onLost is paho's connection-lost handler; paho may call it more than once.
func (s *session) onLost(_ mqtt.Client, err error) {
	s.once.Do(func() {
		s.why = err
		close(s.lost)
	})
}

// lostReason is paho's reason for the loss; call it after lost is closed.
func (s *session) lostReason() error {
	if s.why == nil {
		return ErrNotConnected
	}
	return s.why
}

func (s *session) isLost() bool {
	select {
	case <-s.lost:
		return true
	default:
		return false
	}
}

// publish sends msgs in order with their QoS and retain flags, pipelined,
// and waits for the acknowledgements (PUBACK for QoS 1, the write for QoS
// 0). It returns how many of the first messages were acknowledged: the
// caller marks exactly msgs[:n] delivered. It returns when all are
// acknowledged, one fails, the connection is lost or ctx ends; paho's own
// Publish may block (a broker that stops reading), so handing messages over
// runs in a goroutine that is abandoned on ctx end.
func (s *session) publish(ctx context.Context, msgs []haentities.Message) (int, error) {
	valid := len(msgs)
	var invalid error
	for i, m := range msgs {
		if !validTopic(m.Topic) || m.QoS > 2 {
			valid, invalid = i, fmt.Errorf("mqtt publish: message %d: topic %q qos %d cannot be published", i, m.Topic, m.QoS)
			break
		}
	}
	if valid == 0 {
		return 0, invalid
	}
	select {
	case s.gate <- struct{}{}:
	case <-ctx.Done():
		return 0, fmt.Errorf("mqtt publish: %w", ctx.Err())
	case <-s.lost:
		return 0, ErrNotConnected
	}
	toks := make(chan mqtt.Token, valid)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer func() { <-s.gate }()
		for _, m := range msgs[:valid] {
			select {
			case <-stop:
				return
			default:
			}
			toks <- s.client.Publish(m.Topic, m.QoS, m.Retain, m.Payload)
		}
	}()
	for i := range valid {
		var tok mqtt.Token
		select {
		case tok = <-toks:
		case <-ctx.Done():
			return i, fmt.Errorf("mqtt publish %s: %w", msgs[i].Topic, ctx.Err())
		case <-s.lost:
			return i, fmt.Errorf("mqtt publish %s: connection lost: %w", msgs[i].Topic, ErrNotConnected)
		}
		var why error
		select {
		case <-tok.Done():
		case <-ctx.Done():
			why = fmt.Errorf("mqtt publish %s: no acknowledgement: %w", msgs[i].Topic, ctx.Err())
		case <-s.lost:
			why = fmt.Errorf("mqtt publish %s: connection lost: %w", msgs[i].Topic, ErrNotConnected)
		}
		if why != nil && !isDone(tok) { // an ack that raced the loss still counts
			return i, why
		}
		if err := tok.Error(); err != nil {
			return i, fmt.Errorf("mqtt publish %s: %w", msgs[i].Topic, err)
		}
	}
	return valid, invalid
}

func isDone(tok mqtt.Token) bool {
	select {
	case <-tok.Done():
		return true
	default:
		return false
	}
}
