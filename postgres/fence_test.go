package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/storage"
)

// A leader paused past its lease (a took it, the clock passed its expiry,
// b took over) comes back with its old token: every write it makes with
// it (a receive, a delete, a KV commit) is refused by the database and
// changes nothing, while b's writes go through; a release then a new
// taking never reuses a token.
func TestFenceRefusesTheWritesOfAStaleLeader(t *testing.T) {
	ctx := context.Background()
	pool := leasePool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	a, b := newLeases(t, pool, "a", clk), newLeases(t, pool, "b", clk)
	br, err := postgres.Open(ctx, postgres.Options{Pool: pool, Clock: clk, SweepInterval: -1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := br.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "jobs"}); err != nil {
		t.Fatal(err)
	}
	send := func(body string) {
		t.Helper()
		if _, err := br.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "jobs", Entries: []tidemq.SendEntry{{ID: "1", Body: body}}}); err != nil {
			t.Fatal(err)
		}
	}
	fence := func(l *postgres.Leases, lease postgres.Lease) context.Context {
		return tidemq.WithFence(ctx, tidemq.Fence{Lease: "leader", Holder: l.Holder(), Token: lease.Generation})
	}
	one := new(1)
	receive := func(ctx context.Context) ([]*tidemq.Message, error) {
		return br.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "jobs", MaxNumberOfMessages: one})
	}

	la, ok, err := a.Acquire(ctx, "leader")
	if err != nil || !ok {
		t.Fatalf("a takes the lease: %v %v", ok, err)
	}
	actx := fence(a, la)
	send("first")
	msgs, err := receive(actx)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the leader's fenced receive: %d messages, %v", len(msgs), err)
	}
	held := msgs[0]

	// a is paused: its lease passes, b takes over.
	clk.Advance(postgres.DefaultLeaseTTL + time.Second)
	lb, ok, err := b.Acquire(ctx, "leader")
	if err != nil || !ok || lb.Generation <= la.Generation {
		t.Fatalf("b takes the expired lease: ok %v err %v, token %d after %d", ok, err, lb.Generation, la.Generation)
	}
	bctx := fence(b, lb)
	send("second")

	// a resumes with its old token.
	if _, err := receive(actx); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("a's receive after the takeover: %v, want ErrFenced", err)
	}
	if _, err := br.DeleteMessages(actx, tidemq.DeleteMessagesParams{Queue: "jobs",
		Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: held.ReceiptHandle}}}); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("a's delete after the takeover: %v, want ErrFenced", err)
	}
	batch := kv.NewBatch()
	batch.Set([]byte("sns/test-claim"), []byte("a"))
	if err := storage.CommitSyncContext(actx, batch); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("a's KV commit after the takeover: %v, want ErrFenced", err)
	}
	if found, err := storage.Has(kv, []byte("sns/test-claim")); err != nil || found {
		t.Errorf("a's refused KV commit is in the store (%v)", err)
	}
	// The SNS store writes through a namespace (storage.Prefix): the fence
	// must reach the KV through it.
	ns := storage.Prefix(kv, "sns/")
	batch = ns.NewBatch()
	batch.Set([]byte("test-claim-ns"), []byte("a"))
	if err := storage.CommitSyncContext(actx, batch); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("a's KV commit through a namespace after the takeover: %v, want ErrFenced", err)
	}
	if found, err := storage.Has(ns, []byte("test-claim-ns")); err != nil || found {
		t.Errorf("a's refused commit through a namespace is in the store (%v)", err)
	}
	if err := a.Check(actx); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("a's Check after the takeover: %v, want ErrFenced", err)
	}
	// Nothing a tried changed anything: b receives the second message
	// (the first is still in flight, a's delete refused).
	msgs, err = receive(bctx)
	if err != nil || len(msgs) != 1 || msgs[0].Body != "second" {
		t.Fatalf("b's receive: %v, %v; want the second message", msgs, err)
	}
	batch = kv.NewBatch()
	batch.Set([]byte("sns/test-claim"), []byte("b"))
	if err := storage.CommitSyncContext(bctx, batch); err != nil {
		t.Errorf("b's KV commit: %v", err)
	}
	attrs, err := br.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "jobs", Names: []string{tidemq.AttrApproximateNumberOfMessagesNotVisible}})
	if err != nil || attrs[tidemq.AttrApproximateNumberOfMessagesNotVisible] != "2" {
		t.Errorf("in flight: %v (%v); want both messages (a's delete refused)", attrs, err)
	}
	// A node holding nothing (token 0) is refused too.
	if err := a.Check(tidemq.WithFence(ctx, a.Fence("leader"))); !errors.Is(err, tidemq.ErrFenced) {
		t.Errorf("Check with no lease held: %v, want ErrFenced", err)
	}
	// Unfenced writes (client requests) are not checked.
	send("third")

	// b releases; a takes the lease again: a new token, never b's or its
	// own old one.
	if err := b.Release(ctx, "leader"); err != nil {
		t.Fatal(err)
	}
	la2, ok, err := a.Acquire(ctx, "leader")
	if err != nil || !ok || la2.Generation <= lb.Generation {
		t.Fatalf("a takes the released lease: ok %v err %v, token %d after b's %d", ok, err, la2.Generation, lb.Generation)
	}
	for _, c := range []context.Context{actx, bctx} {
		if err := a.Check(c); !errors.Is(err, tidemq.ErrFenced) {
			t.Errorf("an older token after a release and a new taking: %v, want ErrFenced", err)
		}
	}
	if err := a.Check(fence(a, la2)); err != nil {
		t.Errorf("a's new token: %v", err)
	}
}

// Hold's job carries the lease's fence in its context, and Fence names
// the token while the job runs, 0 once it stopped.
func TestLeaseHoldJobCarriesItsFence(t *testing.T) {
	pool := leasePool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	a := newLeases(t, pool, "a", clk)
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Hold(ctx, "leader", func(ctx context.Context) {
			f, _ := tidemq.FenceOf(ctx)
			got.Store(f)
			<-ctx.Done()
		})
	}()
	waitFor(t, "a runs the job", func() bool { return got.Load() != nil })
	f := got.Load().(tidemq.Fence)
	if f.Lease != "leader" || f.Holder != "a" || f.Token == 0 || a.Fence("leader") != f {
		t.Fatalf("job's fence %+v, Fence %+v", f, a.Fence("leader"))
	}
	if err := a.Check(tidemq.WithFence(context.Background(), f)); err != nil {
		t.Fatalf("the running job's fence is refused: %v", err)
	}
	cancel()
	<-done
	if tok := a.Fence("leader").Token; tok != 0 {
		t.Fatalf("Fence after the job stopped: token %d, want 0", tok)
	}
	if err := a.Check(tidemq.WithFence(context.Background(), f)); !errors.Is(err, tidemq.ErrFenced) {
		t.Fatalf("the stopped job's fence after the release: %v, want ErrFenced", err)
	}
}
