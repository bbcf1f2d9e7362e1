package rommreport

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/romm"
	"github.com/batocera-cabinet/cabinet/haentities"
	"github.com/batocera-cabinet/cabinet/hook/store"
	"github.com/batocera-cabinet/cabinet/simulator/fakeromm"
)

// knownROM resolves every session to one ROM the fake has.
type knownROM int

func (k knownROM) ROMID(context.Context, haentities.Session) (int, bool, error) {
	return int(k), true, nil
}

// BenchmarkBacklog10k drains a backlog of 10,000 sessions (RomM was away)
// into the fake RomM through the real client, in batches of 100; the
// figure to compare is the drain time against the 10 s.
func BenchmarkBacklog10k(b *testing.B) {
	fr, err := fakeromm.New(fakeromm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(fr)
	defer srv.Close()
	ctx := context.Background()
	anon, err := romm.New(romm.Config{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	tok, err := anon.ExchangePairCode(ctx, fr.NewPairCode(append(fakeromm.ReadScopes(), fakeromm.WriteScopes()...)))
	if err != nil {
		b.Fatal(err)
	}
	c, err := anon.WithToken(tok.Token)
	if err != nil {
		b.Fatal(err)
	}
	device, err := c.RegisterDevice(ctx, romm.DeviceInfo{Name: "bench", Platform: "batocera", Client: "cabinet", ClientVersion: "0", Hostname: "bench", MAC: "02:00:00:00:00:01"})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10_000
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < b.N; i++ {
		st, err := store.Open(filepath.Join(b.TempDir(), "cabinet.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Update(func(tx *store.Tx) error {
			for j := range n {
				at := t0.Add(time.Duration(i*n+j) * time.Minute) // in the past: RomM refuses sessions ending in the future
				if err := tx.AppendSession(haentities.Session{ID: fmt.Sprintf("%s-%05d", at.Format("20060102T150405"), j), Game: "g",
					Started: at, Ended: at.Add(50 * time.Second), Duration: 50 * time.Second}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		r := &Reporter{Store: Marks{st}, Post: RomMPoster{Client: c, DeviceID: device}, Resolve: knownROM(fakeromm.ROMAlphaQuest), Since: t0}
		start := time.Now()
		pass, err := r.Drain(ctx)
		took := time.Since(start)
		st.Close()
		if err != nil || pass.Delivered != n {
			b.Fatalf("drain: %+v, %v", pass, err)
		}
		b.ReportMetric(took.Seconds(), "drain-s")
		b.Logf("10,000 sessions drained in %v (%d requests of at most %d)", took.Round(time.Millisecond), (n+MaxBatch-1)/MaxBatch, MaxBatch)
	}
}
