package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage/mem"
)

// The sweep visits only the busy queues (issue 25: 100,000 idle queues
// walked every second), and still applies every deadline exactly: a delay
// that ends, a message past retention, a FIFO deduplication window.
func TestSweepVisitsOnlyBusyQueues(t *testing.T) {
	ctx := context.Background()
	e, clk := openMem(t)
	must := func(err error) {
		t.Helper()
		must(t)(nil, err)
	}
	for i := range 1000 {
		_, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%03d", i)})
		must(err)
	}
	_, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "short", Attributes: map[string]string{"MessageRetentionPeriod": "60"}})
	must(err)
	_, err = e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{"FifoQueue": "true"}})
	must(err)
	busy := func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.busy)
	}
	e.Sweep()
	if n := busy(); n != 0 {
		t.Fatalf("%d busy queues of 1,002 empty ones, want 0", n)
	}

	send := func(queue string, entry tidemq.SendEntry) {
		t.Helper()
		res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{entry}})
		must(err)
		must(res[0].Err)
	}
	send("q007", tidemq.SendEntry{Body: "delayed", DelaySeconds: new(5)})
	send("short", tidemq.SendEntry{Body: "expires"})
	send("f.fifo", tidemq.SendEntry{Body: "f", MessageGroupID: "g", MessageDeduplicationID: "d"})
	if n := busy(); n != 3 {
		t.Fatalf("%d busy queues after sends to 3, want 3", n)
	}

	// The delay ends: the sweep applies it (Summary applies none itself).
	clk.Advance(6 * time.Second)
	e.Sweep()
	if tot, _ := e.Summary(0); tot.Visible != 3 || tot.Delayed != 0 {
		t.Fatalf("after the sweep: %d visible, %d delayed, want 3, 0", tot.Visible, tot.Delayed)
	}

	// q007 emptied: it leaves the set at the next sweep.
	ms, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q007"})
	must(err)
	if len(ms) != 1 {
		t.Fatalf("q007: %d messages", len(ms))
	}
	_, err = e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q007", Entries: []tidemq.DeleteEntry{{ReceiptHandle: ms[0].ReceiptHandle}}})
	must(err)
	ms, err = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo"})
	must(err)
	_, err = e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "f.fifo", Entries: []tidemq.DeleteEntry{{ReceiptHandle: ms[0].ReceiptHandle}}})
	must(err)
	e.Sweep()
	if n := busy(); n != 2 {
		t.Fatalf("%d busy queues, want 2 (short's message, f.fifo's deduplication window)", n)
	}

	// Retention: the sweep expires short's message and logs it once.
	clk.Advance(time.Minute)
	if got := e.Sweep(); got["short"] != 1 {
		t.Fatalf("sweep expired %v, want short: 1", got)
	}
	// The deduplication window (5 minutes) holds f.fifo until it ends: a
	// send of the same id within it is a duplicate, after it a new one.
	send("f.fifo", tidemq.SendEntry{Body: "f", MessageGroupID: "g", MessageDeduplicationID: "d"})
	if tot, _ := e.Summary(0); tot.Visible != 0 {
		t.Fatalf("a send within the deduplication window was taken: %d visible", tot.Visible)
	}
	if n := busy(); n != 1 {
		t.Fatalf("%d busy queues, want 1 (f.fifo)", n)
	}
	clk.Advance(5 * time.Minute)
	e.Sweep()
	if n := busy(); n != 0 {
		t.Fatalf("%d busy queues once every window ended, want 0", n)
	}
	send("f.fifo", tidemq.SendEntry{Body: "f", MessageGroupID: "g", MessageDeduplicationID: "d"})
	if tot, _ := e.Summary(0); tot.Visible != 1 {
		t.Fatalf("a send after the deduplication window: %d visible, want 1", tot.Visible)
	}

	// A queue deleted while busy leaves the set.
	must(e.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "f.fifo"}))
	e.Sweep()
	if n := busy(); n != 0 {
		t.Fatalf("%d busy queues after the busy one was deleted, want 0", n)
	}
}

// An expiry that a receive applied, leaving the queue empty, is still
// logged and counted by the next sweep.
func TestSweepLogsExpiryAppliedByReceive(t *testing.T) {
	ctx := context.Background()
	e, clk := openMem(t)
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "short", Attributes: map[string]string{"MessageRetentionPeriod": "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "short", Entries: []tidemq.SendEntry{{Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(61 * time.Second)
	if ms, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "short"}); len(ms) != 0 {
		t.Fatalf("received %d expired messages", len(ms))
	}
	if got := e.Sweep(); got["short"] != 1 {
		t.Fatalf("sweep logged %v, want short: 1", got)
	}
}

// openMem opens an engine on a memory store with a fake clock and no
// sweep of its own.
func openMem(t *testing.T) (*Engine, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := Open(Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, clk
}
