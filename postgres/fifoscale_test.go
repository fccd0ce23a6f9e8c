package postgres_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// A FIFO receive does not scan a locked group: with thousands of messages
// queued behind an in-flight head, a message of another group is found at
// once. (Correctness is asserted; the time is logged: it must not grow
// with the locked group's depth.)
func TestFIFOReceiveSkipsALockedGroup(t *testing.T) {
	depth := 5000
	if testing.Short() {
		depth = 1000
	}
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b := open(t, dsn, clk)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < depth; i += 10 {
		var entries []tidemq.SendEntry
		for j := 0; j < 10; j++ {
			entries = append(entries, tidemq.SendEntry{ID: strconv.Itoa(j), Body: fmt.Sprintf("a-%d", i+j), MessageGroupID: "a"})
		}
		if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: entries, Batch: true}); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() []*tidemq.Message {
		t.Helper()
		m, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: ptr(1), WaitTimeSeconds: ptr(0)})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := recv(); len(m) != 1 || m[0].Body != "a-0" {
		t.Fatalf("first receive: %d messages", len(m))
	}
	// Group a is locked now, with depth-1 messages behind its head. The
	// planner's statistics are what autovacuum keeps them at in service.
	if c, err := pgx.Connect(ctx, dsn); err == nil {
		_, err = c.Exec(ctx, "ANALYZE messages")
		c.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
	}
	recv() // and the connection has prepared its statements
	start := time.Now()
	if m := recv(); len(m) != 0 {
		t.Fatalf("receive with group a locked returned %q", m[0].Body)
	}
	t.Logf("empty receive past a locked group of %d: %v", depth, time.Since(start))
	if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{{ID: "0", Body: "b-0", MessageGroupID: "b"}}}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if m := recv(); len(m) != 1 || m[0].Body != "b-0" {
		t.Fatalf("receive with group a locked and b waiting: %d messages", len(m))
	}
	t.Logf("receive of group b past a locked group of %d: %v", depth, time.Since(start))
}

// Past more ready messages than the scan in sequence order looks at, the
// group walk keeps AWS's group rule as the engine does: a message released
// before later ones of its group that are still in flight is received
// again (they do not lock its group), and the messages after those wait.
func TestFIFOWalkReturnsAnEarlierMessageWhileLaterOnesAreInFlight(t *testing.T) {
	const depth = 1200 // more than fifoScanBound ready behind the group's in-flight ones
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b := open(t, dsn, clk)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}); err != nil {
		t.Fatal(err)
	}
	send := func(group string, from, n int) {
		t.Helper()
		for i := from; i < from+n; i += 10 {
			var entries []tidemq.SendEntry
			for j := i; j < min(i+10, from+n); j++ {
				entries = append(entries, tidemq.SendEntry{ID: strconv.Itoa(j), Body: fmt.Sprintf("%s-%d", group, j), MessageGroupID: group})
			}
			if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: entries, Batch: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	recv := func() []*tidemq.Message {
		t.Helper()
		ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	bodies := func(ms []*tidemq.Message) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.Body)
		}
		return fmt.Sprint(s)
	}
	send("a", 0, depth)
	first := recv()
	if got := bodies(first); got != "[a-0 a-1 a-2 a-3 a-4 a-5 a-6 a-7 a-8 a-9]" {
		t.Fatalf("first receive: %v, want a-0..a-9", got)
	}
	// Release a-0 at once; a-1..a-9 stay in flight.
	if _, err := b.ChangeMessageVisibility(ctx, tidemq.ChangeVisibilityParams{Queue: "f.fifo",
		Entries: []tidemq.ChangeVisibilityEntry{{ReceiptHandle: first[0].ReceiptHandle, VisibilityTimeout: ptr(0)}}}); err != nil {
		t.Fatal(err)
	}
	// b joins the line of groups after a came back to it
	// (tidemq.GroupHead).
	clk.Advance(time.Millisecond)
	send("b", 0, 1)
	if got := bodies(recv()); got != "[a-0 b-0]" {
		t.Fatalf("with a-0 released, a-1..a-9 in flight and %d of a ready behind them: received %v, want [a-0 b-0]", depth-10, got)
	}
}
