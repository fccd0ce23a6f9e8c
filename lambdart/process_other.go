//go:build !unix

package lambdart

import "os/exec"

func processGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, kill bool) { cmd.Process.Kill() }
