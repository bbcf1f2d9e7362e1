package sysinfo

import (
	"fmt"
	"syscall"
)

// DiskFree is the space unprivileged programs may still use on the
// filesystem holding path (df's "Avail").
func DiskFree(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", path, err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}
