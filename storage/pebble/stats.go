package pebble

import (
	"time"

	"github.com/cockroachdb/pebble"
	dto "github.com/prometheus/client_model/go"
)

// Stats are the write-ahead log's counters, for metrics. They count from
// Open, across Reopens.
type Stats struct {
	// SyncedCommits counts batches committed with a sync (every Commit).
	SyncedCommits uint64
	// Fsyncs counts WAL fsyncs; SyncedCommits/Fsyncs is the mean number of
	// commits that shared one fsync (the group-commit size).
	Fsyncs uint64
	// FsyncSeconds is the total time spent in fsyncs.
	FsyncSeconds float64
	// FsyncBuckets maps an upper bound in seconds to the cumulative count
	// of fsyncs that took at most that long (Pebble's own buckets).
	FsyncBuckets map[float64]uint64
}

// Stats reads the WAL counters from Pebble's metrics, adding those of the
// databases that Reopen closed.
func (s *Store) Stats() Stats {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	st := s.closedStats.plus(fsyncStats(s.db.Load()))
	st.SyncedCommits = s.commits.Load()
	return st
}

// retire swaps db out of s (for nil or a new database), keeping its
// counters; the caller then closes it.
func (s *Store) retire(next *pebble.DB) *pebble.DB {
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	old := s.db.Swap(next)
	s.closedStats = s.closedStats.plus(fsyncStats(old))
	return old
}

// fsyncStats reads the fsync counters of db (none for nil).
func fsyncStats(db *pebble.DB) Stats {
	var st Stats
	if db == nil {
		return st
	}
	h := db.Metrics().LogWriter.FsyncLatency
	if h == nil {
		return st
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil || m.Histogram == nil {
		return st
	}
	// Pebble observes fsync latency in nanoseconds.
	ns := float64(time.Second)
	st.Fsyncs = m.Histogram.GetSampleCount()
	st.FsyncSeconds = m.Histogram.GetSampleSum() / ns
	st.FsyncBuckets = make(map[float64]uint64, len(m.Histogram.Bucket))
	for _, b := range m.Histogram.Bucket {
		st.FsyncBuckets[b.GetUpperBound()/ns] = b.GetCumulativeCount()
	}
	return st
}

// plus adds the fsync counters of two databases (Pebble's buckets are the
// same for every database).
func (a Stats) plus(b Stats) Stats {
	out := Stats{Fsyncs: a.Fsyncs + b.Fsyncs, FsyncSeconds: a.FsyncSeconds + b.FsyncSeconds}
	if len(a.FsyncBuckets)+len(b.FsyncBuckets) > 0 {
		out.FsyncBuckets = make(map[float64]uint64, max(len(a.FsyncBuckets), len(b.FsyncBuckets)))
		for k, v := range a.FsyncBuckets {
			out.FsyncBuckets[k] += v
		}
		for k, v := range b.FsyncBuckets {
			out.FsyncBuckets[k] += v
		}
	}
	return out
}
