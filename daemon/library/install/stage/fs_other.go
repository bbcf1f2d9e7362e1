//go:build !linux

package stage

import (
	"errors"
	"fmt"
	"os"
)

// noFollow is zero where O_NOFOLLOW is not portable; the Lstat checks remain.
const noFollow = 0

// renameNoReplace checks then renames; only Linux (Batocera) gets the
// atomic RENAME_NOREPLACE.
func renameNoReplace(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return fmt.Errorf("rename %s: %s exists: %w", from, to, ErrExists)
	}
	return os.Rename(from, to)
}

// FreeSpace is only read on Linux (Batocera); elsewhere it reports an error
// so NeedSpace refuses rather than guesses.
func FreeSpace(path string) (uint64, error) {
	return 0, fmt.Errorf("free space of %s: %w", path, errors.ErrUnsupported)
}

func mountPoint(path string) string { return path }
