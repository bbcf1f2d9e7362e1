package mqttlink

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// BenchmarkPublishOneShot is the hook's MQTT cost: connect, publish 10
// messages (QoS 1, retained), wait for every PUBACK, disconnect.
//
//	go test -run '^$' -bench PublishOneShot ./haentities/mqttlink/
func BenchmarkPublishOneShot(b *testing.B) {
	msgs := make([]haentities.Message, 10)
	for i := range msgs {
		msgs[i] = haentities.Message{Topic: fmt.Sprintf("batocera/bench/entity%d", i), Payload: []byte("Idle"),
			QoS: 1, Retain: true, Kind: haentities.KindState}
	}
	run := func(b *testing.B, url string) {
		opts := Options{Broker: url, ClientID: "cabinet_bench_h1"}
		b.ResetTimer()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n, err := Publish(ctx, opts, msgs)
			cancel()
			if err != nil || n != len(msgs) {
				b.Fatalf("Publish = %d, %v", n, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/publish10")
	}
	b.Run("embedded", func(b *testing.B) { run(b, startEmbedded(b, nil).URL()) })
	b.Run("mosquitto", func(b *testing.B) { run(b, startMosquitto(b, nil).URL()) })
}
