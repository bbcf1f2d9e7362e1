package peertest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallFS mounts a tmpfs of size bytes on dir for the rest of the test: a
// filesystem a test can fill without filling the machine's. Mounting needs
// root with CAP_SYS_ADMIN; where it is refused the test is skipped (a full
// disk is a fault to test, not a peer CI must provide).
func SmallFS(t testing.TB, dir string, size int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", size)); err != nil {
		t.Skipf("cannot mount a small filesystem here (%v): needs root with CAP_SYS_ADMIN", err)
	}
	// Cleanups run last-registered first: mount before starting what
	// writes there, and the mount goes after it has stopped.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// FillDisk writes a file in dir until its filesystem is full and returns
// the file's path (remove it to give the space back).
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			return path
		}
	}
}
