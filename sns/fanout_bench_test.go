package sns

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// sinkBroker accepts every SendMessages at once and keeps nothing: under
// it a benchmark measures what the service itself spends per delivery
// (envelope, lanes, outbox), not the store.
type sinkBroker struct {
	tidemq.Broker
	sent atomic.Int64
}

func (b *sinkBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.sent.Add(int64(len(p.Entries)))
	res := make([]tidemq.SendResult, len(p.Entries))
	for i, e := range p.Entries {
		res[i] = tidemq.SendResult{ID: e.ID, MessageID: "m"}
	}
	return res, nil
}

// SendToQueues keeps nothing either (tidemq.QueuesSender).
func (b *sinkBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	res := make([][]tidemq.SendResult, len(ps))
	for i, p := range ps {
		res[i], _ = b.SendMessages(ctx, p)
	}
	return res, nil
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingBroker counts the SendMessages calls that reach its broker.
type countingBroker struct {
	tidemq.Broker
	calls atomic.Int64
}

func (b *countingBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.calls.Add(1)
	return b.Broker.SendMessages(ctx, p)
}

// SendToQueues counts one call: one write for all its queues.
func (b *countingBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	b.calls.Add(1)
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

// BenchmarkPublishFanOut publishes 256-byte messages to a standard topic
// with 1 and 10 SQS subscriptions (envelopes, --sns-sign=http-only, no
// message attributes, as tidemq bench's sns scenarios do), in parallel,
// and reports the process's CPU per publish (cpu-ns/op) and per delivery
// (cpu-ns/delivery), and how many SendMessages calls a publish takes
// (sends/op: SendMessages and SendToQueues calls; a fan-out's deliveries
// go in one SendToQueues where the broker has it, together.go, and are
// otherwise gathered per queue, lanes.go). store=sink: a
// broker that keeps nothing and an in-memory outbox, so what the service
// itself spends; store=pebble: the
// engine and the outbox on one durable Pebble store, as tidemq serve runs
// them (every write synced), without the HTTP front.
func BenchmarkPublishFanOut(b *testing.B) {
	for _, store := range []string{"sink", "pebble"} {
		for _, subs := range []int{1, 10} {
			b.Run(fmt.Sprintf("store=%s/subs=%d", store, subs), func(b *testing.B) {
				benchmarkPublishFanOut(b, store, subs)
			})
		}
	}
}

func benchmarkPublishFanOut(b *testing.B, store string, subs int) {
	quiet := slog.New(slog.DiscardHandler)
	opt := Options{Logger: quiet, Signing: SignHTTPOnly, PublicURL: "http://localhost:9324"}
	var count func() int64
	counted := &countingBroker{}
	switch store {
	case "sink":
		sink := &sinkBroker{}
		counted.Broker, count = sink, sink.sent.Load
	case "pebble":
		st, err := pebble.Open(b.TempDir(), pebble.Options{})
		if err != nil {
			b.Fatal(err)
		}
		shared := storage.Share(st)
		e, err := engine.Open(engine.Options{Store: shared.Share(), SweepInterval: -1, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer e.Close()
		counted.Broker, opt.Store = e, shared
		count = func() int64 {
			n := 0
			for _, q := range e.Snapshot() {
				n += q.Visible
			}
			return int64(n)
		}
	}
	opt.Broker = counted
	s, err := Open(opt)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "bench", Attributes: nil})
	if err != nil {
		b.Fatal(err)
	}
	for i := range subs {
		name := fmt.Sprintf("bench-%d", i)
		if store != "sink" {
			if _, err := opt.Broker.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: name}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: t.ARN, Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:" + name}); err != nil {
			b.Fatal(err)
		}
	}
	in := PublishParams{TopicARN: t.ARN, Message: strings.Repeat("x", 256), Client: tidemq.ClientInfo{AccessKey: "AKIDBENCH"}}
	b.ReportAllocs()
	b.SetParallelism(8) // 16 publishers on 2 CPUs, as tidemq bench's --clients 16
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Publish(context.Background(), in); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	cpu := processCPU() - cpu0
	// CPU time, not the wall clock: on a shared machine the CPU a
	// delivery costs is what holds still.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*subs), "cpu-ns/delivery")
	b.ReportMetric(float64(counted.calls.Load())/float64(b.N), "sends/op") // SendMessages calls
	if got := count(); got != int64(b.N*subs) {
		b.Fatalf("%d deliveries, want %d", got, b.N*subs)
	}
}
