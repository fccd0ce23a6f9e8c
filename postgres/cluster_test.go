package postgres_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
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
	"github.com/tidemq/tidemq/trigger"
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
	dsn, pool, shared := sharedKV(t)
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
	topic, err := a.CreateTopic(context.Background(), sns.CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(context.Background(), sns.SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: info.ARN}); err != nil {
		t.Fatal(err)
	}
	broker.fail.Store(true)
	if _, err := a.Publish(ctx, sns.PublishParams{TopicARN: topic.ARN, Message: "left behind"}); err != nil {
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

// Two nodes (two brokers, two trigger managers on one KV, two lease
// holders on the fake clock) each run `Hold("leader", Lead)`: a trigger
// created on A runs on one node only; when that node stops, the other
// takes over at its next try and runs it, and every message is processed
// once.
func TestClusterTriggerRunsOnOneNodeAndFailsOver(t *testing.T) {
	ctx := context.Background()
	dsn, pool, shared := sharedKV(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	var mu sync.Mutex
	seen := map[string]int{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev trigger.Event
		_ = json.NewDecoder(r.Body).Decode(&ev)
		mu.Lock()
		for _, rec := range ev.Records {
			seen[rec.Body]++
		}
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(target.Close)
	count := func(body string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[body]
	}
	type node struct {
		b    *postgres.Broker
		m    *trigger.Manager
		stop context.CancelFunc
		done chan struct{}
	}
	var nodes [2]*node
	for i, name := range []string{"a", "b"} {
		n := &node{b: open(t, dsn, tidemq.SystemClock{}), done: make(chan struct{})}
		t.Cleanup(func() { n.b.Close() })
		var err error
		n.m, err = trigger.NewManager(trigger.Options{Broker: n.b, Store: shared.Share(), Follow: true, WaitTimeSeconds: 1, Logger: quiet()})
		if err != nil {
			t.Fatal(err)
		}
		n.m.Start()
		t.Cleanup(func() { n.m.Close(ctx) })
		l := newLeases(t, pool, name, clk)
		var hctx context.Context
		hctx, n.stop = context.WithCancel(ctx)
		go func() { defer close(n.done); l.Hold(hctx, "leader", n.m.Lead) }()
		t.Cleanup(func() { n.stop(); <-n.done })
		nodes[i] = n
		if i == 0 {
			clk.WaitForTimers(1, 10*time.Second) // a holds and waits to renew
		}
	}
	a, b := nodes[0], nodes[1]
	if _, err := a.b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "jobs", Attributes: map[string]string{"VisibilityTimeout": "60"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.m.Create(ctx, trigger.Config{Name: "t", Queue: "jobs", Target: trigger.Target{URL: target.URL}, BatchSize: 1}); err != nil {
		t.Fatal(err)
	}
	send := func(n *node, body string) {
		t.Helper()
		if _, err := n.b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "jobs", Entries: []tidemq.SendEntry{{ID: "1", Body: body}}}); err != nil {
			t.Fatal(err)
		}
	}
	invocations := func(m *trigger.Manager) uint64 {
		for _, s := range m.Stats() {
			if s.Name == "t" {
				return s.Invocations
			}
		}
		return 0
	}
	send(b, "one")
	waitFor(t, "the trigger runs", func() bool { return count("one") == 1 })
	if err := b.m.Reload(); err != nil { // b knows it, and does not run it
		t.Fatal(err)
	}
	send(b, "two")
	waitFor(t, "the trigger runs again", func() bool { return count("two") == 1 })
	waitFor(t, "a counted both", func() bool { return invocations(a.m) == 2 })
	if n := invocations(b.m); n != 0 {
		t.Fatalf("b ran %d invocations while a leads", n)
	}
	// a stops: it releases the lease, b takes it at its next try.
	a.stop()
	<-a.done
	clk.Advance(5 * time.Second)
	send(a, "three")
	waitFor(t, "b runs the trigger", func() bool { return count("three") == 1 })
	waitFor(t, "b counted it", func() bool { return invocations(b.m) == 1 })
	for _, body := range []string{"one", "two", "three"} {
		if n := count(body); n != 1 {
			t.Errorf("%q processed %d times", body, n)
		}
	}
}

// sharedKV is one cluster's shared state on a fresh schema: its DSN, a
// pool on it, and postgres.KV (migrated) to Share between the nodes.
func sharedKV(t *testing.T) (string, *pgxpool.Pool, *storage.Shared) {
	t.Helper()
	dsn, pool := pgtest.SchemaPool(t)
	kv, err := postgres.OpenKV(context.Background(), postgres.Options{Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	return dsn, pool, storage.Share(kv)
}
