package pebble_test

import (
	"fmt"
	"testing"

	"github.com/tidemq/tidemq/storage/pebble"
)

// TestStats checks that every synced commit is counted and that the WAL's
// fsyncs are read from Pebble (in seconds, with cumulative buckets).
func TestStats(t *testing.T) {
	s, err := pebble.Open(t.TempDir(), pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := s.Stats()
	for i := range 5 {
		b := s.NewBatch()
		b.Set([]byte(fmt.Sprint("k", i)), []byte("v"))
		d, err := b.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if got := st.SyncedCommits - before.SyncedCommits; got != 5 {
		t.Errorf("synced commits %d, want 5", got)
	}
	// Waited one by one, each commit needed its own fsync; Pebble records
	// an fsync's latency after it wakes the waiters, so the last one may
	// not be counted yet when Wait returns.
	if got := st.Fsyncs - before.Fsyncs; got < 4 {
		t.Errorf("fsyncs %d, want at least 4", got)
	}
	if st.FsyncSeconds <= 0 || st.FsyncSeconds > 60 {
		t.Errorf("fsync seconds %v", st.FsyncSeconds)
	}
	var prev uint64
	var top float64
	for bound, n := range st.FsyncBuckets {
		if bound > top {
			top, prev = bound, n
		}
	}
	if top < 1 || top > 60 || prev != st.Fsyncs {
		t.Errorf("largest bucket %v s holds %d of %d fsyncs", top, prev, st.Fsyncs)
	}
}
