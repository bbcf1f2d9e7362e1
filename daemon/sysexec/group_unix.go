//go:build unix

package sysexec

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the command in a process group of its own and has
// cancellation kill the whole group: Batocera's tools are shell scripts,
// and killing the shell alone would leave a hung pactl or wget behind.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
