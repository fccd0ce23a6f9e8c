package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/tidemq/tidemq"
)

// Above --max-memory, sends are refused with a retryable error while
// receives and deletes drain the queue; below it again, sends go on.
func TestSendsRefusedWhileMemoryIsHigh(t *testing.T) {
	rss := uint64(100 << 20)
	g := &memGuard{max: 512 << 20, read: func() uint64 { return rss }, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	g.check()
	checkSendGuard(t, func(b tidemq.Broker) tidemq.Broker { return &memGuarded{Broker: b, g: g} }, func(refuse bool) {
		rss = 200 << 20
		if refuse {
			rss = 600 << 20
		}
		g.check()
	}, "--max-memory")
	if residentBytes() == 0 {
		t.Fatal("the process's resident memory reads 0")
	}
}
