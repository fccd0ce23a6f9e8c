// Package diskguard watches the free space of the file system a store is
// on, so that new writes can be refused before the disk is full while
// what drains it (receives, deletes) goes on: a high-water mark, checked
// every second rather than on each request.
package diskguard

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// Guard reports whether the free space of a directory's file system is
// below a minimum.
type Guard struct {
	dir     string
	min     uint64
	log     *slog.Logger
	statfs  func(dir string) (uint64, error)
	low     atomic.Bool
	free    atomic.Uint64
	checked atomic.Bool // free has been read once
}

// New returns a guard of dir's file system with the minimum min bytes
// free; log (nil: none) is told when the space crosses it.
func New(dir string, min uint64, log *slog.Logger) *Guard {
	return &Guard{dir: dir, min: min, log: log, statfs: freeBytes}
}

// Check reads the free space now and updates Low.
func (g *Guard) Check() {
	free, err := g.statfs(g.dir)
	if err != nil {
		if g.log != nil {
			g.log.Warn("diskguard: cannot read the free space", "dir", g.dir, "err", err)
		}
		return
	}
	g.free.Store(free)
	g.checked.Store(true)
	low := free < g.min
	if was := g.low.Swap(low); was != low && g.log != nil {
		if low {
			g.log.Error("disk nearly full: new sends are refused (ServiceUnavailable, retryable) until space is freed; receives and deletes go on",
				"dir", g.dir, "free_bytes", free, "min_free_bytes", g.min)
		} else {
			g.log.Info("disk space back above the minimum: sends accepted again", "dir", g.dir, "free_bytes", free)
		}
	}
}

// Run checks every interval until ctx ends.
func (g *Guard) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		g.Check()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Low reports whether the free space was below the minimum when last read.
func (g *Guard) Low() bool { return g.low.Load() }

// Free is the free space when last read, and whether it was read.
func (g *Guard) Free() (uint64, bool) { return g.free.Load(), g.checked.Load() }

// Min is the minimum.
func (g *Guard) Min() uint64 { return g.min }

// SetStatfs replaces how the free space is read (tests).
func (g *Guard) SetStatfs(f func(dir string) (uint64, error)) { g.statfs = f }
