package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// A message moved into a FIFO queue takes its sequence number in its
// group as a send does: holding the group's lock (move.go). Each case
// stops a move in the middle of its transaction, after it took the
// moved message's sequence number (a test transaction holds the row lock
// of a message the move deletes), and sends to the destination group
// meanwhile. Without the lock the send is served first (the receive
// between gets it), and once the move commits the group has its earlier
// message ready behind one in flight: a second receive serves it, two
// messages of one group in flight at once, their sequence numbers going
// backwards. With it the send waits for the move, the receive between
// gets nothing, and the group comes out in order: the moved message,
// then the sent one.
func TestFIFOMoveIntoGroupKeepsGroupOrder(t *testing.T) {
	fifo := func(extra ...string) map[string]string {
		a := map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	redrive := `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d.fifo","maxReceiveCount":1}`
	cases := []struct {
		name string
		// setup leaves the message to move ("m0", group g) where the
		// move finds it and returns the queue it is in, the message
		// whose row to lock, and the queue the move brings m0 into.
		setup func(t *testing.T, b *Broker) (from, lock, into string)
		// move runs the move (it blocks on the locked row).
		move func(b *Broker) error
	}{{
		name: "dead-letter move on receive",
		setup: func(t *testing.T, b *Broker) (string, string, string) {
			sendOne(t, b, "s.fifo", "g", "m0")
			receiveFrom(t, b, "s.fifo", 0) // receive count 1 = maxReceiveCount
			return "s.fifo", "m0", "d.fifo"
		},
		move: func(b *Broker) error {
			_, err := b.ReceiveMessages(context.Background(), receiveParams("s.fifo", 0))
			return err
		},
	}, {
		name: "redrive out of the dead-letter queue",
		setup: func(t *testing.T, b *Broker) (string, string, string) {
			sendOne(t, b, "s.fifo", "g", "m0")
			receiveFrom(t, b, "s.fifo", 0)
			receiveFrom(t, b, "s.fifo", 0) // moves m0 to d.fifo
			return "d.fifo", "m0", "s.fifo"
		},
		move: func(b *Broker) error {
			_, err := b.MoveMessages(context.Background(), tidemq.MoveMessagesParams{Source: "d.fifo"})
			return err
		},
	}, {
		name: "capture of expired messages",
		setup: func(t *testing.T, b *Broker) (string, string, string) {
			sendOne(t, b, "c.fifo", "g", "m0")
			b.clock.(*clocktest.Clock).Advance(2 * time.Minute) // past c.fifo's retention
			// The move of m1 that follows the capture of m0 in
			// MoveMessages' transaction is what blocks.
			sendOne(t, b, "c.fifo", "h", "m1")
			return "c.fifo", "m1", "cap.fifo"
		},
		move: func(b *Broker) error {
			_, err := b.MoveMessages(context.Background(), tidemq.MoveMessagesParams{Source: "c.fifo", Destination: "o.fifo"})
			return err
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := openInternal(t)
			ctx := context.Background()
			for _, q := range []tidemq.CreateQueueParams{
				{Name: "d.fifo", Attributes: fifo()},
				{Name: "s.fifo", Attributes: fifo(tidemq.AttrRedrivePolicy, redrive)},
				{Name: "cap.fifo", Attributes: fifo()},
				{Name: "o.fifo", Attributes: fifo()},
				{Name: "c.fifo", Attributes: fifo(tidemq.AttrMessageRetentionPeriod, "60"), Tags: map[string]string{CaptureExpiredTag: "cap.fifo"}},
			} {
				if _, err := b.CreateQueue(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			from, lock, into := tc.setup(t, b)
			holder, pid := lockMessageRow(t, b, from, lock)
			moved := make(chan error, 1)
			go func() { moved <- tc.move(b) }()
			if waitFor(t, "the move to block on the locked row", moved, func() bool { return blockedBy(t, b, pid, 1) }) {
				t.Fatal("the move ended without waiting for the locked row")
			}
			sent := make(chan error, 1)
			go func() {
				_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: into, Entries: []tidemq.SendEntry{{Body: "sent", MessageGroupID: "g"}}})
				sent <- err
			}()
			// The send either is done (no lock kept it) or waits behind
			// the blocked move.
			sendDone := waitFor(t, "the send to end or wait for the move", sent, func() bool { return blockedBy(t, b, pid, 2) })
			var got []*tidemq.Message
			got = append(got, receiveFrom(t, b, into, 30)...)
			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-moved; err != nil {
				t.Fatal(err)
			}
			if !sendDone {
				if err := <-sent; err != nil {
					t.Fatal(err)
				}
			}
			got = append(got, receiveFrom(t, b, into, 30)...)
			var bodies []string
			for _, m := range got {
				bodies = append(bodies, m.Body+" (seq "+m.SequenceNumber+")")
			}
			if len(got) != 2 || got[0].Body != "m0" || got[1].Body != "sent" {
				t.Fatalf("%s's group g served %v across two receives, want m0 then sent", into, bodies)
			}
		})
	}
}

func sendOne(t *testing.T, b *Broker, queue, group, body string) {
	t.Helper()
	if _, err := b.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue,
		Entries: []tidemq.SendEntry{{Body: body, MessageGroupID: group}}}); err != nil {
		t.Fatal(err)
	}
}

func receiveParams(queue string, visibility int) tidemq.ReceiveMessagesParams {
	ten, zero := 10, 0
	return tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero, VisibilityTimeout: &visibility}
}

func receiveFrom(t *testing.T, b *Broker, queue string, visibility int) []*tidemq.Message {
	t.Helper()
	ms, err := b.ReceiveMessages(context.Background(), receiveParams(queue, visibility))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// lockMessageRow begins a transaction that holds the row lock of the
// message with body in queue, and returns it with its backend's pid.
func lockMessageRow(t *testing.T, b *Broker, queue, body string) (pgx.Tx, int) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	var pid, n int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages m JOIN queues q ON q.id = m.queue_id
		WHERE q.name = $1 AND m.body = $2 FOR UPDATE OF m) x`, queue, body).Scan(&n); err != nil || n != 1 {
		t.Fatalf("locked %d rows of %s in %s: %v", n, body, queue, err)
	}
	return tx, pid
}

// blockedBy reports whether a backend waits for pid (depth 1), or for a
// backend that waits for pid (depth 2).
func blockedBy(t *testing.T, b *Broker, pid, depth int) bool {
	t.Helper()
	sql := `SELECT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE $1 = ANY(pg_blocking_pids(a.pid)))`
	if depth == 2 {
		sql = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity a, unnest(pg_blocking_pids(a.pid)) p WHERE $1 = ANY(pg_blocking_pids(p)))`
	}
	var ok bool
	if err := b.pool.QueryRow(context.Background(), sql, pid).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// waitFor polls until cond holds or done delivers (then it reports true,
// and fails the test on an error), for 10 s at most.
func waitFor(t *testing.T, what string, done chan error, cond func() bool) bool {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return true
		default:
		}
		if cond() {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("waited 10 s for %s", what)
	return false
}
