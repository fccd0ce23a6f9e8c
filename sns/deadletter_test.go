package sns

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage/mem"
)

// fakeBroker answers SendMessages only: queue "gone" does not exist, queue
// "busy" always fails for a server-side reason, queue "dlq" fails for a
// server-side reason while failDLQ is positive (each failure counts it
// down; -1 fails forever), queue "full" is throttled (a queue at
// --max-queue-bytes) while failFull is positive, counting it down; every
// other queue accepts.
type fakeBroker struct {
	tidemq.Broker
	mu       sync.Mutex
	failDLQ  int
	failFull int
	sent     map[string][]string // queue -> bodies
}

func (b *fakeBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case p.Queue == "gone":
		return nil, tidemq.NonExistentQueue()
	case p.Queue == "busy":
		return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "the disk is busy")
	case p.Queue == "dlq" && b.failDLQ != 0:
		if b.failDLQ > 0 {
			b.failDLQ--
		}
		return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "the disk is busy")
	case p.Queue == "full" && b.failFull > 0:
		b.failFull--
		return nil, tidemq.Errorf(tidemq.ErrRequestThrottled, "Queue full holds 100 bytes of messages, at the server's limit")
	}
	if b.sent == nil {
		b.sent = map[string][]string{}
	}
	for _, e := range p.Entries {
		b.sent[p.Queue] = append(b.sent[p.Queue], e.Body)
	}
	return []tidemq.SendResult{{ID: p.Entries[0].ID, MessageID: "m"}}, nil
}

func (b *fakeBroker) count(queue string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sent[queue])
}

const testQueueARN = "arn:aws:sqs:us-east-1:000000000000:"

// deadLetterTopic makes a topic whose one subscription is to the missing
// queue "gone", with "dlq" as its dead-letter queue.
func deadLetterTopic(t *testing.T, s *Service) string {
	t.Helper()
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "gone", Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + testQueueARN + `dlq"}`}})
	if err != nil {
		t.Fatal(err)
	}
	return topic.ARN
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A queue that refuses sends because it is full (RequestThrottled, the
// sender's fault by the catalogue) is retried, not dead-lettered: the
// delivery arrives once consumers make room.
func TestThrottledQueueRetried(t *testing.T) {
	b := &fakeBroker{failFull: 2}
	s, err := Open(Options{Broker: b, Logger: slog.New(slog.DiscardHandler),
		SQSRetry: &RetryPolicy{NumRetries: 5, NumNoDelayRetries: 5}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t", Attributes: nil, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "full"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(context.Background(), PublishParams{TopicARN: topic.ARN, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delivery", func() bool { st := s.Stats(); return st.Delivered+st.DeadLettered+st.Lost+st.Undeliverable > 0 })
	if st := s.Stats(); st.Delivered != 1 || st.Retries != 2 || st.DeadLettered != 0 || st.Lost != 0 || st.Undeliverable != 0 || b.count("full") != 1 {
		t.Fatalf("stats = %+v, the queue got %d", st, b.count("full"))
	}
}

// A dead-letter queue that fails for a server-side reason is retried: the
// message reaches it, and is not counted lost.
func TestDeadLetterQueueRetried(t *testing.T) {
	b := &fakeBroker{failDLQ: 2}
	s, err := Open(Options{Broker: b, Logger: slog.New(slog.DiscardHandler),
		SQSRetry: &RetryPolicy{NumRetries: 5, NumNoDelayRetries: 5}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic := deadLetterTopic(t, s)
	if _, err := s.Publish(context.Background(), PublishParams{TopicARN: topic, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead letter", func() bool { return s.Stats().DeadLettered+s.Stats().Lost > 0 })
	if st := s.Stats(); st.DeadLettered != 1 || st.Lost != 0 || st.Retries != 2 || b.count("dlq") != 1 {
		t.Fatalf("stats = %+v, dlq got %d", st, b.count("dlq"))
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, s.opt.Store) == 0 })
}

// A dead letter still failing when the service closes stays in the
// outbox, and the next Open delivers it.
func TestDeadLetterSurvivesClose(t *testing.T) {
	st := mem.New() // Close does not empty it: the next Open reads it
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	b := &fakeBroker{failDLQ: -1}
	o := Options{Broker: b, Store: st, Clock: clk, Logger: slog.New(slog.DiscardHandler),
		SQSRetry: &RetryPolicy{NumRetries: 3, NumMinDelayRetries: 3, MinDelay: time.Second, MaxDelay: time.Second}}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	topic := deadLetterTopic(t, s)
	if _, err := s.Publish(context.Background(), PublishParams{TopicARN: topic, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	if !clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("no dead-letter retry is waiting")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Lost != 0 || st.DeadLettered != 0 {
		t.Fatalf("stats at Close = %+v", st)
	}

	b.mu.Lock()
	b.failDLQ = 0
	b.mu.Unlock()
	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.Stats(); st.Recovered != 1 || st.DeadLettered != 1 || b.count("dlq") != 1 {
		t.Fatalf("after reopening: stats = %+v, dlq got %d", s.Stats(), b.count("dlq"))
	}
	if n := outboxLen(t, st); n != 0 {
		t.Fatalf("outbox holds %d keys", n)
	}
}

// A dead-letter queue that keeps failing past the retry policy loses the
// message, counted.
func TestDeadLetterQueueExhausted(t *testing.T) {
	b := &fakeBroker{failDLQ: -1}
	s, err := Open(Options{Broker: b, Logger: slog.New(slog.DiscardHandler),
		SQSRetry: &RetryPolicy{NumRetries: 2, NumNoDelayRetries: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic := deadLetterTopic(t, s)
	if _, err := s.Publish(context.Background(), PublishParams{TopicARN: topic, Message: "m"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the loss", func() bool { return s.Stats().Lost > 0 })
	if st := s.Stats(); st.Lost != 1 || st.Retries != 2 || st.DeadLettered != 0 {
		t.Fatalf("stats = %+v", st)
	}
	waitFor(t, "an empty outbox", func() bool { return outboxLen(t, s.opt.Store) == 0 })
}
