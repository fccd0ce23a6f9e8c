package sns

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// registryStores are the stores two nodes share in the registry tests:
// one kept in memory and Pebble (PostgreSQL: postgres/cluster_test.go and
// the e2e tests), which change the registry through the same storage.Update.
var registryStores = map[string]func(t *testing.T) storage.Store{
	"mem": func(t *testing.T) storage.Store { return mem.New() },
	"pebble": func(t *testing.T) storage.Store {
		st, err := pebble.Open(t.TempDir(), pebble.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return st
	},
}

// twoNodes opens services A and B on one store, both knowing what setup
// made on A; neither reloads afterwards (the clock does not move), so B's
// copy of the registry stays stale: what B writes must be computed from
// the store.
func twoNodes(t *testing.T, open func(t *testing.T) storage.Store, setup func(a *Service)) (a, b *Service, broker *fakeBroker) {
	st, ids := open(t), new(atomic.Uint64)
	shared := storage.Share(st)
	t.Cleanup(func() { shared.Close() })
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	broker = &fakeBroker{}
	a = clusterNode(t, "a", shared.Share(), ids, broker, clk)
	setup(a)
	b = clusterNode(t, "b", shared.Share(), ids, broker, clk)
	return a, b, broker
}

// The lost updates of issue 26, on each store: a node acting on a stale
// copy of the registry neither brings back what another node deleted, nor
// drops another node's attribute, nor doubles a subscription, nor replaces
// a topic's attributes.
func TestRegistryChangesAreComputedFromTheStore(t *testing.T) {
	for name, open := range registryStores {
		t.Run(name, func(t *testing.T) {
			var topics [5]*Topic
			var subs [5]*Subscription
			a, b, broker := twoNodes(t, open, func(a *Service) {
				for i := range topics {
					var err error
					if topics[i], err = a.CreateTopic(context.Background(), CreateTopicParams{Name: "t" + string(rune('1'+i)), Attributes: nil, Tags: nil}); err != nil {
						t.Fatal(err)
					}
					if subs[i], err = a.Subscribe(context.Background(), SubscribeParams{TopicARN: topics[i].ARN, Protocol: "sqs", Endpoint: testQueueARN + "q" + string(rune('1'+i))}); err != nil {
						t.Fatal(err)
					}
				}
			})
			notFound := func(what string, err error) {
				t.Helper()
				if !tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
					t.Errorf("%s: %v, want NotFound", what, err)
				}
			}

			// 1. Unsubscribe on A, SetSubscriptionAttributes on B.
			if err := a.Unsubscribe(context.Background(), UnsubscribeParams{SubscriptionARN: subs[0].ARN}); err != nil {
				t.Fatal(err)
			}
			notFound("1. SetSubscriptionAttributes on B", b.SetSubscriptionAttributes(context.Background(), SetSubscriptionAttributesParams{SubscriptionARN: subs[0].ARN, AttributeName: "RawMessageDelivery", AttributeValue: "true"}))
			if err := b.Reload(); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Publish(context.Background(), PublishParams{TopicARN: topics[0].ARN, Message: "m"}); err != nil {
				t.Fatal(err)
			}
			if n := broker.count("q1"); n != 0 {
				t.Errorf("1. the unsubscribed queue got %d messages", n)
			}

			// 2. DeleteTopic on A, SetTopicAttributes on B.
			if err := a.DeleteTopic(context.Background(), DeleteTopicParams{TopicARN: topics[1].ARN}); err != nil {
				t.Fatal(err)
			}
			notFound("2. SetTopicAttributes on B", b.SetTopicAttributes(context.Background(), SetTopicAttributesParams{TopicARN: topics[1].ARN, AttributeName: "DisplayName", AttributeValue: "back"}))
			_, err := b.GetTopicAttributes(context.Background(), GetTopicAttributesParams{TopicARN: topics[1].ARN})
			notFound("2. the deleted topic on B", err)

			// 3. DeleteTopic on A, Subscribe on B.
			if err := a.DeleteTopic(context.Background(), DeleteTopicParams{TopicARN: topics[2].ARN}); err != nil {
				t.Fatal(err)
			}
			_, err = b.Subscribe(context.Background(), SubscribeParams{TopicARN: topics[2].ARN, Protocol: "sqs", Endpoint: testQueueARN + "other"})
			notFound("3. Subscribe on B", err)

			// 4. The same Subscribe on A and on B.
			x, err := a.Subscribe(context.Background(), SubscribeParams{TopicARN: topics[3].ARN, Protocol: "sqs", Endpoint: testQueueARN + "twice"})
			if err != nil {
				t.Fatal(err)
			}
			y, err := b.Subscribe(context.Background(), SubscribeParams{TopicARN: topics[3].ARN, Protocol: "sqs", Endpoint: testQueueARN + "twice"})
			if err != nil {
				t.Fatal(err)
			}
			if x.ARN != y.ARN {
				t.Errorf("4. one Subscribe on each node made two subscriptions: %s, %s", x.ARN, y.ARN)
			}

			// 5. FilterPolicy on A, RawMessageDelivery on B.
			if err := a.SetSubscriptionAttributes(context.Background(), SetSubscriptionAttributesParams{SubscriptionARN: subs[4].ARN, AttributeName: "FilterPolicy", AttributeValue: `{"k":["v"]}`}); err != nil {
				t.Fatal(err)
			}
			if err := b.SetSubscriptionAttributes(context.Background(), SetSubscriptionAttributesParams{SubscriptionARN: subs[4].ARN, AttributeName: "RawMessageDelivery", AttributeValue: "true"}); err != nil {
				t.Fatal(err)
			}
			for _, n := range []*Service{a, b} {
				if err := n.Reload(); err != nil {
					t.Fatal(err)
				}
				attrs, err := n.GetSubscriptionAttributes(context.Background(), GetSubscriptionAttributesParams{SubscriptionARN: subs[4].ARN})
				if err != nil {
					t.Fatal(err)
				}
				if attrs["FilterPolicy"] != `{"k":["v"]}` || attrs["RawMessageDelivery"] != "true" {
					t.Errorf("5. FilterPolicy %q, RawMessageDelivery %q: want both", attrs["FilterPolicy"], attrs["RawMessageDelivery"])
				}
			}

			// 6. CreateTopic of one name with different attributes.
			if _, err := a.CreateTopic(context.Background(), CreateTopicParams{Name: "six", Attributes: map[string]string{"DisplayName": "A"}, Tags: nil}); err != nil {
				t.Fatal(err)
			}
			_, err = b.CreateTopic(context.Background(), CreateTopicParams{Name: "six", Attributes: map[string]string{"DisplayName": "B"}, Tags: nil})
			if !tidemq.HasCode(err, tidemq.ErrSNSInvalidParameter) || err.Error() == "" {
				t.Errorf("6. CreateTopic on B with other attributes: %v, want InvalidParameter", err)
			} else if e, ok := err.(*tidemq.Error); !ok || e.Message != "Invalid parameter: Attributes Reason: Topic already exists with different attributes" {
				t.Errorf("6. the refusal says %v", err)
			}
			if got, err := b.CreateTopic(context.Background(), CreateTopicParams{Name: "six", Attributes: map[string]string{"DisplayName": "A"}, Tags: nil}); err != nil || got.Attributes["DisplayName"] != "A" {
				t.Errorf("6. CreateTopic on B with A's attributes: %+v, %v", got, err)
			}
			if _, err := b.CreateTopic(context.Background(), CreateTopicParams{Name: "six", Attributes: nil, Tags: nil}); err != nil {
				t.Errorf("6. CreateTopic on B with no attributes: %v, want the topic", err)
			}
		})
	}
}

// A FIFO topic deduplicates and numbers publishes across the nodes: a
// duplicate published through B of what A took is answered as the
// original, and B's sequence numbers follow A's whatever B's own clock.
func TestFIFODedupAndSequenceAcrossNodes(t *testing.T) {
	for name, open := range registryStores {
		t.Run(name, func(t *testing.T) {
			var topic *Topic
			a, b, broker := twoNodes(t, open, func(a *Service) {
				var err error
				if topic, err = a.CreateTopic(context.Background(), CreateTopicParams{Name: "f.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil}); err != nil {
					t.Fatal(err)
				}
				if _, err := a.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "q.fifo"}); err != nil {
					t.Fatal(err)
				}
			})
			ctx := context.Background()
			in := PublishParams{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "d1"}
			first, err := a.Publish(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			b.seq.Store(0) // B's clock far behind A's
			again, err := b.Publish(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if *again != *first {
				t.Errorf("the duplicate published through B: %+v, want the original %+v", again, first)
			}
			if n := broker.count("q.fifo"); n != 1 {
				t.Errorf("the queue got %d messages, want 1", n)
			}
			in.MessageDeduplicationID = "d2"
			next, err := b.Publish(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if next.SequenceNumber <= first.SequenceNumber || len(next.SequenceNumber) != len(first.SequenceNumber) {
				t.Errorf("B numbered its publish %s after A's %s", next.SequenceNumber, first.SequenceNumber)
			}
		})
	}
}
