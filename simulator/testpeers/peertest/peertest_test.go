package peertest

import (
	"errors"
	"fmt"
	"testing"
)

// recorder stands in for *testing.T to see which way RequirePeer went.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = fmt.Sprintf(format, a...) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }

func TestRequirePeer(t *testing.T) {
	missing := errors.New("retroarch not installed")
	tests := []struct {
		name, env    string
		err          error
		skip, failed bool
	}{
		{"present", "", nil, false, false},
		{"present, required", "1", nil, false, false},
		{"missing skips", "", missing, true, false},
		{"missing skips unless exactly 1", "yes", missing, true, false},
		{"missing fails when required", "1", missing, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(RequireEnv, tt.env)
			r := &recorder{TB: t}
			RequirePeer(r, tt.err)
			if gotSkip, gotFail := r.skipped != "", r.failed != ""; gotSkip != tt.skip || gotFail != tt.failed {
				t.Fatalf("got skipped=%v failed=%v, want %v %v (skip %q, fail %q)", gotSkip, gotFail, tt.skip, tt.failed, r.skipped, r.failed)
			}
		})
	}
}
