package sns

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// flakyBroker fails the first send to any queue for a server-side reason
// and records the bodies it accepts, in order.
type flakyBroker struct {
	tidemq.Broker
	mu     sync.Mutex
	failed map[string]bool
	bodies []string
}

func (b *flakyBroker) SendMessages(_ context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.failed[p.Queue] {
		b.failed[p.Queue] = true
		return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "busy")
	}
	b.bodies = append(b.bodies, p.Entries[0].Body)
	return []tidemq.SendResult{{ID: p.Entries[0].ID, MessageID: "m"}}, nil
}

// A FIFO topic keeps its order into a queue when a delivery has to be
// retried: the next publish does not overtake it.
func TestFIFOOrderAcrossARetry(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	b := &flakyBroker{failed: map[string]bool{}}
	s, err := Open(Options{Broker: b, Clock: clk, Logger: slog.New(slog.DiscardHandler),
		SQSRetry: &RetryPolicy{NumRetries: 1, NumMinDelayRetries: 1, MinDelay: time.Second, MaxDelay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "q.fifo", Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	publish := func(msg string) chan error {
		c := make(chan error, 1)
		go func() {
			_, err := s.Publish(context.Background(), PublishParams{TopicARN: topic.ARN, Message: msg, MessageGroupID: "g", MessageDeduplicationID: msg})
			c <- err
		}()
		return c
	}
	first := publish("1")
	if !clk.WaitForTimers(1, 10*time.Second) {
		t.Fatal("the first delivery is not being retried")
	}
	second := publish("2")
	select { // with the first one retried in the background, the second is delivered at once
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
		second = nil
	case <-time.After(100 * time.Millisecond):
	}
	clk.Advance(time.Second)
	for _, c := range []chan error{first, second} {
		if c != nil {
			if err := <-c; err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "both deliveries", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.bodies) == 2 })
	if b.bodies[0] != "1" || b.bodies[1] != "2" {
		t.Fatalf("the queue got %q", b.bodies)
	}
}

// downBroker fails every send for a server-side reason.
type downBroker struct{ tidemq.Broker }

func (downBroker) SendMessages(context.Context, tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	return nil, tidemq.Errorf(tidemq.ErrServiceUnavailable, "down")
}

// A FIFO Publish whose delivery keeps failing answers after FIFORetryWait
// instead of waiting out the whole retry policy; Close still ends the
// retries it left running.
func TestFIFOPublishWaitIsBounded(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := Open(Options{Broker: downBroker{}, Clock: clk, Logger: slog.New(slog.DiscardHandler), FIFORetryWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "t.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + "q.fifo"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Publish(context.Background(), PublishParams{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "m"})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("publish: %v (the message is recorded; it is delivered later)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Publish still waiting for a broker that keeps failing")
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the background retries")
	}
}
