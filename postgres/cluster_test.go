package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
)

// flakyBroker fails every send while fail is set.
type flakyBroker struct {
	tidemq.Broker
	fail atomic.Bool
}

func (b *flakyBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	if b.fail.Load() {
		return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "down")
	}
	return b.Broker.SendMessages(ctx, p)
}

// Two topic services share postgres.KV, take record ids from the
// sequence and tell live nodes by their node lease: a publish that node A
// could not deliver before it "crashed" (closed with its retry pending,
// its node lease left to expire) is delivered by B, running Redeliver,
// exactly once, and only after A's lease expired on the clock.
func TestClusterOutboxOfACrashedNodeDeliveredOnceOnPostgres(t *testing.T) {
	ctx := context.Background()
	dsn, _ := pgtest.Schema(t)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	kv, err := postgres.OpenKV(ctx, postgres.Options{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	shared := storage.Share(kv)
	broker := &flakyBroker{Broker: open(t, dsn, tidemq.SystemClock{})}
	t.Cleanup(func() { broker.Close() })
	if _, err := broker.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	info, err := broker.GetQueue(ctx, tidemq.GetQueueParams{Name: "q"})
	if err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	leasesA, leasesB := newLeases(t, pool, "a", clk), newLeases(t, pool, "b", clk)
	if _, ok, err := leasesA.Acquire(ctx, postgres.NodeLease("a")); !ok || err != nil {
		t.Fatalf("a's node lease: %v %v", ok, err)
	}
	svc := func(node string) *sns.Service {
		s, err := sns.Open(sns.Options{Broker: broker, Store: shared.Share(), Clock: clk, Logger: quiet(),
			NodeID: node, RecordIDs: postgres.RecordIDs(pool)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a := svc("a")
	topic, err := a.CreateTopic("t", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(topic.ARN, "sqs", info.ARN, nil); err != nil {
		t.Fatal(err)
	}
	broker.fail.Store(true)
	if _, err := a.Publish(ctx, sns.PublishInput{TopicARN: topic.ARN, Message: "left behind"}); err != nil {
		t.Fatal(err)
	}
	a.Close() // the retry is pending: the record stays
	broker.fail.Store(false)

	b := svc("b")
	alive := func(ctx context.Context, node string) (bool, error) {
		return leasesB.Alive(ctx, postgres.NodeLease(node))
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Redeliver(rctx, alive, 5*time.Second) }()
	defer func() { stop(); <-done }()
	depth := func() int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM messages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	scan := func() { // one more scan of Redeliver, done when it waits again
		t.Helper()
		if !clk.WaitForTimers(1, 10*time.Second) {
			t.Fatal("Redeliver does not wait")
		}
		clk.Advance(5 * time.Second)
		if !clk.WaitForTimers(1, 10*time.Second) {
			t.Fatal("Redeliver did not scan")
		}
	}
	scan() // a's lease has 10s left
	if n := depth(); n != 0 {
		t.Fatalf("%d messages delivered for a node still alive", n)
	}
	scan()
	scan() // 15s: a's lease expired
	waitFor(t, "the publish delivered", func() bool { return depth() == 1 })
	scan()
	scan()
	if n := depth(); n != 1 {
		t.Fatalf("%d messages in the queue, want exactly 1", n)
	}
	var left int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM kv WHERE key >= 'sns/d/' AND key < 'sns/e'`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d outbox deliveries left (%v)", left, err)
	}
}
