package mqttlink

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestConnRetained: the topics a broker holds retained, non-empty messages
// for under the filters, and nothing else (not other cabinets', not
// cleared ones, not live messages).
func TestConnRetained(t *testing.T) {
	eachBroker(t, nil, func(t *testing.T, b testBroker) {
		for _, m := range []struct {
			topic, payload string
			retain         bool
		}{
			{"homeassistant/sensor/batocera_c1/activity/config", "{}", true},
			{"homeassistant/button/batocera_c1/quit/config", "{}", true},
			{"homeassistant/sensor/batocera_c2/activity/config", "{}", true}, // another cabinet
			{"batocera/c1/activity", "menu", true},
			{"batocera/c1/status", "offline", true},
			{"batocera/c1/cleared", "", true},
			{"batocera/c1/live", "x", false},
			{"batocera/c10/activity", "menu", true}, // a prefix, not this cabinet
		} {
			b.Inject(t, m.topic, m.payload, m.retain)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := Dial(ctx, Options{Broker: b.URL(), ClientID: "cabinet_c1_purge"})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		got, err := c.Retained(ctx, []string{"homeassistant/+/batocera_c1/+/config", "batocera/c1/#"}, 300*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"batocera/c1/activity", "batocera/c1/status", "homeassistant/button/batocera_c1/quit/config", "homeassistant/sensor/batocera_c1/activity/config"}
		if !slices.Equal(got, want) {
			t.Errorf("Retained = %q, want %q", got, want)
		}
	})
}
