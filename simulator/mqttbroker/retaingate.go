package mqttbroker

import (
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// retainGate keeps mochi's retained store from being read while it is written.
//
// mochi v2.7.9 (the newest) writes a topic's retainPath under the topic's lock
// ((*TopicsIndex).RetainMessage) and reads it with no lock at all when it scans
// the store for a wildcard filter ((*TopicsIndex).Messages, from
// publishRetainedToClient at the end of processSubscribe): a client that
// subscribes to "#" while another publishes a retained message is a data race
// (mochi-mqtt/server issue 200, closed unfixed). The gate is a readers–writer
// lock taken through mochi's own hooks, which run in the goroutine doing the
// work:
//
//   - a write is every RetainMessage a client causes: a retained publish holds
//     the gate from OnPublish to OnRetainMessage, which mochi calls right after
//     RetainMessage; a retained will from OnWill to OnRetainMessage;
//   - a read is a client's SUBSCRIBE, from OnSubscribe (its first step) to
//     OnPacketProcessed (called once processSubscribe, the retained messages'
//     delivery included, has returned), and the Broker's own Retained and
//     RetainedAll.
//
// The other writers mochi has are kept out of the readers' way instead: the
// $SYS topics it retains every few seconds are only scanned for a filter that
// starts with $SYS, which authHook refuses; a delayed will (MQTT 5) would be
// retained from mochi's event loop with no hook before it, so a CONNECT's will
// delay is dropped (OnPacketRead) and a will is published as its client goes.
// The broker makes no inline subscriptions (Server.Subscribe scans with no
// hook after it) and loads no stored retained messages.
//
// The gate must be the last hook added: a hook after it that refused a publish
// would leave a write it took open.
type retainGate struct {
	mqtt.HookBase

	rw sync.RWMutex

	mu      sync.Mutex
	writer  retainer             // who holds rw for writing, if anyone
	readers map[*mqtt.Client]int // the clients whose SUBSCRIBE holds rw for reading
}

// retainer is the client and topic of a retained message on its way to the store.
type retainer struct {
	cl    *mqtt.Client
	topic string
}

func newRetainGate() *retainGate { return &retainGate{readers: map[*mqtt.Client]int{}} }

func (g *retainGate) ID() string { return "cabinet-retain-gate" }

func (g *retainGate) Provides(b byte) bool {
	switch b {
	case mqtt.OnPacketRead, mqtt.OnPublish, mqtt.OnWill, mqtt.OnRetainMessage, mqtt.OnSubscribe, mqtt.OnPacketProcessed:
		return true
	}
	return false
}

// OnPacketRead drops a CONNECT's will delay (see retainGate).
func (g *retainGate) OnPacketRead(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Type == packets.Connect {
		pk.Connect.WillProperties.WillDelayInterval = 0
	}
	return pk, nil
}

func (g *retainGate) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if pk.FixedHeader.Retain {
		g.write(cl, pk.TopicName)
	}
	return pk, nil
}

func (g *retainGate) OnWill(cl *mqtt.Client, will mqtt.Will) (mqtt.Will, error) {
	if will.Retain && cl.Properties.Will.WillDelayInterval == 0 {
		g.write(cl, will.TopicName)
	}
	return will, nil
}

func (g *retainGate) write(cl *mqtt.Client, topic string) {
	g.rw.Lock()
	g.mu.Lock()
	g.writer = retainer{cl: cl, topic: topic}
	g.mu.Unlock()
}

// OnRetainMessage ends the write that its publish or will began; a retain the
// gate did not open (none is expected) releases nothing.
func (g *retainGate) OnRetainMessage(cl *mqtt.Client, pk packets.Packet, r int64) {
	g.mu.Lock()
	mine := g.writer.cl == cl && g.writer.topic == pk.TopicName
	if mine {
		g.writer = retainer{}
	}
	g.mu.Unlock()
	if mine {
		g.rw.Unlock()
	}
}

func (g *retainGate) OnSubscribe(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if cl.Net.Inline {
		return pk // Server.Subscribe: no OnPacketProcessed follows (and the broker makes none)
	}
	g.rw.RLock()
	g.mu.Lock()
	g.readers[cl]++
	g.mu.Unlock()
	return pk
}

func (g *retainGate) OnPacketProcessed(cl *mqtt.Client, pk packets.Packet, err error) {
	if pk.FixedHeader.Type != packets.Subscribe {
		return
	}
	g.mu.Lock()
	held := g.readers[cl] > 0
	if held {
		if g.readers[cl]--; g.readers[cl] == 0 {
			delete(g.readers, cl)
		}
	}
	g.mu.Unlock()
	if held {
		g.rw.RUnlock()
	}
}

// read runs f with the store held still.
func (g *retainGate) read(f func()) {
	g.rw.RLock()
	defer g.rw.RUnlock()
	f()
}
