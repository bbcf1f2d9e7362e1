package daemon

import (
	"context"

	"github.com/batocera-cabinet/cabinet/haentities/mqttlink"
)

// mqttLink is the daemon's one MQTT connection.
type mqttLink struct {
	*mqttlink.Link
	cancel context.CancelFunc
}

func (m *mqttLink) stop(ctx context.Context) {
	if err := m.Stop(ctx); err != nil {
		m.cancel()
	}
	m.cancel()
}

// startMQTT starts the link when a broker is configured. It returns at once:
// the link connects (and reconnects) in the background.
func (d *Daemon) startMQTT(ctx context.Context) error {
	cfg := d.config()
	if !cfg.mqttEnabled() {
		return nil
	}
	settings := cfg.Rules.Settings
	lc := mqttlink.LinkConfig{
		Options:           cfg.MQTT,
		AvailabilityTopic: settings.AvailabilityTopic(),
		BirthTopic:        cfg.BirthTopic,
		OnConnect:         d.onConnect,
		OnBirth: func(ctx context.Context) {
			d.log.Info().Msg("Home Assistant restarted: re-announcing")
			d.eng.announce(ctx)
		},
		Log: d.log,
	}
	// Commands: the controls, the power buttons, the volume slider, the
	// mute switch and the household's controls; the link drops retained
	// ones (a stale press replayed).
	if settings.TakesCommands() {
		lc.CommandTopics = []string{settings.CommandTopic("+")}
		lc.OnCommand = d.onCommand
	}
	link, err := mqttlink.NewLink(lc)
	if err != nil {
		return err
	}
	lctx, cancel := context.WithCancel(ctx)
	if err := link.Start(lctx); err != nil {
		cancel()
		return err
	}
	d.mu.Lock()
	d.link = &mqttLink{Link: link, cancel: cancel}
	d.mu.Unlock()
	d.eng.setPublisher(link)
	return nil
}

func (d *Daemon) onConnect(ctx context.Context) {
	d.log.Info().Msg("MQTT connected: announcing")
	d.eng.announce(ctx)
	// The outbox was just drained: show its real depth now, not at the
	// next minute.
	d.recordDiagnostics()
}
