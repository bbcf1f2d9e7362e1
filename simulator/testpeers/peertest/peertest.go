// Package peertest is the test-side glue for real peers (the real RetroArch
// and the like): a missing peer skips the test with the reason, or fails it
// when CI demands peers with CABINET_REQUIRE_PEERS=1. Test code only.
package peertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/batocera-cabinet/cabinet/simulator/testpeers/realretroarch"
)

// RequireEnv is the variable that turns a missing peer into a failure.
const RequireEnv = "CABINET_REQUIRE_PEERS"

// RequirePeer does nothing when err is nil. Otherwise it skips the test with
// err as the reason, or fails it when CABINET_REQUIRE_PEERS=1.
func RequirePeer(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("required peer missing (%s=1): %v", RequireEnv, err)
		return
	}
	t.Skipf("peer missing, skipping (set %s=1 to fail instead): %v", RequireEnv, err)
}

// startTimeout bounds how long RetroArch may take to answer VERSION.
const startTimeout = 30 * time.Second

// RetroArch starts the real RetroArch for t in opts.Dir (a fresh temporary
// directory when empty; set it to put files there first), stops it when t
// ends, and prints its log tail if t failed. A missing installation goes
// through RequirePeer; a start failure fails the test.
func RetroArch(t testing.TB, opts realretroarch.Options) *realretroarch.Instance {
	t.Helper()
	RequirePeer(t, realretroarch.Available())
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	in, err := realretroarch.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start real RetroArch: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Stop(); err != nil {
			t.Errorf("stop real RetroArch: %v", err)
		}
		if t.Failed() {
			t.Logf("real RetroArch log tail:\n%s", in.LogTail())
		}
	})
	return in
}
