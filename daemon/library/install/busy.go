package install

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Writing reports whether an install or uninstall holds the install lock
// lockFile: another process (the daemon, `cabinet call`) or this one (the
// Installer's flock is on its own open file, so a second open here sees
// it). It probes with a non-blocking exclusive flock on a separate open and
// releases it at once; an install that starts in that instant is refused
// with ErrBusy. A missing file is not writing: Installer creates it on its
// first lock.
func Writing(lockFile string) (bool, error) {
	f, err := os.Open(lockFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check the install lock: %w", err)
	}
	defer f.Close() // closing the file releases the probe's lock
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("check the install lock %s: %w", lockFile, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return false, fmt.Errorf("check the install lock %s: %w", lockFile, err)
	}
	return false, nil
}

// errWriting is BusyCheck's answer while the install lock is held.
var errWriting = errors.New("a library install or uninstall is writing to the cabinet: try again when it is done")

// BusyCheck is a check for what must not run during an install (the power actions): an error
// while an install or uninstall holds lockFile, or when the lock cannot be checked; nil when
// lockFile is "" (no installer, never busy).
func BusyCheck(lockFile string) func() error {
	if lockFile == "" {
		return nil
	}
	return func() error {
		writing, err := Writing(lockFile)
		switch {
		case err != nil:
			return err
		case writing:
			return errWriting
		}
		return nil
	}
}
