//go:build !linux

package postgres

import (
	"syscall"
	"time"
)

// userTimeout is Linux's TCP_USER_TIMEOUT; elsewhere keep-alives alone
// detect a cut link.
func userTimeout(time.Duration) func(network, address string, c syscall.RawConn) error { return nil }
