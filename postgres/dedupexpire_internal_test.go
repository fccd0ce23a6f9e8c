package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// A FIFO send that takes over expired deduplication keys (fifoSendSQL's
// ON CONFLICT ... DO UPDATE, which locks each key's row, in the keys'
// order) and the expiry of the window's rows (expire and the sweep, which
// delete the expired rows in the order of their expiry) must not wait for
// each other in a circle. Two keys, a < b, b sent first so that it
// expires first: the send takes over a; the expiry deletes b and comes to
// a; the send comes to b. The test's transaction plays the send, one key
// a statement (one statement of a real send does the same between two of
// its rows). With the expiry waiting for a's row lock, it was a deadlock:
// PostgreSQL broke it after deadlock_timeout (1 s) by failing one of the
// two (40P01), which tried again, both stalled for that second. The
// expiry must not wait for a key a send holds at all.
func TestFIFOSendTakingOverExpiredKeysAndExpiryDoNotDeadlock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		expire func(b *Broker) error
	}{{
		name: "expire on a read of the queue",
		expire: func(b *Broker) error {
			_, err := b.PeekMessages(context.Background(), tidemq.PeekMessagesParams{Queue: "k.fifo"})
			return err
		},
	}, {
		name:   "the sweep",
		expire: func(b *Broker) error { return b.Sweep(context.Background()) },
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := openInternal(t)
			ctx := context.Background()
			if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "k.fifo", Attributes: map[string]string{tidemq.AttrFifoQueue: "true"}}); err != nil {
				t.Fatal(err)
			}
			clock := b.clock.(*clocktest.Clock)
			for _, id := range []string{"b", "a"} {
				if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "k.fifo",
					Entries: []tidemq.SendEntry{{Body: id, MessageGroupID: "g", MessageDeduplicationID: id}}}); err != nil {
					t.Fatal(err)
				}
				clock.Advance(time.Second)
			}
			clock.Advance(tidemq.DedupWindow) // both keys expired
			q, err := b.queueFor(ctx, nil, "k.fifo")
			if err != nil {
				t.Fatal(err)
			}
			send, err := b.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer send.Rollback(ctx)
			var pid int
			if err := send.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Fatal(err)
			}
			takeOver := func(key string) error {
				now := b.clock.Now()
				_, err := send.Exec(ctx, fifoSendSQL, q.id, q.modified, stampOf(now), stampOf(now.Add(tidemq.DedupWindow)), stampOf(now),
					"sender", []string{key}, []string{"id-" + key}, []string{key + "-again"}, [][]byte{nil}, [][]byte{nil},
					[]string{"g"}, []string{key}, []int32{int32(len(key + "-again"))})
				return err
			}
			if err := takeOver("a"); err != nil {
				t.Fatal(err)
			}
			expired := make(chan error, 1)
			go func() { expired <- tc.expire(b) }()
			// The expiry either ends (it waits for no key the send
			// holds) or waits for the send's lock of a.
			start := time.Now()
			done := waitFor(t, "the expiry to end or wait for the send", expired, func() bool { return blockedBy(t, b, pid, 1) })
			if !done {
				t.Errorf("the expiry waits for the row lock of a key the send took over, holding a key the send comes to next")
			}
			sent := make(chan error, 1)
			go func() { sent <- takeOver("b") }()
			select {
			case err := <-sent:
				if err != nil {
					t.Fatalf("the send's takeover of b: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the send's takeover of b still waits after 10 s")
			}
			if err := send.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if !done {
				if err := <-expired; err != nil {
					t.Fatalf("the expiry: %v", err)
				}
				// A deadlock PostgreSQL broke after deadlock_timeout, the
				// expiry's transaction failed and tried again (inTx).
				t.Logf("the expiry ended after %v", time.Since(start))
			}
			var n int
			if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM dedup WHERE queue_id = $1 AND expires > $2`, q.id, stampOf(b.clock.Now())).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Fatalf("%d live deduplication keys after the send, want 2 (a and b)", n)
			}
		})
	}
}
