//go:build !linux

package tools

import "errors"

// diskFree is only implemented on Linux, where cabinets run.
func diskFree(string) (int64, error) { return 0, errors.New("not supported on this system") }
