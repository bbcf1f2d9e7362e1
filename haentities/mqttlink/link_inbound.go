package mqttlink

import (
	"bytes"
	"context"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// This file holds what arrives from the broker: Home Assistant's birth
// message and commands, handed from paho's router to the link's workers.

// onMessage runs in paho's router goroutine: it must not block, so work is
// handed to the workers.
func (l *Link) onMessage(_ mqtt.Client, m mqtt.Message) {
	if m.Topic() == l.cfg.BirthTopic {
		if string(m.Payload()) == PayloadOnline {
			select {
			case l.births <- struct{}{}:
			default: // one is already pending
			}
		}
		return
	}
	if m.Retained() {
		l.cfg.Log.Warn().Str("topic", m.Topic()).Msg("mqtt: ignoring a retained command (clear it on the broker)")
		return
	}
	select {
	case l.commands <- command{topic: m.Topic(), payload: bytes.Clone(m.Payload()), dup: m.Duplicate()}:
	default:
		l.cfg.Log.Warn().Str("topic", m.Topic()).Msg("mqtt: command dropped, too many pending")
	}
}

func (l *Link) birthWorker(ctx context.Context) {
	defer l.workers.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.births:
		}
		t := time.NewTimer(l.cfg.BirthDelay())
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		select {
		case <-l.births: // births during the delay are answered by this one
		default:
		}
		// While down, the next connect re-announces everything anyway.
		if !l.Connected() {
			continue
		}
		// Availability is the link's to say: HA gets `online` again too
		// (the broker may have lost it), then everything else.
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := l.Publish(pctx, []haentities.Message{l.availability(PayloadOnline)}); err != nil {
			l.cfg.Log.Warn().Err(err).Msg("mqtt: could not re-announce online after Home Assistant's birth")
		}
		cancel()
		if l.cfg.OnBirth != nil {
			l.cfg.OnBirth(ctx)
		}
	}
}

func (l *Link) commandWorker(ctx context.Context) {
	defer l.workers.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-l.commands:
			if l.cfg.OnCommand != nil {
				l.cfg.OnCommand(c.topic, c.payload, c.dup)
			}
		}
	}
}
