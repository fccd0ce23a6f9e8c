//go:build unix

package main

import "syscall"

// privateFiles makes every file and directory the server creates from now
// on readable by its own user only: the data directory holds message
// bodies, trigger secrets and the SNS signing key.
func privateFiles() { syscall.Umask(0o077) }
