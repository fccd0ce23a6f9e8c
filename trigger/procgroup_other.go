//go:build !unix

package trigger

import "os/exec"

func ownGroup(*exec.Cmd)  {}
func killGroup(*exec.Cmd) {}
