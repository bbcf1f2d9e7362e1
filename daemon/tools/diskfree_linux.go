package tools

import (
	"fmt"
	"syscall"
)

// diskFree is the space unprivileged programs may still use on the
// filesystem holding path.
func diskFree(path string) (int64, error) {
	if path == "" {
		return 0, fmt.Errorf("no state directory configured")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	free := st.Bavail * uint64(st.Bsize)
	if free > 1<<62 {
		free = 1 << 62
	}
	return int64(free), nil
}
