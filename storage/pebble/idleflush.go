package pebble

import (
	"sync"
	"time"
)

// Idle flushing. Pebble keeps what was written since its last flush in
// memtables, outside the Go heap, and flushes them only once they add up
// to about half of MemTableSize (64 MiB): a server that goes quiet before
// that keeps them resident for good. 100,000 CreateQueue left eight
// memtables and 45 MB of WAL unflushed in a server; in a throwaway test,
// 100,000 450-byte records from 32 writers left 49 MB unflushed, 55 MiB
// of RSS, and a flush took RSS from 73 to 41 MiB. So a store that has had
// no commit for Options.IdleFlush and holds at least idleFlushMin bytes
// of unflushed writes writes its memtables out, once, and then waits for
// commits again. A busy store is never flushed by this: Pebble's own
// thresholds apply there.

// idleFlushMin is the least unflushed data (WAL bytes) worth a flush.
const idleFlushMin = 4 << 20

// idleLoop is the goroutine that flushes an idle store.
type idleLoop struct {
	once sync.Once
	quit chan struct{}
	done chan struct{}
}

// stop ends the loop and waits for it (a no-op if it never started).
func (l *idleLoop) stop() {
	l.once.Do(func() {
		if l.quit != nil {
			close(l.quit)
			<-l.done
		}
	})
}

// startIdleFlush starts the idle-flush loop unless Options turn it off.
func (s *Store) startIdleFlush() {
	after := s.o.IdleFlush
	if after < 0 {
		return
	}
	if after == 0 {
		after = 10 * time.Second
	}
	s.idle.quit, s.idle.done = make(chan struct{}), make(chan struct{})
	go s.idleFlushLoop(after)
}

// idleFlushLoop checks twice per period whether the store has gone a
// whole period without a commit, and flushes it then (flushIdle).
func (s *Store) idleFlushLoop(after time.Duration) {
	defer close(s.idle.done)
	t := time.NewTicker(after / 2)
	defer t.Stop()
	last, quiet := s.commits.Load(), 0
	for {
		select {
		case <-s.idle.quit:
			return
		case <-t.C:
		}
		if n := s.commits.Load(); n != last {
			last, quiet = n, 0
			continue
		}
		if quiet++; quiet == 2 {
			s.flushIdle()
		}
	}
}

// flushIdle flushes the memtables if they hold idleFlushMin or more. It
// holds closeMu for reading, as Checkpoint does, so that Close and Reopen
// wait for it; a failure is logged and left to the next commit to find.
func (s *Store) flushIdle() {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	db := s.db.Load()
	if db == nil || s.failure() != nil || db.Metrics().WAL.Size < idleFlushMin {
		return
	}
	if err := db.Flush(); err != nil && s.o.Logger != nil {
		s.o.Logger.Warn("storage: flushing an idle store", "err", err)
	}
}
