package sns

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// clusterNode opens a service named node on the shared store st, with
// record ids from ids, reloading every 2s on clk.
func clusterNode(t *testing.T, node string, st storage.Store, ids *atomic.Uint64, b tidemq.Broker, clk tidemq.Clock) *Service {
	t.Helper()
	s, err := Open(Options{Broker: b, Store: storage.Share(st), Clock: clk, Logger: slog.New(slog.DiscardHandler),
		NodeID: node, RecordIDs: func() (uint64, error) { return ids.Add(1), nil }, Reload: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A topic created on one node is served by another at once, before any
// reload or announcement: a node that misses a topic in memory reads the
// registry before answering NotFound. Subscribe, GetTopicAttributes,
// ListTagsForResource and Publish on the second node right after
// CreateTopic on the first all find it, and a publish on either node
// reaches the subscription made on the other.
func TestClusterTopicsVisibleAtOnce(t *testing.T) {
	st, ids := mem.New(), new(atomic.Uint64)
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	broker := &fakeBroker{}
	a := clusterNode(t, "a", st, ids, broker, clk)
	b := clusterNode(t, "b", st, ids, broker, clk)
	c := clusterNode(t, "c", st, ids, broker, clk)
	top, err := a.CreateTopic(context.Background(), CreateTopicParams{Name: "orders", Attributes: nil, Tags: map[string]string{"team": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	// No reload, no invalidation: the fake clock never moves.
	if _, err := b.Subscribe(context.Background(), SubscribeParams{TopicARN: top.ARN, Protocol: "sqs", Endpoint: testQueueARN + "q"}); err != nil {
		t.Fatalf("Subscribe on b right after CreateTopic on a: %v", err)
	}
	if attrs, err := b.GetTopicAttributes(context.Background(), GetTopicAttributesParams{TopicARN: top.ARN}); err != nil || attrs["TopicArn"] != top.ARN {
		t.Fatalf("GetTopicAttributes on b: %v %v", attrs, err)
	}
	if tags, err := c.ListTagsForResource(context.Background(), ListTagsForResourceParams{ResourceARN: top.ARN}); err != nil || len(tags) != 1 || tags[0].Value != "x" {
		t.Fatalf("ListTagsForResource on c: %v %v", tags, err)
	}
	// c never saw the topic nor b's subscription: its publish reads both.
	if _, err := c.Publish(context.Background(), PublishParams{TopicARN: top.ARN, Message: "m"}); err != nil {
		t.Fatalf("Publish on c: %v", err)
	}
	if got := broker.count("q"); got != 1 {
		t.Fatalf("the queue got %d messages from c's publish, want 1", got)
	}
	// A topic that exists nowhere is still NotFound on every node.
	for _, n := range []*Service{a, b} {
		if _, err := n.GetTopicAttributes(context.Background(), GetTopicAttributesParams{TopicARN: n.TopicARN("nope")}); !tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
			t.Fatalf("a missing topic: %v", err)
		}
		if _, err := n.Subscribe(context.Background(), SubscribeParams{TopicARN: n.TopicARN("nope"), Protocol: "sqs", Endpoint: testQueueARN + "q"}); !tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
			t.Fatalf("Subscribe to a missing topic: %v", err)
		}
	}
	// The reload still brings the rest: a sees b's subscription.
	clk.WaitForTimers(3, 10*time.Second)
	clk.Advance(2 * time.Second)
	waitFor(t, "a sees the subscription", func() bool {
		subs, _ := a.ListSubscriptions(context.Background(), ListSubscriptionsParams{TopicARN: top.ARN})
		return len(subs) == 1
	})
	for _, n := range []*Service{a, b} {
		if _, err := n.Publish(context.Background(), PublishParams{TopicARN: top.ARN, Message: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := broker.count("q"); got != 3 {
		t.Fatalf("the queue got %d messages, want 3", got)
	}
}

// What a node leaves in the outbox (its deliveries kept failing, then it
// stopped) is delivered by the node running Redeliver once that node is
// dead, exactly once, and never while it lives; a third node running it
// later leaves it to the survivor that took it over.
func TestClusterOutboxOfADeadNodeDeliveredOnce(t *testing.T) {
	st, ids := mem.New(), new(atomic.Uint64)
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	broker := &fakeBroker{failDLQ: -1}
	a := clusterNode(t, "a", st, ids, broker, clk)
	top, err := a.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Subscribe(context.Background(), SubscribeParams{TopicARN: top.ARN, Protocol: "sqs", Endpoint: testQueueARN + "dlq"}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := a.Publish(ctx, PublishParams{TopicARN: top.ARN, Message: "pending"}); err != nil {
		t.Fatal(err)
	}
	b := clusterNode(t, "b", st, ids, broker, clk)
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{"a": true, "b": true, "c": true}
	alive := func(_ context.Context, n string) (bool, error) { return live[n], nil }
	if n, err := b.adoptOrphans(ctx, alive); err != nil || n != 0 {
		t.Fatalf("b took %d records of a live node (%v)", n, err)
	}
	// a stops with its delivery still failing: it stays in the outbox.
	a.Close()
	live["a"] = false
	if outboxLen(t, st) == 0 {
		t.Fatal("nothing left in the outbox")
	}
	broker.mu.Lock()
	broker.failDLQ = 0
	broker.mu.Unlock()
	if n, err := b.adoptOrphans(ctx, alive); err != nil || n != 1 {
		t.Fatalf("b took %d records of a dead node (%v), want 1", n, err)
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, st) == 0 })
	c := clusterNode(t, "c", st, ids, broker, clk)
	if n, err := c.adoptOrphans(ctx, alive); err != nil || n != 0 {
		t.Fatalf("c took %d records (%v)", n, err)
	}
	if got := broker.count("dlq"); got != 1 {
		t.Fatalf("delivered %d times, want once", got)
	}
	if st := b.Stats(); st.Recovered != 1 || st.Delivered != 1 {
		t.Errorf("b's stats: %+v", st)
	}
}

// A record taken over by a node that lives is left to it by the next
// holder of the lease; ids from RecordIDs keep two nodes' publishes apart.
func TestClusterTakenOverRecordStaysWithItsNewNode(t *testing.T) {
	st, ids := mem.New(), new(atomic.Uint64)
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	broker := &fakeBroker{failDLQ: -1}
	a := clusterNode(t, "a", st, ids, broker, clk)
	b := clusterNode(t, "b", st, ids, broker, clk)
	top, _ := a.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if _, err := a.Subscribe(context.Background(), SubscribeParams{TopicARN: top.ARN, Protocol: "sqs", Endpoint: testQueueARN + "dlq"}); err != nil {
		t.Fatal(err)
	}
	b.Reload()
	ctx := context.Background()
	for _, n := range []*Service{a, b} {
		if _, err := n.Publish(ctx, PublishParams{TopicARN: top.ARN, Message: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := outboxLen(t, st); got != 4 { // two records, one delivery each
		t.Fatalf("outbox holds %d keys, want 4 (ids must not collide)", got)
	}
	a.Close()
	live := map[string]bool{"b": true, "c": true}
	alive := func(_ context.Context, n string) (bool, error) { return live[n], nil }
	if n, _ := b.adoptOrphans(ctx, alive); n != 1 {
		t.Fatalf("b took %d records, want a's one", n)
	}
	c := clusterNode(t, "c", st, ids, broker, clk)
	if n, _ := c.adoptOrphans(ctx, alive); n != 0 {
		t.Fatalf("c took %d records while b lives", n)
	}
}
