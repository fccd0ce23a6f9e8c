package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// Two deployments in two schemas of one database (README: "give it a
// database, or a schema through search_path, of its own") share the FIFO
// groups' locks: an advisory lock is the database's, and fifoGroupKey is
// the queue's id (each schema numbers its queues from 1) and the group
// id's hash, without the schema the registry's and the migrations' locks
// name. So while deployment A works on its group g, deployment B's
// receives skip B's own group g and its sends to g wait.
func TestFIFOGroupLocksAreTheSchemas(t *testing.T) {
	ctx := context.Background()
	openIn := func() *Broker {
		dsn, _ := pgtest.Schema(t)
		b, err := Open(ctx, Options{DSN: dsn, Clock: tidemq.SystemClock{}, SweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "x.fifo", Attributes: map[string]string{
			tidemq.AttrFifoQueue: "true", tidemq.AttrContentBasedDeduplication: "true"}}); err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := openIn(), openIn()
	qa, err := a.queueFor(ctx, nil, "x.fifo")
	if err != nil {
		t.Fatal(err)
	}
	qb, err := b.queueFor(ctx, nil, "x.fifo")
	if err != nil {
		t.Fatal(err)
	}
	if qa.id != qb.id {
		t.Skipf("the two schemas' queues have ids %d and %d", qa.id, qb.id)
	}
	if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "x.fifo", Entries: []tidemq.SendEntry{{Body: "b-1", MessageGroupID: "g"}}}); err != nil {
		t.Fatal(err)
	}
	// Deployment A in the middle of a send to or a receive from its g.
	tx := holdGroup(t, a, qa, "g")
	ten, zero := 10, 0
	ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "x.fifo", MaxNumberOfMessages: &ten, WaitTimeSeconds: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 {
		t.Errorf("deployment B's receive got %d messages while deployment A held its own group g, want b-1", len(ms))
	}
	sent := make(chan error, 1)
	go func() {
		_, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "x.fifo", Entries: []tidemq.SendEntry{{Body: "b-2", MessageGroupID: "g"}}})
		sent <- err
	}()
	select {
	case err := <-sent:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Errorf("deployment B's send to its group g waited for deployment A's lock of A's group g")
		_ = tx.Rollback(ctx)
		<-sent
	}
}
