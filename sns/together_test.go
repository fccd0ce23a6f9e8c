package sns

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// spyBroker counts the sends that reach the engine under it, by kind.
type spyBroker struct {
	tidemq.Broker
	sends, together atomic.Int64
}

func (b *spyBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.sends.Add(1)
	return b.Broker.SendMessages(ctx, p)
}

func (b *spyBroker) SendToQueues(ctx context.Context, ps []tidemq.SendMessagesParams) ([][]tidemq.SendResult, error) {
	b.together.Add(1)
	return tidemq.SendToQueues(ctx, b.Broker, ps)
}

// plainBroker hides its broker's SendToQueues.
type plainBroker struct{ tidemq.Broker }

func (b plainBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	return b.Broker.SendMessages(ctx, p)
}

// TestFanOutInOneWrite: a fan-out whose deliveries all go to SQS queues is
// one SendToQueues of the engine, without an outbox record, each queue
// getting what it would have got alone (its envelope names its own
// subscription; a raw subscription gets the message). If the engine
// refuses any delivery (a queue that is gone), nothing is sent that way:
// the publish is recorded and each delivery meets its own fate, the good
// ones delivered once. A broker without SendToQueues gets the recorded
// path too.
func TestFanOutInOneWrite(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	eng, err := engine.Open(engine.Options{Store: mem.New(), SweepInterval: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for _, q := range []string{"a", "b", "c"} {
		if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	spy := &spyBroker{Broker: eng}
	st := &recordCounter{Store: mem.New()}
	s, err := Open(Options{Broker: spy, Store: st, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic, _ := s.CreateTopic(ctx, CreateTopicParams{Name: "fan"})
	subs := map[string]string{} // queue -> subscription ARN
	for _, q := range []string{"a", "b", "c"} {
		var attrs map[string]string
		if q == "c" {
			attrs = map[string]string{"RawMessageDelivery": "true"}
		}
		sub, err := s.Subscribe(ctx, SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + q, Attributes: attrs})
		if err != nil {
			t.Fatal(err)
		}
		subs[q] = sub.ARN
	}
	ten := 10
	receive := func(q string) []string {
		t.Helper()
		msgs, err := eng.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: q, MaxNumberOfMessages: &ten})
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, m := range msgs {
			bodies = append(bodies, m.Body)
		}
		return bodies
	}
	if _, err := s.Publish(ctx, PublishParams{TopicARN: topic.ARN, Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	if n, m, r := spy.together.Load(), spy.sends.Load(), st.records.Load(); n != 1 || m != 0 || r != 0 {
		t.Fatalf("a fan-out to three queues: %d SendToQueues, %d SendMessages, %d outbox records; want 1, 0, 0", n, m, r)
	}
	for _, q := range []string{"a", "b"} {
		got := receive(q)
		if len(got) != 1 {
			t.Fatalf("queue %s got %d messages, want 1", q, len(got))
		}
		var env map[string]string
		if err := json.Unmarshal([]byte(got[0]), &env); err != nil {
			t.Fatal(err)
		}
		if env["Message"] != "hello" || !strings.HasSuffix(env["UnsubscribeURL"], "SubscriptionArn="+subs[q]) {
			t.Fatalf("queue %s got %s", q, got[0])
		}
	}
	if got := receive("c"); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("the raw queue got %v", got)
	}
	if st := s.Stats(); st.Delivered != 3 {
		t.Fatalf("stats %+v, want 3 delivered", st)
	}

	// A PublishBatch whose entries each go to one queue: one write too,
	// in the entries' order.
	single, _ := s.CreateTopic(ctx, CreateTopicParams{Name: "single"})
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: single.ARN, Protocol: "sqs", Endpoint: testQueueARN + "c",
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	var entries []PublishBatchEntry
	for _, m := range []string{"one", "two", "three"} {
		entries = append(entries, PublishBatchEntry{ID: m, PublishParams: PublishParams{Message: m}})
	}
	if _, err := s.PublishBatch(ctx, PublishBatchParams{TopicARN: single.ARN, Entries: entries}); err != nil {
		t.Fatal(err)
	}
	if n, m := spy.together.Load(), spy.sends.Load(); n != 2 || m != 0 {
		t.Fatalf("a PublishBatch of three to one queue: %d more SendToQueues, %d SendMessages; want 1, 0", n-1, m)
	}
	if got := receive("c"); strings.Join(got, " ") != "one two three" {
		t.Fatalf("queue c got %v, want [one two three]", got)
	}

	// A queue the engine does not have: nothing goes in one write, the
	// publish is recorded, a and b get it once, gone's is undeliverable.
	if _, err := s.Subscribe(ctx, SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, PublishParams{TopicARN: topic.ARN, Message: "again"}); err != nil {
		t.Fatal(err)
	}
	if r := st.records.Load(); r != 1 {
		t.Fatalf("a refused fan-out wrote %d outbox records, want 1", r)
	}
	for _, q := range []string{"a", "b", "c"} {
		if got := receive(q); len(got) != 1 || !strings.Contains(got[0], "again") {
			t.Fatalf("queue %s got %v after the refused write, want the message once", q, got)
		}
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, st) == 0 })
	if st := s.Stats(); st.Delivered != 9 || st.Undeliverable != 1 {
		t.Fatalf("stats %+v, want 9 delivered and 1 undeliverable", st)
	}

	// A broker without SendToQueues: recorded first, as before.
	s2, err := Open(Options{Broker: plainBroker{eng}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	topic2, _ := s2.CreateTopic(ctx, CreateTopicParams{Name: "fan"})
	for _, q := range []string{"a", "b"} {
		if _, err := s2.Subscribe(ctx, SubscribeParams{TopicARN: topic2.ARN, Protocol: "sqs", Endpoint: testQueueARN + q}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s2.Publish(ctx, PublishParams{TopicARN: topic2.ARN, Message: "plain"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a", "b"} {
		if got := receive(q); len(got) != 1 {
			t.Fatalf("queue %s got %d messages from a broker without SendToQueues, want 1", q, len(got))
		}
	}
	if !s2.noTogether.Load() {
		t.Fatal("the service did not note that its broker cannot send to several queues at once")
	}
}
