package daemon

import (
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
)

// refresh records retained states the daemon owns (diagnostics, power)
// into the outbox, even unchanged (the diagnostics' expire_after needs
// every round), and wakes the drain; nothing while MQTT is off.
func (d *Daemon) refresh(msgs ...haentities.Message) { d.storeMsgs(msgs, (*store.Tx).Refresh) }

// publish records messages of any kind (events too; a retained state only
// when it changed) into the outbox and wakes the drain; nothing while MQTT
// is off.
func (d *Daemon) publish(msgs ...haentities.Message) { d.storeMsgs(msgs, (*store.Tx).Record) }

func (d *Daemon) storeMsgs(msgs []haentities.Message, write func(*store.Tx, ...haentities.Message) error) {
	if len(msgs) == 0 || !d.eng.currentRules().Publishing {
		return
	}
	if err := d.eng.store().Update(func(tx *store.Tx) error { return write(tx, msgs...) }); err != nil {
		d.log.Error().Err(err).Msg("record states")
		return
	}
	d.eng.kick()
}
