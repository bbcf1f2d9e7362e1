package stage

import (
	"fmt"
	"math"
	"math/bits"
)

// spareBytes is the fixed part of NeedSpace's margin: room for the
// gamelist, saves and logs that other programs write to the same share.
const spareBytes = 64 << 20

// SpaceError is NeedSpace's refusal. Its message tells the household how
// much to free.
type SpaceError struct {
	// Where is the mount point (or the path, if that cannot be found).
	Where string
	// Need is the game's size plus the margin; Free is what statfs reports.
	Need, Free uint64
}

// Error reads like "free 1.2 GiB more on /userdata: the game needs 3.4 GiB
// and 2.2 GiB is free". The missing amount and the need are rounded up and
// the free space down, so freeing what it says is always enough.
func (e *SpaceError) Error() string {
	return fmt.Sprintf("free %s more on %s: the game needs %s and %s is free",
		size(e.Need-e.Free, true), e.Where, size(e.Need, true), size(e.Free, false))
}

// NeedSpace refuses, with a *SpaceError, when the filesystem holding path
// has less free than bytes plus a margin of 5% of bytes and 64 MiB: a full
// share corrupts gamelists and saves, and a download's size from the server
// is not always exact.
func NeedSpace(path string, bytes uint64) error {
	free, err := FreeSpace(path)
	if err != nil {
		return fmt.Errorf("check free space: %w", err)
	}
	return needSpace(mountPoint(path), free, bytes)
}

func needSpace(where string, free, bytes uint64) error {
	need := bytes + bytes/20 + spareBytes
	if need < bytes { // overflow: no disk has that much
		need = math.MaxUint64
	}
	if free >= need {
		return nil
	}
	return &SpaceError{Where: where, Need: need, Free: free}
}

// size formats b as MiB below 1 GiB and as GiB with one decimal above,
// rounding up or down. It counts in integers so 2.2 GiB never shows as 2.1.
func size(b uint64, up bool) string {
	const mib, gib = 1 << 20, 1 << 30
	if b < gib {
		n := b / mib
		if up && b%mib != 0 {
			n++
		}
		return fmt.Sprintf("%d MiB", n)
	}
	hi, lo := bits.Mul64(b, 10)
	tenths, rem := bits.Div64(hi, lo, gib) // hi < 10 < gib, so no panic
	if up && rem != 0 {
		tenths++
	}
	return fmt.Sprintf("%d.%d GiB", tenths/10, tenths%10)
}

// Room is what an install may write on the filesystem holding path: its free
// space less the fixed margin NeedSpace keeps (0 when less is free). An
// installer holds its downloads to it, so a server's wrong or missing sizes
// never fill the share.
func Room(path string) (int64, error) {
	free, err := FreeSpace(path)
	if err != nil {
		return 0, fmt.Errorf("check free space: %w", err)
	}
	if free <= spareBytes {
		return 0, nil
	}
	return int64(min(free-spareBytes, math.MaxInt64)), nil
}
