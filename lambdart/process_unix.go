//go:build unix

package lambdart

import (
	"os/exec"
	"syscall"
)

// processGroup puts the runtime in a process group of its own, so that
// killing it kills what it started (a bootstrap script's program).
func processGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func signalGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}
