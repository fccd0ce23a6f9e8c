package pebble

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// An idle store writes out what its memtables hold (at least
// idleFlushMin), and then stays as it is; a store with IdleFlush off
// keeps it in its memtables.
func TestIdleFlush(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("on=", on), func(t *testing.T) {
			o := Options{IdleFlush: time.Second}
			if !on {
				o.IdleFlush = -1
			}
			s, err := Open(t.TempDir(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			val := []byte(strings.Repeat("v", 1000))
			// Sixteen writers, so that the writes take less than the idle
			// period even on a slow disk.
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() {
					for i := w; i < 2*idleFlushMin/len(val); i += 16 {
						b := s.NewBatch()
						b.Set(fmt.Appendf(nil, "k%06d", i), val)
						if err := storage.CommitSync(b); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			unflushed := func() int64 { return int64(s.db.Load().Metrics().WAL.Size) }
			if n := unflushed(); n < idleFlushMin {
				t.Fatalf("unflushed %d bytes after the writes, want at least %d", n, idleFlushMin)
			}
			deadline := time.Now().Add(10 * time.Second)
			for on && unflushed() >= idleFlushMin && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !on {
				time.Sleep(2500 * time.Millisecond) // longer than the store that flushes waits
			}
			n := unflushed()
			if on && n >= idleFlushMin {
				t.Errorf("%d bytes still unflushed after 10 s idle", n)
			}
			if !on && n < idleFlushMin {
				t.Errorf("flushed with IdleFlush off (%d bytes left)", n)
			}
			// What was written reads back.
			got := 0
			if err := s.Scan([]byte("k"), func(k, v []byte) error { got++; return nil }); err != nil {
				t.Fatal(err)
			}
			if want := 2 * idleFlushMin / len(val); got != want {
				t.Errorf("read %d keys back, want %d", got, want)
			}
		})
	}
}
