//go:build !linux

package sysinfo

import "errors"

// DiskFree is only read on Linux (Batocera); elsewhere the free space
// diagnostic stays unknown.
func DiskFree(string) (uint64, error) { return 0, errors.New("free space is only read on Linux") }
