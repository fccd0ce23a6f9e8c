package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
)

// A FIFO group's lock (fifoGroupKey) is what its sends and receives take
// turns on: while another transaction holds group g's, a send to g waits
// (so that g's sequence numbers follow commit order), a receive skips g
// without waiting, and a send to and a receive from another group go on.
func TestFIFOGroupLockOrdersSendsAndSkipsReceives(t *testing.T) {
	b := openInternal(t)
	ten, zero := 10, 0
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "l.fifo", Attributes: map[string]string{
		tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}); err != nil {
		t.Fatal(err)
	}
	send := func(group, body string) error {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "l.fifo", Entries: []tidemq.SendEntry{{Body: body, MessageGroupID: group}}})
		return err
	}
	if err := send("g", "g-0"); err != nil {
		t.Fatal(err)
	}
	q, err := b.queueFor(ctx, nil, "l.fifo")
	if err != nil {
		t.Fatal(err)
	}
	tx := holdGroup(t, b, q, "g")
	sentG := make(chan error, 1)
	go func() { sentG <- send("g", "g-1") }()
	// h is spelled with the punctuation an array literal quotes: the
	// receive names its groups as a text[] in a setting.
	if err := send(`h"{},\'`, "h-0"); err != nil {
		t.Fatal(err)
	}
	ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "l.fifo", MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Body != "h-0" {
		t.Fatalf("with g's lock held elsewhere, a receive got %d messages, want h-0 alone", len(ms))
	}
	select {
	case err := <-sentG:
		t.Fatalf("a send to g returned (%v) while g's lock was held elsewhere", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-sentG; err != nil {
		t.Fatal(err)
	}
	ms, err = b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "l.fifo", MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Body != "g-0" || ms[1].Body != "g-1" {
		t.Fatalf("once g's lock was free, a receive got %d messages, want g-0, g-1", len(ms))
	}
}

// holdGroup begins a transaction on b that holds the lock of q's group,
// as a FIFO send or receive does in the middle of its own; the test
// commits or rolls it back (at its end at the latest).
func holdGroup(t *testing.T, b *Broker, q *queue, group string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+fifoGroupKey("$2::text")+`)`, q.id, group); err != nil {
		t.Fatal(err)
	}
	return tx
}
