package engine_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/pebble"
)

// BenchmarkBacklog queues a deep backlog of 256-byte messages on Pebble,
// as `tidemq serve` does, and reports what issue 25 asks of it: the
// memory it takes, the rate of receive (10) + batch delete at that depth
// against the rate at a depth of about 1,000 (8 consumers), and the time a
// restart takes until the queue answers. Each run is one measurement
// (-benchtime 1x); the depth is TIDEMQ_BENCH_BACKLOG (default 1,000,000).
//
// With TIDEMQ_BENCH_CRASH=1 the restart follows a crash instead of a
// clean shutdown: the store is closed under the engine, which writes
// nothing more (Pebble keeps its write-ahead log for the next start-up to
// replay, as after kill -9). The sweep runs every second throughout, as in
// `tidemq serve` (it writes the checkpoints, engine/checkpoint.go).
//
// With TIDEMQ_BENCH_FIFO=1 the queues are FIFO queues of 64 message
// groups. Their deduplication windows (5 minutes, one entry per message
// sent) are let run out before memory is measured, on a clock that jumps 6
// minutes ahead: what is left is what the backlog takes.
//
// TIDEMQ_BENCH_DRAINED sets how many messages each depth drains (default
// 20,000); the shallow queue is topped up between slices of the
// measurement to stay near 1,000.
// TIDEMQ_BENCH_CPUPROFILE=path profiles each drain into path.<queue>.<n>,
// which `go tool pprof` merges: the deep queue's files against the
// shallow one's show what a receive pays for the depth.
//
//	TIDEMQ_BENCH_BACKLOG=1000000 go test ./engine -run '^$' -bench Backlog -benchtime 1x
func BenchmarkBacklog(b *testing.B) {
	depth := 1_000_000
	if s := os.Getenv("TIDEMQ_BENCH_BACKLOG"); s != "" {
		depth, _ = strconv.Atoi(s)
	}
	drained := 20_000 // messages received and deleted at each depth
	if s := os.Getenv("TIDEMQ_BENCH_DRAINED"); s != "" {
		drained, _ = strconv.Atoi(s)
	}
	ctx := context.Background()
	dir := b.TempDir()
	var st *pebble.Store
	open := func() *engine.Engine {
		var e *engine.Engine
		e, st = openOnPebbleStore(b, dir)
		return e
	}
	e := open()
	crash := os.Getenv("TIDEMQ_BENCH_CRASH") == "1"
	stopSweep := sweepEverySecond(func() {
		if crash {
			e.Sweep()
		}
	})
	fifo := os.Getenv("TIDEMQ_BENCH_FIFO") == "1"
	deepQ, shallowQ := "deep", "shallow"
	var attrs map[string]string
	if fifo {
		deepQ, shallowQ = "deep.fifo", "shallow.fifo"
		attrs = map[string]string{"FifoQueue": "true"}
	}
	for _, name := range []string{deepQ, shallowQ} {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	fill(b, e, deepQ, fifo, depth+drained)
	b.ReportMetric(float64(depth+drained)/time.Since(start).Seconds(), "sends/s")
	// The two depths are measured in alternating slices, so that the load
	// of a shared machine weighs on both alike. The shallow queue holds
	// 1,000 messages and a slice's worth before each of its slices (a
	// top-up between slices, not timed), so that a long measurement
	// (TIDEMQ_BENCH_DRAINED) keeps it shallow.
	const slices = 10
	perSlice := drained / slices
	fill(b, e, shallowQ, fifo, 1_000+perSlice)
	if fifo {
		benchClock.skip(6 * time.Minute) // the deduplication windows run out
		e.Sweep()
	}
	heap, rss := memory()
	if path := os.Getenv("TIDEMQ_BENCH_HEAPPROFILE"); path != "" {
		writeHeapProfile(b, path) // what the queued backlog holds
	}
	b.ReportMetric(heap, "heap-MiB")
	b.ReportMetric(rss, "rss-MiB")

	cpuProfile := os.Getenv("TIDEMQ_BENCH_CPUPROFILE")
	slice := 0
	drain := func(queue string) (time.Duration, int) {
		if cpuProfile != "" {
			stop := startCPUProfile(b, fmt.Sprintf("%s.%s.%d", cpuProfile, queue, slice))
			defer stop()
		}
		start := time.Now()
		var got atomic.Int64
		var wg sync.WaitGroup
		for c := 0; c < 8; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perSlice/80; i++ {
					msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: new(10)})
					// A FIFO receive may take fewer: a group stops at its
					// messages in flight.
					if err != nil || len(msgs) == 0 || !fifo && len(msgs) != 10 {
						b.Errorf("receive from %s: %v, %d messages", queue, err, len(msgs))
						return
					}
					got.Add(int64(len(msgs)))
					entries := make([]tidemq.DeleteEntry, len(msgs))
					for j, m := range msgs {
						entries[j] = tidemq.DeleteEntry{ID: strconv.Itoa(j), ReceiptHandle: m.ReceiptHandle}
					}
					if _, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: entries, Batch: true}); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start), int(got.Load())
	}
	var tShallow, tDeep time.Duration
	var nShallow, nDeep int
	for i := 0; i < slices; i++ {
		if i > 0 {
			fillTagged(b, e, shallowQ, fifo, perSlice, fmt.Sprintf("top-up-%d-", i))
		}
		d, n := drain(shallowQ)
		tShallow, nShallow = tShallow+d, nShallow+n
		d, n = drain(deepQ)
		tDeep, nDeep = tDeep+d, nDeep+n
		slice++
	}
	shallow := float64(nShallow) / tShallow.Seconds()
	deep := float64(nDeep) / tDeep.Seconds()
	b.ReportMetric(shallow, "rcv+del/s@1000")
	b.ReportMetric(deep, "rcv+del/s@deep")
	b.ReportMetric(deep/shallow, "deep/shallow")

	before, err := e.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: deepQ, Names: []string{tidemq.AttrApproximateNumberOfMessages}})
	if err != nil {
		b.Fatal(err)
	}
	stopSweep()
	if crash {
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
	} else if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	start = time.Now()
	e = open()
	a, err := e.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: deepQ, Names: []string{tidemq.AttrApproximateNumberOfMessages}})
	if err != nil || a[tidemq.AttrApproximateNumberOfMessages] != before[tidemq.AttrApproximateNumberOfMessages] {
		b.Fatalf("after the restart: %v %v, before %v", err, a, before)
	}
	b.ReportMetric(time.Since(start).Seconds(), "restart-s")
	heap, rss = memory()
	b.ReportMetric(heap, "heap-after-restart-MiB")
	b.ReportMetric(rss, "rss-after-restart-MiB")
	e.Close()
}

// sweepEverySecond calls sweep once a second, in real time, until the
// function it returns is called (which waits for the last sweep).
func sweepEverySecond(sweep func()) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				sweep()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// openOnPebble opens an engine on a Pebble store in dir, as `tidemq serve`
// does (backlogOptions).
func openOnPebble(b *testing.B, dir string) *engine.Engine {
	e, _ := openOnPebbleStore(b, dir)
	return e
}

// openOnPebbleStore is openOnPebble, with the store.
func openOnPebbleStore(b *testing.B, dir string) (*engine.Engine, *pebble.Store) {
	s, err := pebble.Open(dir, pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	o := backlogOptions(s)
	o.Clock = benchClock
	e, err := engine.Open(o)
	if err != nil {
		b.Fatal(err)
	}
	return e, s
}

// writeHeapProfile writes the heap's profile to path (go tool pprof).
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// startCPUProfile profiles the process's CPU into path until the function
// it returns is called. `go tool pprof` merges the files of several calls.
func startCPUProfile(b *testing.B, path string) (stop func()) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

// memory returns the Go heap in use after a collection and the process's
// resident set, in MiB. With TIDEMQ_BENCH_FREE=1 the freed heap is
// returned to the system first, so that the resident set after a restart
// is not the peak of what came before it in the same process (a FIFO
// fill's deduplication windows).
func memory() (heap, rss float64) {
	runtime.GC()
	if os.Getenv("TIDEMQ_BENCH_FREE") == "1" {
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap = float64(ms.HeapInuse) / (1 << 20)
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), &kb)
			rss = kb / 1024
		}
	}
	return heap, rss
}

// benchClock is the wall clock, moved ahead by skip.
var benchClock = &skewedClock{}

type skewedClock struct{ ahead atomic.Int64 }

func (c *skewedClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }
func (c *skewedClock) NewTimer(d time.Duration) tidemq.Timer {
	return tidemq.SystemClock{}.NewTimer(d)
}
func (c *skewedClock) skip(d time.Duration) { c.ahead.Add(int64(d)) }
