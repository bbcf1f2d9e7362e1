package savesync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// BenchmarkSync100 is a pass over 100 games against the fake RomM on loopback: one negotiation
// whose answer the pass reads for all of them, with 5 saves changed on the cabinet since the last
// sync (each uploaded), beside the baseline of the same pass with nothing changed (the
// negotiation alone). The target: under 2 s for the pass with 5 changed.
func BenchmarkSync100(b *testing.B) {
	r := newRig(b, func(o *fakeromm.Options) { o.Generate = fakeromm.Scale{ROMs: 100, Platforms: 1} })
	n := r.fake.ROMCount()
	if n < 100 {
		b.Fatalf("the fake has %d ROMs", n)
	}
	games := make([]Game, 100)
	for i := range games {
		games[i] = Game{System: "nes", ROM: fmt.Sprintf("/userdata/roms/nes/Game %03d.nes", i), ROMID: n - i, Core: "nestopia"}
		r.write(games[i], []byte(fmt.Sprintf("save %d v0", i)), r.tm(0))
	}
	r.at(time.Minute)
	if res := r.sync(games...); res.Count(Uploaded) != 100 {
		b.Fatalf("first pass uploaded %d", res.Count(Uploaded))
	}
	step := 2 * time.Minute
	pass := func(changed int) time.Duration {
		for i := 0; i < changed; i++ {
			r.write(games[i*20], []byte(fmt.Sprintf("save %d at %v", i, step)), r.tm(step))
		}
		step += time.Minute
		r.at(step)
		start := time.Now()
		res, err := r.sy.Sync(context.Background(), "bench", games)
		took := time.Since(start)
		if err != nil || res.Count(Uploaded) != changed || res.Count(Failed) != 0 {
			b.Fatalf("pass with %d changed: %d uploaded, %d failed, %v", changed, res.Count(Uploaded), res.Count(Failed), err)
		}
		step += time.Minute
		r.at(step)
		return took
	}
	var changed, none time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		changed += pass(5)
		none += pass(0)
	}
	b.StopTimer()
	b.ReportMetric(float64(changed.Microseconds())/1000/float64(b.N), "ms/pass-5-changed")
	b.ReportMetric(float64(none.Microseconds())/1000/float64(b.N), "ms/pass-baseline")
}
