package postgres

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// A FIFO receive of one message locks every group whose head became
// receivable at the same instant as the one it serves (fifoLockSQL goes
// on through the heads of its last head's instant), and a batch's
// messages all share their instant. So while a receive of one message
// from group a runs, a second receive finds groups b and c held, though
// the first will not serve them, and comes back empty; as a long poll it
// then sleeps until a wake, here the whole of its wait (it gets b-1 only
// on its last look, at its deadline), while b's and c's messages are
// receivable all along. ("Under competition a receive takes
// the next free groups", receive.go.)
func TestFIFOReceiveDoesNotHoldGroupsItWillNotServe(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	b, err := Open(context.Background(), Options{DSN: dsn, Clock: tidemq.SystemClock{}, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "w.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}); err != nil {
		t.Fatal(err)
	}
	res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "w.fifo", Batch: true, Entries: []tidemq.SendEntry{
		{ID: "1", Body: "a-1", MessageGroupID: "a"}, {ID: "2", Body: "b-1", MessageGroupID: "b"}, {ID: "3", Body: "c-1", MessageGroupID: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	q, err := b.queueFor(ctx, nil, "w.fifo")
	if err != nil {
		t.Fatal(err)
	}
	// The first receive, of one message, in the middle of its
	// transaction: its lock statement has run.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	now := b.clock.Now()
	if _, err := tx.Exec(ctx, fifoLockSQL, q.id, stampOf(now), []int32{1}, q.cutoff(now), 1+fifoLockExtra, 1, math.MaxInt32); err != nil {
		t.Fatal(err)
	}
	var locked string
	if err := tx.QueryRow(ctx, `SELECT current_setting('`+fifoGroupsSetting+`')`).Scan(&locked); err != nil {
		t.Fatal(err)
	}
	t.Logf("locked %s", locked)
	one, wait := 1, 2
	got := make(chan []*tidemq.Message, 1)
	start := time.Now()
	go func() {
		ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "w.fifo", MaxNumberOfMessages: &one, WaitTimeSeconds: &wait})
		if err != nil {
			t.Error(err)
		}
		got <- ms
	}()
	// The first receive takes a-1 and commits.
	time.Sleep(300 * time.Millisecond)
	if _, err := tx.Exec(ctx, `UPDATE messages SET receive_count = 1, visible_at = $2 WHERE queue_id = $1 AND group_id = 'a'`,
		q.id, stampOf(time.Now().Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ms := <-got
	// Receivable throughout, b-1 is due at once; the first receive's
	// commit (at 0.3 s) frees its groups.
	if took := time.Since(start); len(ms) != 1 || took > time.Second {
		t.Fatalf("a long poll of one message beside a receive that locked groups %s (to serve one) returned %d messages after %v "+
			"(its wait is %d s), while b-1 and c-1 were receivable throughout", locked, len(ms), took.Round(10*time.Millisecond), wait)
	}
}
