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
