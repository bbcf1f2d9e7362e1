package stage

import (
	"errors"
	"math"
	"testing"
)

func TestNeedSpace(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	tests := []struct {
		name        string
		free, bytes uint64
		want        string // "" means enough space
	}{
		{"plenty", 100 * gib, 3 * gib, ""},
		{"exactly the margin", 1000*mib + 50*mib + 64*mib, 1000 * mib, ""},
		{"one byte short", 1000*mib + 50*mib + 64*mib - 1, 1000 * mib, "free 1 MiB more on /userdata: the game needs 1.1 GiB and 1.0 GiB is free"},
		{"gigabytes", 22*gib/10 + 1, 32 * gib / 10, "free 1.3 GiB more on /userdata: the game needs 3.5 GiB and 2.2 GiB is free"},
		{"just under a GiB free", 1023 * mib, 2 * gib, "free 1.2 GiB more on /userdata: the game needs 2.2 GiB and 1023 MiB is free"},
		{"small game on a full disk", 10 * mib, 1 * mib, "free 56 MiB more on /userdata: the game needs 66 MiB and 10 MiB is free"},
		{"nothing free", 0, 0, "free 64 MiB more on /userdata: the game needs 64 MiB and 0 MiB is free"},
		{"overflow", 100 * gib, math.MaxUint64 - 1, "free 17179869084.0 GiB more on /userdata: the game needs 17179869184.0 GiB and 100.0 GiB is free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := needSpace("/userdata", tt.free, tt.bytes)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("needSpace(free %d, bytes %d) = %v, want nil", tt.free, tt.bytes, err)
				}
				return
			}
			var se *SpaceError
			if !errors.As(err, &se) {
				t.Fatalf("needSpace(free %d, bytes %d) = %v, want a *SpaceError", tt.free, tt.bytes, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("message\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestFreeSpace(t *testing.T) {
	dir := t.TempDir()
	free, err := FreeSpace(dir)
	if err != nil {
		t.Fatal(err)
	}
	if free == 0 {
		t.Skip("the test filesystem is full")
	}
	if err := NeedSpace(dir, 0); err != nil && free > 64<<20 {
		t.Errorf("NeedSpace(%s, 0) = %v with %d bytes free", dir, err, free)
	}
	err = NeedSpace(dir, free)
	var se *SpaceError
	if !errors.As(err, &se) || se.Free == 0 || se.Where == "" {
		t.Errorf("NeedSpace(%s, all free bytes) = %v, want a *SpaceError naming where", dir, err)
	}
	if _, err := FreeSpace("/nonexistent/path"); err == nil {
		t.Error("FreeSpace of a missing path succeeded")
	}
}
