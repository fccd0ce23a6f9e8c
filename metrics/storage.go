package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// storageCollector exposes the durable store's WAL counters.
type storageCollector struct{ stats func() StorageStats }

var (
	descFsync = prometheus.NewDesc("tidemq_storage_fsync_duration_seconds",
		"Time taken by the write-ahead log's fsyncs.", nil, nil)
	descFsyncs = prometheus.NewDesc("tidemq_storage_fsyncs_total",
		"Write-ahead log fsyncs.", nil, nil)
	descCommits = prometheus.NewDesc("tidemq_storage_synced_commits_total",
		"Batches committed with a sync, one per durable write; divided by tidemq_storage_fsyncs_total it is the mean group-commit size.", nil, nil)
)

func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descFsync
	ch <- descFsyncs
	ch <- descCommits
}

func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	buckets := make(map[float64]uint64, len(s.FsyncBuckets))
	for k, v := range s.FsyncBuckets {
		buckets[k] = v
	}
	ch <- prometheus.MustNewConstHistogram(descFsync, s.Fsyncs, s.FsyncSeconds, buckets)
	ch <- prometheus.MustNewConstMetric(descFsyncs, prometheus.CounterValue, float64(s.Fsyncs))
	ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(s.SyncedCommits))
}

// Rebucket keeps, for each wanted bound, the largest of the given
// cumulative buckets whose bound does not exceed it, so that the counts stay
// exact while a fine histogram (Pebble's has a hundred buckets) becomes a
// readable one. The result is keyed by the bounds actually kept.
func Rebucket(cumulative map[float64]uint64, wanted []float64) map[float64]uint64 {
	bounds := make([]float64, 0, len(cumulative))
	for b := range cumulative {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	out := make(map[float64]uint64, len(wanted))
	for _, w := range wanted {
		i := sort.Search(len(bounds), func(i int) bool { return bounds[i] > w }) - 1
		if i >= 0 {
			out[bounds[i]] = cumulative[bounds[i]]
		}
	}
	return out
}

// FsyncBuckets are the bounds (seconds) tidemq shows fsync latency in.
var FsyncBuckets = []float64{0.0001, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
