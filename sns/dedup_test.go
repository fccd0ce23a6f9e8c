package sns

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq/clocktest"
)

// A FIFO topic's deduplication ids survive a restart (they are kept in the
// outbox store) and expire after DedupWindow.
func TestDedupSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	s, err := Open(Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	topic, err := s.CreateTopic("d.fifo", map[string]string{"FifoTopic": "true"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := PublishInput{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "d"}
	first, err := s.Publish(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(context.Background(), in); err == nil {
		t.Fatal("Publish after Close succeeded")
	}

	clk.Advance(time.Minute)
	s, err = Open(Options{Dir: dir, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Publish(context.Background(), in)
	if err != nil || *again != *first {
		t.Fatalf("after a restart: %+v %v, want %+v", again, err, first)
	}
	clk.Advance(DedupWindow)
	later, err := s.Publish(context.Background(), in)
	if err != nil || later.MessageID == first.MessageID {
		t.Fatalf("after the window: %+v %v", later, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
