// Package sensors publishes the cabinet's own state to Home Assistant beside play tracking: the
// system volume and mute (and Home Assistant's slider and switch for them), the game pads and
// their events, Batocera's update, play time today and the diagnostics. Each sensor is a loop on
// the daemon's clock that reads its source gently and publishes what changed, through Host: what
// the daemon knows now and how it publishes. The daemon runs them; their tests run them against
// a fake Host and the fake clock, with no broker and no simulator.
package sensors

import (
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/journal"
)

// Host is what the sensors use of the daemon.
type Host interface {
	// Rules are the rules in force: the Home Assistant settings (topics, the sources this
	// cabinet has), the tracker's, and whether MQTT is configured.
	Rules() journal.Rules
	// Snapshot is what the tracker says now (the running game, the last session).
	Snapshot() haentities.Snapshot
	// Applied is closed at the next apply of events (a game started or ended).
	Applied() <-chan struct{}
	// Refresh stores states to publish, sent again even when unchanged (an entity with
	// expire_after needs them); Publish stores states when they changed, and events.
	Refresh(msgs ...haentities.Message)
	Publish(msgs ...haentities.Message)
}
