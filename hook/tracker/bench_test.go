package tracker

import (
	"testing"

	"github.com/batocera-cabinet/cabinet/haentities"
)

// BenchmarkHookRun is what one hook process pays in the tracker: load the state, apply its event,
// build the messages, save the state. The state holds a logged session, a running game reported by
// ES and configgen, and a few events in the reorder window.
func BenchmarkHookRun(b *testing.B) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(400),
		esEvent(KindStart, 0), esGameStart(10, smbPath, smbName), esEvent(KindGameEnd, 390))
	st, _ = Apply(st, cfg, stampAt(500.5),
		esGameStart(500, tetrisPath, "Tetris"), cgEvent(KindGameStart, 500.4, "gb", tetrisPath))
	saved, err := Encode(st)
	if err != nil {
		b.Fatal(err)
	}
	ev := esEvent(KindGameEnd, 501)
	s := haentities.Settings{ID: "0a1b2c3d"}
	b.ReportMetric(float64(len(saved)), "state-bytes")
	b.ReportAllocs()
	for b.Loop() {
		st, err := Decode(saved)
		if err != nil {
			b.Fatal(err)
		}
		st, out := Apply(st, cfg, ev.Stamp(), ev)
		_ = out.Messages(s, ev.At)
		if _, err := Encode(st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeEncode is the state round trip alone.
func BenchmarkDecodeEncode(b *testing.B) {
	cfg := DefaultConfig()
	st, _ := Apply(New(), cfg, stampAt(500.5),
		esEvent(KindStart, 0), esGameStart(10, smbPath, smbName), esEvent(KindGameEnd, 390),
		esGameStart(500, tetrisPath, "Tetris"), cgEvent(KindGameStart, 500.4, "gb", tetrisPath))
	saved, _ := Encode(st)
	b.ReportAllocs()
	for b.Loop() {
		st, _ := Decode(saved)
		_, _ = Encode(st)
	}
}
