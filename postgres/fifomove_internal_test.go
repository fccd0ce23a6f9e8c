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
//
// The dead-letter move of a receive (settleOver, deadLetterSeqs) never
// waits for a row: TestGatheredFIFOReceiveDoesNotWaitForALockedOverHead.
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

// A move into a FIFO group that another transaction holds (here the
// test's, as a send or a receive of the group holds it) leaves the
// message where it is, and the rest of its group behind it, for a later
// pass; it moves once the group is free. A message due to be
// dead-lettered is not delivered again meanwhile, and nothing is lost or
// moved twice.
func TestFIFOMoveLeavesMessageWhileGroupBusy(t *testing.T) {
	fifo := map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}
	with := func(k, v string) map[string]string {
		a := map[string]string{k: v}
		for k, v := range fifo {
			a[k] = v
		}
		return a
	}
	ctx := context.Background()
	open := func(t *testing.T) (*Broker, func(string) *queue) {
		b := openInternal(t)
		for _, q := range []tidemq.CreateQueueParams{
			{Name: "d.fifo", Attributes: fifo},
			{Name: "s.fifo", Attributes: with(tidemq.AttrRedrivePolicy, `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d.fifo","maxReceiveCount":1}`)},
			{Name: "cap.fifo", Attributes: fifo},
			{Name: "c.fifo", Attributes: with(tidemq.AttrMessageRetentionPeriod, "60"), Tags: map[string]string{CaptureExpiredTag: "cap.fifo"}},
		} {
			if _, err := b.CreateQueue(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		return b, func(name string) *queue {
			q, err := b.queueFor(ctx, nil, name)
			if err != nil {
				t.Fatal(err)
			}
			return q
		}
	}
	bodies := func(ms []*tidemq.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Body)
		}
		return out
	}

	t.Run("dead-letter move on receive", func(t *testing.T) {
		b, qid := open(t)
		d, s := qid("d.fifo"), qid("s.fifo")
		// m0 is over maxReceiveCount, m1 of its group behind it, x in
		// another group.
		sendOne(t, b, "s.fifo", "g", "m0")
		receiveFrom(t, b, "s.fifo", 0)
		sendOne(t, b, "s.fifo", "g", "m1")
		sendOne(t, b, "s.fifo", "h", "x")
		tx := holdGroup(t, b, d, "g")
		if got := bodies(receiveFrom(t, b, "s.fifo", 30)); len(got) != 1 || got[0] != "x" {
			t.Fatalf("with d.fifo's group g busy, a receive of s.fifo got %v, want x alone", got)
		}
		if n, m := b.depth(t, s.id), b.depth(t, d.id); n != 3 || m != 0 {
			t.Fatalf("with d.fifo's group g busy, s.fifo holds %d messages and d.fifo %d, want 3 and 0", n, m)
		}
		tx.Rollback(ctx)
		if got := bodies(receiveFrom(t, b, "s.fifo", 30)); len(got) != 1 || got[0] != "m1" {
			t.Fatalf("once d.fifo's group g is free, a receive of s.fifo got %v, want m1 (m0 dead-lettered)", got)
		}
		if n, m := b.depth(t, s.id), b.depth(t, d.id); n != 2 || m != 1 {
			t.Fatalf("s.fifo holds %d messages and d.fifo %d, want 2 and 1", n, m)
		}
	})

	t.Run("redrive", func(t *testing.T) {
		b, qid := open(t)
		d, s := qid("d.fifo"), qid("s.fifo")
		sendOne(t, b, "s.fifo", "g", "m0")
		receiveFrom(t, b, "s.fifo", 0)
		receiveFrom(t, b, "s.fifo", 0) // moves m0 to d.fifo
		sendOne(t, b, "s.fifo", "g", "m1")
		sendOne(t, b, "s.fifo", "h", "x")
		// m0 back into s.fifo's group g.
		tx := holdGroup(t, b, s, "g")
		res, err := b.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "d.fifo"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Moved != 0 || res.Remaining != 1 {
			t.Fatalf("with s.fifo's group g busy, a redrive moved %d and left %d, want 0 and 1", res.Moved, res.Remaining)
		}
		tx.Rollback(ctx)
		if res, err = b.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "d.fifo"}); err != nil {
			t.Fatal(err)
		}
		if res.Moved != 1 || res.Remaining != 0 || b.depth(t, d.id) != 0 || b.depth(t, s.id) != 3 {
			t.Fatalf("once s.fifo's group g is free, a redrive moved %d and left %d; d.fifo holds %d, s.fifo %d, want 1, 0, 0, 3",
				res.Moved, res.Remaining, b.depth(t, d.id), b.depth(t, s.id))
		}
	})

	t.Run("move task", func(t *testing.T) {
		b, qid := open(t)
		d, s := qid("d.fifo"), qid("s.fifo")
		sendOne(t, b, "s.fifo", "g", "m0")
		receiveFrom(t, b, "s.fifo", 0)
		receiveFrom(t, b, "s.fifo", 0) // moves m0 to d.fifo
		tx := holdGroup(t, b, s, "g")
		if _, err := b.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: d.arn}); err != nil {
			t.Fatal(err)
		}
		task := func() tidemq.MessageMoveTask {
			ts, err := b.ListMessageMoveTasks(ctx, tidemq.ListMoveTasksParams{SourceARN: d.arn})
			if err != nil || len(ts) != 1 {
				t.Fatalf("%d tasks: %v", len(ts), err)
			}
			return ts[0]
		}
		// Each step writes the task's row: a trigger counts the writes.
		// (The row's xmin does not: it follows every transaction of the
		// whole cluster, and other tests share it.) A step that moved
		// nothing waits idleStepRetry before the next, rather than
		// spinning.
		for _, q := range []string{
			`CREATE TABLE test_task_steps (n bigint NOT NULL)`,
			`INSERT INTO test_task_steps VALUES (0)`,
			`CREATE FUNCTION test_count_step() RETURNS trigger LANGUAGE plpgsql AS $$
			 BEGIN UPDATE test_task_steps SET n = n + 1; RETURN NULL; END $$`,
			`CREATE TRIGGER test_count_step AFTER UPDATE ON move_tasks FOR EACH ROW EXECUTE FUNCTION test_count_step()`,
		} {
			if _, err := b.pool.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		steps := func() int64 {
			var n int64
			if err := b.pool.QueryRow(ctx, `SELECT n FROM test_task_steps`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// A spinning task would run hundreds of steps in the window; a
		// loaded machine only runs fewer, so the bound holds there too.
		// That it keeps looking is waited for, not timed: on a shared CI
		// machine one step's commit can take longer than the window.
		const window = 500 * time.Millisecond
		first, start := steps(), time.Now()
		time.Sleep(window)
		n := steps() - first
		if elapsed := time.Since(start); n > int64(elapsed/idleStepRetry)+10 {
			t.Errorf("the task ran %d steps in %v while nothing could move, want one per %v at most", n, elapsed, idleStepRetry)
		}
		for deadline := time.Now().Add(10 * time.Second); steps()-first < n+2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the task ran %d steps in 10 s while nothing could move; want it to keep looking", steps()-first-n)
			}
		}
		if got := task(); got.Status != tidemq.MoveTaskRunning || got.ApproximateNumberOfMessagesMoved != 0 || b.depth(t, d.id) != 1 {
			t.Fatalf("with s.fifo's group g busy, the task is %s with %d moved, d.fifo holds %d; want RUNNING, 0, 1",
				got.Status, got.ApproximateNumberOfMessagesMoved, b.depth(t, d.id))
		}
		tx.Rollback(ctx)
		for deadline := time.Now().Add(10 * time.Second); task().Status == tidemq.MoveTaskRunning; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the task still runs 10 s after s.fifo's group g is free")
			}
		}
		if got := task(); got.Status != tidemq.MoveTaskCompleted || got.ApproximateNumberOfMessagesMoved != 1 || b.depth(t, d.id) != 0 || b.depth(t, s.id) != 1 {
			t.Fatalf("the task is %s with %d moved; d.fifo holds %d, s.fifo %d; want COMPLETED, 1, 0, 1",
				got.Status, got.ApproximateNumberOfMessagesMoved, b.depth(t, d.id), b.depth(t, s.id))
		}
	})

	t.Run("capture of expired messages", func(t *testing.T) {
		b, qid := open(t)
		c, capq := qid("c.fifo"), qid("cap.fifo")
		sendOne(t, b, "c.fifo", "g", "e0")
		sendOne(t, b, "c.fifo", "g", "e1")
		b.clock.(*clocktest.Clock).Advance(2 * time.Minute)
		tx := holdGroup(t, b, capq, "g")
		peek := func() {
			if _, err := b.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "c.fifo"}); err != nil {
				t.Fatal(err)
			}
		}
		peek()
		if n, m := b.depth(t, c.id), b.depth(t, capq.id); n != 2 || m != 0 {
			t.Fatalf("with cap.fifo's group g busy, c.fifo holds %d messages and cap.fifo %d, want 2 and 0", n, m)
		}
		tx.Rollback(ctx)
		peek()
		if n, m := b.depth(t, c.id), b.depth(t, capq.id); n != 0 || m != 2 {
			t.Fatalf("once cap.fifo's group g is free, c.fifo holds %d messages and cap.fifo %d, want 0 and 2", n, m)
		}
		if got := bodies(receiveFrom(t, b, "cap.fifo", 30)); len(got) != 2 || got[0] != "e0" || got[1] != "e1" {
			t.Fatalf("cap.fifo served %v, want e0, e1", got)
		}
	})
}
