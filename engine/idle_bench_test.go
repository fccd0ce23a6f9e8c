package engine_test

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"

	"github.com/tidemq/tidemq"
)

// BenchmarkIdleQueues creates 100,000 empty standard queues on Pebble, as
// `tidemq serve` opens it, and reports the Go heap in use and the
// process's RSS with them, and again after a restart (issue 25: under
// 200 MiB idle).
//
//	go test ./engine -run '^$' -bench IdleQueues -benchtime 1x
func BenchmarkIdleQueues(b *testing.B) {
	queues := 100_000
	if s := os.Getenv("TIDEMQ_BENCH_QUEUES"); s != "" {
		queues, _ = strconv.Atoi(s)
	}
	dir := b.TempDir()
	e := openOnPebble(b, dir)
	var wg sync.WaitGroup
	for c := 0; c < 32; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < queues; i += 32 {
				if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: fmt.Sprintf("queue-%06d", i)}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	heap, rss := memory()
	b.ReportMetric(heap, "heap-MiB")
	b.ReportMetric(rss, "rss-MiB")
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	e = openOnPebble(b, dir)
	heap, rss = memory()
	b.ReportMetric(heap, "heap-after-restart-MiB")
	b.ReportMetric(rss, "rss-after-restart-MiB")
	debug.FreeOSMemory() // as `tidemq serve` does once its state is loaded
	_, rss = memory()
	b.ReportMetric(rss, "rss-after-restart-freed-MiB")
	if f := os.Getenv("TIDEMQ_BENCH_HEAPPROFILE"); f != "" {
		out, err := os.Create(f)
		if err == nil {
			_ = pprof.WriteHeapProfile(out)
			out.Close()
		}
	}
	e.Close()
}
