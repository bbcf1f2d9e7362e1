package mqttlink

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// maxRetained bounds what Retained collects: a cabinet has well under a
// hundred retained topics; a broker answering a filter with more is not
// describing one cabinet.
const maxRetained = 10000

// Retained subscribes to filters and returns the topics the broker holds a
// retained, non-empty message for, once it has sent none for quiet (a
// broker sends every retained match right after SUBACK, so a short quiet
// spell ends the list). It ends by ctx's deadline whatever the broker does.
// `uninstall --purge` uses it to find every topic to clear.
func (c *Conn) Retained(ctx context.Context, filters []string, quiet time.Duration) ([]string, error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	got := make(chan struct{}, 1)
	handler := func(_ mqtt.Client, m mqtt.Message) {
		if !m.Retained() || len(m.Payload()) == 0 {
			return
		}
		mu.Lock()
		if len(seen) < maxRetained {
			seen[m.Topic()] = true
		}
		mu.Unlock()
		select {
		case got <- struct{}{}:
		default:
		}
	}
	subs := map[string]byte{}
	for _, f := range filters {
		subs[f] = 1
	}
	tok := c.s.client.SubscribeMultiple(subs, handler)
	select {
	case <-tok.Done():
		if err := tok.Error(); err != nil {
			return nil, fmt.Errorf("subscribe to %v: %w", filters, err)
		}
	case <-ctx.Done():
		return nil, fmt.Errorf("subscribe to %v: no SUBACK before the deadline", filters)
	case <-c.s.lost:
		return nil, c.s.why
	}
	t := time.NewTimer(quiet)
	defer t.Stop()
wait:
	for {
		select {
		case <-got:
			t.Reset(quiet)
		case <-t.C:
			break wait
		case <-ctx.Done():
			break wait
		case <-c.s.lost:
			return nil, c.s.why
		}
	}
	c.s.client.Unsubscribe(filters...)
	mu.Lock()
	defer mu.Unlock()
	out := make([]string, 0, len(seen))
	for topic := range seen {
		out = append(out, topic)
	}
	sort.Strings(out)
	return out, nil
}
