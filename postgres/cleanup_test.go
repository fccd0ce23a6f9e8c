package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// The deduplication window and receive attempts take no room once their
// five minutes are over: a FIFO queue's side tables stay as small as its
// last five minutes of traffic and the sweep's interval.
func TestFIFOSideTablesForgetWhatExpired(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b := open(t, dsn, clk)
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	rows := func(table string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{tidemq.AttrFifoQueue: "true"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{{ID: "0", Body: "x",
			MessageGroupID: "g" + strconv.Itoa(i), MessageDeduplicationID: "d" + strconv.Itoa(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "f.fifo", MaxNumberOfMessages: ptr(10),
		WaitTimeSeconds: ptr(0), ReceiveRequestAttemptID: "attempt"}); err != nil {
		t.Fatal(err)
	}
	if d, a := rows("dedup"), rows("receive_attempts"); d != 20 || a != 1 {
		t.Fatalf("within the window: %d dedup rows and %d attempts, want 20 and 1", d, a)
	}
	clk.Advance(tidemq.DedupWindow + time.Second)
	// The sweep forgets them (a request never does: it only reads the
	// entries still in their window).
	if err := b.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if d, a := rows("dedup"), rows("receive_attempts"); d != 0 || a != 0 {
		t.Fatalf("after the window: %d dedup rows and %d attempts, want none", d, a)
	}
}
