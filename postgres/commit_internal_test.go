package postgres

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

func openInternal(t *testing.T) *Broker {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	b, err := Open(context.Background(), Options{DSN: dsn, Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func (b *Broker) depth(t *testing.T, qid int64) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE queue_id = $1`, qid).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Requests waiting when a committer takes the first are written with it,
// in one statement, and each is answered after that statement committed.
func TestGroupCommitGathersWaitingRequests(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	q, err := b.getQueue(ctx, b.pool, "q", false)
	if err != nil {
		t.Fatal(err)
	}
	// No committer runs yet: the requests wait in the channel.
	b.group.once.Do(func() {
		b.group.reqs = make(chan *writeReq, 64)
		b.group.stopped = make(chan struct{})
	})
	const n = 10
	reqs := make([]*writeReq, n)
	for i := range reqs {
		reqs[i] = &writeReq{done: make(chan error, 1), send: &sendRows{qid: q.id, sender: "s", ids: []string{"id" + strconv.Itoa(i)},
			bodies: []string{"b"}, attrs: [][]byte{nil}, sys: [][]byte{nil}, delays: []int64{0}, sizes: []int{1}, notify: "q"}}
		b.group.reqs <- reqs[i]
	}
	if d := b.depth(t, q.id); d != 0 {
		t.Fatalf("%d messages before a committer ran", d)
	}
	b.group.running.Add(1)
	b.wg.Add(1)
	go b.commitLoop()
	for i, r := range reqs {
		if err := <-r.done; err != nil || r.send.written != 1 {
			t.Fatalf("request %d: %v, written %d", i, err, r.send.written)
		}
	}
	if d := b.depth(t, q.id); d != n {
		t.Fatalf("%d messages after the group, want %d", d, n)
	}
	if s := b.group.statements.Load(); s != 1 {
		t.Fatalf("%d statements for %d waiting requests, want 1", s, n)
	}
}

// One request that cannot be written (its queue is gone) fails alone: the
// others of its group are written.
func TestGroupCommitIsolatesAFailedRequest(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	q, err := b.getQueue(ctx, b.pool, "q", false)
	if err != nil {
		t.Fatal(err)
	}
	send := func(qid int64, id string) *writeReq {
		return &writeReq{done: make(chan error, 1), send: &sendRows{qid: qid, sender: "s", ids: []string{id},
			bodies: []string{"b"}, attrs: [][]byte{nil}, sys: [][]byte{nil}, delays: []int64{0}, sizes: []int{1}, notify: "q"}}
	}
	good1, bad, good2 := send(q.id, "a"), send(q.id+1000, "b"), send(q.id, "c")
	b.commitGroup([]*writeReq{good1, bad, good2})
	if err := <-good1.done; err != nil {
		t.Fatalf("first good request: %v", err)
	}
	if err := <-bad.done; !isForeignKeyViolation(err) {
		t.Fatalf("request for a missing queue: %v, want a foreign key violation", err)
	}
	if err := <-good2.done; err != nil {
		t.Fatalf("second good request: %v", err)
	}
	if d := b.depth(t, q.id); d != 2 {
		t.Fatalf("%d messages, want 2", d)
	}
}

// Concurrent sends and deletes through the group commit: every send is
// answered with its message stored, every delete with its message gone.
func TestGroupCommitUnderConcurrency(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	const senders, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "0", Body: "x"}}})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	q, _ := b.getQueue(ctx, b.pool, "q", false)
	if d := b.depth(t, q.id); d != senders*each {
		t.Fatalf("%d messages, want %d", d, senders*each)
	}
	ten := 10
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: &ten, WaitTimeSeconds: new(int)})
				if err != nil || len(ms) == 0 {
					return
				}
				var entries []tidemq.DeleteEntry
				for k, m := range ms {
					entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(k), ReceiptHandle: m.ReceiptHandle})
				}
				res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: entries, Batch: true})
				if err != nil {
					t.Error(err)
					return
				}
				for _, e := range res {
					if e != nil {
						t.Error(e)
					}
				}
			}
		}()
	}
	wg.Wait()
	if d := b.depth(t, q.id); d != 0 {
		t.Fatalf("%d messages left after receiving and deleting everything", d)
	}
}
