//go:build unix

package sysaudio

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the command in a process group of its own and has
// cancellation kill the whole group: batocera-audio is a shell script,
// and killing the shell alone would leave a hung pactl behind.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
