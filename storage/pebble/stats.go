package pebble

import (
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Stats are the write-ahead log's counters, for metrics.
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

// Stats reads the WAL counters from Pebble's metrics.
func (s *Store) Stats() Stats {
	st := Stats{SyncedCommits: s.commits.Load()}
	h := s.db.Metrics().LogWriter.FsyncLatency
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
