//go:build unix

package trigger

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own, and makes its
// cancellation kill the whole group: a command's children (a shell's
// programs) die with it instead of holding its pipes and running on.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what is left of cmd's process group once it has ended.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
