package engine_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/pebble"
)

// BenchmarkTenMessages writes ten messages per operation on a durable
// Pebble store, from 16 goroutines, in the two shapes an SNS fan-out is
// compared with: SendMessageBatch's (ten entries to one queue, one
// SendMessages) and a fan-out's (one entry to each of ten queues, one
// SendToQueues), each with 256-byte bodies (what tidemq bench sends) and
// 700-byte ones (about the size of the unsigned SNS envelope of a 256-byte
// message); and, to price a commit, as ten SendMessages of one entry each
// (single). Every body is a string of its own, as a request's or an
// envelope's is, so that its bytes are new memory each time. It reports
// the process's CPU per message: what separates the two shapes and the
// two sizes is what a fan-out's delivery costs beyond a batched send's
// message (docs/performance.md, fanout7).
func BenchmarkTenMessages(b *testing.B) {
	for _, shape := range []string{"batch", "fanout", "single"} {
		for _, size := range []int{256, 700} {
			b.Run(fmt.Sprintf("shape=%s/body=%d", shape, size), func(b *testing.B) {
				benchmarkTenMessages(b, shape, size)
			})
		}
	}
}

func benchmarkTenMessages(b *testing.B, shape string, size int) {
	st, err := pebble.Open(b.TempDir(), pebble.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := engine.Open(engine.Options{Store: st, SweepInterval: -1, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	names := make([]string, 10)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%d", i)
		if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: names[i]}); err != nil {
			b.Fatal(err)
		}
	}
	body := strings.Repeat("x", size)
	b.ReportAllocs()
	b.SetParallelism(8) // 16 goroutines on 2 CPUs
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var err error
			switch shape {
			case "single":
				for i := 0; i < 10 && err == nil; i++ {
					_, err = e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: names[0], Entries: []tidemq.SendEntry{{ID: "0", Body: strings.Clone(body)}}})
				}
			case "fanout":
				ps := make([]tidemq.SendMessagesParams, 10)
				for i := range ps {
					ps[i] = tidemq.SendMessagesParams{Queue: names[i], Entries: []tidemq.SendEntry{{ID: "0", Body: strings.Clone(body)}}}
				}
				_, err = e.SendToQueues(context.Background(), ps)
			default:
				entries := make([]tidemq.SendEntry, 10)
				for i := range entries {
					entries[i] = tidemq.SendEntry{ID: fmt.Sprint(i), Body: strings.Clone(body)}
				}
				_, err = e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: names[0], Entries: entries, Batch: true})
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N*10), "cpu-ns/msg")
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
