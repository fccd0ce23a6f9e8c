package engine_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/pebble"
)

// BenchmarkFIFOSends prices a FIFO batch send (10 entries of 256 bytes,
// 64 groups, 16 goroutines on 2 CPUs) on Pebble with paging, into a queue
// that already holds TIDEMQ_BENCH_FIFO_DEPTH messages (default 100,000),
// while the sweep runs every second and writes a checkpoint every second
// of the Clock: what checkpointing FIFO group pages (engine/
// fifocheckpoint.go) costs the send path. One op is one batch.
//
//	go test ./engine -run '^$' -bench FIFOSends -benchtime 3s -count 6
func BenchmarkFIFOSends(b *testing.B) {
	depth := 100_000
	if s := os.Getenv("TIDEMQ_BENCH_FIFO_DEPTH"); s != "" {
		depth, _ = strconv.Atoi(s)
	}
	st, err := pebble.Open(b.TempDir(), pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	o := backlogOptions(st)
	o.CheckpointInterval = time.Second
	e, err := engine.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "send.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		b.Fatal(err)
	}
	fill(b, e, "send.fifo", true, depth)
	defer sweepEverySecond(func() { e.Sweep() })()
	body := fmt.Sprintf("%0256d", 0)
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			entries := make([]tidemq.SendEntry, 10)
			for j := range entries {
				id := strconv.FormatInt(n*10+int64(j), 10)
				entries[j] = tidemq.SendEntry{ID: strconv.Itoa(j), Body: body, MessageGroupID: "g" + strconv.FormatInt((n*10+int64(j))%64, 10), MessageDeduplicationID: "s" + id}
			}
			if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "send.fifo", Entries: entries, Batch: true}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(10*b.N)/time.Since(start).Seconds(), "sends/s")
}
