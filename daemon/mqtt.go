package daemon

import (
	"context"

	"github.com/batocera-cabinet/cabinet/cmd/cabinet/config"
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

// linkOptions maps cabinet.mqtt.* to the link (client id
// cabinet.mqtt.client_id, default cabinet_<id>).
func linkOptions(cfg *config.Config, id string) mqttlink.Options {
	clientID := cfg.MQTT.ClientID
	if clientID == "" {
		clientID = "cabinet_" + id
	}
	return mqttlink.Options{
		Broker:   cfg.MQTT.Broker,
		Username: cfg.MQTT.Username,
		Password: cfg.MQTT.Password.Reveal(),
		ClientID: clientID,
		CAFile:   cfg.Path(cfg.MQTT.CAFile),
	}
}

// startMQTT starts the link when a broker is configured. It returns at once:
// the link connects (and reconnects) in the background.
func (d *Daemon) startMQTT(ctx context.Context) error {
	cfg := d.Config()
	if !cfg.MQTTEnabled() {
		return nil
	}
	settings := d.eng.journal().Settings
	lc := mqttlink.LinkConfig{
		Options:           linkOptions(cfg, settings.ID),
		AvailabilityTopic: settings.AvailabilityTopic(),
		BirthTopic:        cfg.MQTT.HAStatusTopic,
		OnConnect:         d.onConnect,
		OnBirth: func(ctx context.Context) {
			d.log.Info().Msg("Home Assistant restarted: re-announcing")
			d.eng.announce(ctx)
		},
		Log: d.log,
	}
	if cfg.HA.Controls {
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
