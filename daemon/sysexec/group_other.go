//go:build !unix

package sysexec

import "os/exec"

// ownProcessGroup does nothing where there are no process groups;
// cancellation kills the command only.
func ownProcessGroup(*exec.Cmd) {}
