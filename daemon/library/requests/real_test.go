package requests

import (
	"context"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/daemon/library/romarr"
	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realromarr"
)

// TestFollowAgainstRealROMarr follows requests the real ROMarr (no indexers, so no release)
// took: on its wanted list, with its own reason and count; one asked for by a platform name
// takes ROMarr's slug. Without the peer it is skipped.
func TestFollowAgainstRealROMarr(t *testing.T) {
	t.Parallel()
	srv := realromarr.Start(t, realromarr.Options{APIKey: romarrKey, Env: []string{"LIBRARY_KIND=folder", "LIBRARY_PATH=" + t.TempDir()}})
	rc, err := romarr.New(romarr.Config{URL: srv.URL(), APIKey: romarrKey, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t)
	r.f.ROMarr = rc
	ctx := context.Background()
	for _, ask := range []struct{ game, platform string }{{"Chrono Trigger", "snes"}, {"Secret of Mana", "Super Nintendo"}} {
		res, err := rc.RequestGame(ctx, ask.game, ask.platform)
		if err != nil || res.OK {
			t.Fatalf("RequestGame(%s, %s) = %+v, %v; want ROMarr to find no release", ask.game, ask.platform, res, err)
		}
	}
	chrono := r.ask("Chrono Trigger", "snes", "snes", false, StateSearching)
	mana := r.ask("Secret of Mana", "Super Nintendo", "", false, StateSearching)
	p := r.follow()
	if p.ROMarrErr != nil || p.Checked != 2 {
		t.Fatalf("pass %+v", p)
	}
	r.expect(chrono.ID, StateSearching, "no usable release among 0 result(s)", "1 search(es) so far")
	if q := r.expect(mana.ID, StateSearching, "no usable release"); q.Platform != "snes" {
		t.Fatalf("Secret of Mana's platform %q, want ROMarr's slug snes", q.Platform)
	}
}
