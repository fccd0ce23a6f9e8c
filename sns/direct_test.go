package sns

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// recordCounter counts the outbox records written to a store.
type recordCounter struct {
	storage.Store
	records atomic.Int64
}

func (c *recordCounter) NewBatch() storage.Batch { return &countingBatch{c.Store.NewBatch(), c} }

type countingBatch struct {
	storage.Batch
	c *recordCounter
}

func (b *countingBatch) Set(k, v []byte) {
	if strings.HasPrefix(string(k), Namespace+prefixRecord) {
		b.c.records.Add(1)
	}
	b.Batch.Set(k, v)
}

// TestSingleSQSDeliveryNeedsNoRecord: a publish whose one delivery goes to
// an SQS queue is delivered without an outbox record when it succeeds (the
// queue holds it durably: there is no fan-out left to lose); a fan-out is
// recorded first, and a single delivery that fails is recorded before the
// publish is answered (TestStateIsInTheStoreUnderItsNamespace checks that
// it is delivered after a restart).
func TestSingleSQSDeliveryNeedsNoRecord(t *testing.T) {
	st := &recordCounter{Store: mem.New()}
	broker := &fakeBroker{}
	s, err := Open(Options{Broker: broker, Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one, _ := s.CreateTopic(context.Background(), CreateTopicParams{Name: "one", Attributes: nil, Tags: nil})
	two, _ := s.CreateTopic(context.Background(), CreateTopicParams{Name: "two", Attributes: nil, Tags: nil})
	for _, sub := range []struct{ topic, queue string }{{one.ARN, "a"}, {two.ARN, "a"}, {two.ARN, "b"}} {
		if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: sub.topic, Protocol: "sqs", Endpoint: testQueueARN + sub.queue}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := s.Publish(ctx, PublishParams{TopicARN: one.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := st.records.Load(); n != 0 || broker.count("a") != 1 {
		t.Fatalf("a delivered single publish wrote %d outbox records (queue a got %d)", n, broker.count("a"))
	}
	if _, err := s.Publish(ctx, PublishParams{TopicARN: two.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := st.records.Load(); n != 1 || broker.count("b") != 1 {
		t.Fatalf("a fan-out wrote %d outbox records, want 1 (queue b got %d)", n, broker.count("b"))
	}
	one2, _ := s.CreateTopic(context.Background(), CreateTopicParams{Name: "three", Attributes: nil, Tags: nil})
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: one2.ARN, Protocol: "sqs", Endpoint: testQueueARN + "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, PublishParams{TopicARN: one2.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if n := st.records.Load(); n != 2 {
		t.Fatalf("a failed single delivery was not recorded: %d outbox records, want 2", n)
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, st) == 0 })
}
