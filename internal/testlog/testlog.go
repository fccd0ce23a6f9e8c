// Package testlog is a log sink for tests whose code under test logs from
// several goroutines (slog handlers write to it concurrently).
package testlog

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it; safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
