package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

// fill sends n 256-byte messages to queue in batches of 10 from 32
// goroutines, so that a durable store group-commits them.
func fill(b testing.TB, e *engine.Engine, queue string, fifo bool, n int) {
	fillTagged(b, e, queue, fifo, n, "")
}

// fillTagged is fill whose FIFO deduplication ids start with tag, so that
// fills of one queue within five minutes do not deduplicate each other.
func fillTagged(b testing.TB, e *engine.Engine, queue string, fifo bool, n int, tag string) {
	body := fmt.Sprintf("%0256d", 0)
	var wg sync.WaitGroup
	per := n / 32
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i += 10 {
				entries := make([]tidemq.SendEntry, 0, 10)
				for j := 0; j < 10 && i+j < per; j++ {
					en := tidemq.SendEntry{ID: strconv.Itoa(j), Body: body}
					if fifo {
						en.MessageGroupID = "g" + strconv.Itoa((w*per+i+j)%64)
						en.MessageDeduplicationID = fmt.Sprintf("%s%d-%d", tag, w, i+j)
					}
					entries = append(entries, en)
				}
				res, err := e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true})
				if err != nil {
					b.Error(err)
					return
				}
				for _, r := range res {
					if r.Err != nil { // a batch answers an entry's failure in its result
						b.Error(r.Err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func createQueue(b testing.TB, e *engine.Engine, fifo bool) string {
	p := tidemq.CreateQueueParams{Name: "bench"}
	if fifo {
		p = tidemq.CreateQueueParams{Name: "bench.fifo", Attributes: map[string]string{"FifoQueue": "true"}}
	}
	if _, err := e.CreateQueue(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return p.Name
}

// discard is a store that keeps nothing: it isolates the engine's own
// indexes from the cost of a store (storage/mem is a Go map, whose cost
// grows with its size; Pebble's is dominated by fsync).
type discard struct{}

func (discard) NewBatch() storage.Batch                              { return &discardBatch{} }
func (discard) Scan(prefix []byte, fn func(k, v []byte) error) error { return nil }
func (discard) Close() error                                         { return nil }

type discardBatch struct{ n int }

func (b *discardBatch) Set(k, v []byte)               { b.n++ }
func (b *discardBatch) Delete(k []byte)               { b.n++ }
func (b *discardBatch) SingleDelete(k []byte)         { b.n++ }
func (b *discardBatch) DeleteRange(start, end []byte) { b.n++ }
func (b *discardBatch) Empty() bool                   { return b.n == 0 }
func (b *discardBatch) Commit() (storage.Durable, error) {
	return storage.Done{}, nil
}

// BenchmarkReceiveDeleteDepth measures one send + receive + delete at a
// steady depth, to show that the cost does not grow with the number of
// queued messages (standard, and FIFO with 64 groups). The store discards
// its writes, so this measures the engine's indexes, not a store.
//
//	go test ./engine -run '^$' -bench ReceiveDeleteDepth -benchtime 300000x -count 3
func BenchmarkReceiveDeleteDepth(b *testing.B) {
	for _, fifo := range []bool{false, true} {
		for _, depth := range []int{1_000, 1_000_000} {
			kind := "standard"
			if fifo {
				kind = "fifo64"
			}
			b.Run(fmt.Sprintf("%s/depth=%d", kind, depth), func(b *testing.B) {
				e, err := engine.Open(engine.Options{Store: discard{}, SweepInterval: -1, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				defer e.Close()
				q := createQueue(b, e, fifo)
				fill(b, e, q, fifo, depth)
				ctx := context.Background()
				body := fmt.Sprintf("%0256d", 1)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					en := tidemq.SendEntry{Body: body}
					if fifo {
						en.MessageGroupID = "g" + strconv.Itoa(i%64)
						en.MessageDeduplicationID = "b" + strconv.Itoa(i)
					}
					if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{en}}); err != nil {
						b.Fatal(err)
					}
					msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: q})
					if err != nil || len(msgs) != 1 {
						b.Fatalf("receive: %v, %d messages", err, len(msgs))
					}
					errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: q, Entries: []tidemq.DeleteEntry{{ReceiptHandle: msgs[0].ReceiptHandle}}})
					if err != nil || errs[0] != nil {
						b.Fatal(err, errs)
					}
				}
			})
		}
	}
}

// BenchmarkRestart measures Open on a Pebble store that holds n queued
// 256-byte messages: the time until the server can answer again.
//
//	go test ./engine -run '^$' -bench Restart -benchtime 3x
func BenchmarkRestart(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			open := func() (*engine.Engine, storage.Store) {
				s, err := pebble.Open(dir, pebble.Options{})
				if err != nil {
					b.Fatal(err)
				}
				e, err := engine.Open(engine.Options{Store: s, SweepInterval: -1, Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				return e, s
			}
			e, _ := open()
			q := createQueue(b, e, false)
			fill(b, e, q, false, n)
			e.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				e, _ := open()
				b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms/open")
				b.StopTimer()
				attrs, err := e.GetQueueAttributes(context.Background(), tidemq.GetQueueAttributesParams{Queue: q, Names: []string{"ApproximateNumberOfMessages"}})
				if err != nil || attrs["ApproximateNumberOfMessages"] != strconv.Itoa(n) {
					b.Fatalf("after restart: %v %v", err, attrs)
				}
				e.Close()
				b.StartTimer()
			}
		})
	}
}
