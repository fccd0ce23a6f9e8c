package sns

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// A FIFO topic's deduplication ids survive a restart (they are kept in the
// outbox) and expire after DedupWindow.
func TestDedupSurvivesRestart(t *testing.T) {
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	o := Options{Clock: clk, Store: mem.New()} // mem.Store.Close keeps the data
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "d.fifo", Attributes: map[string]string{"FifoTopic": "true"}, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	in := PublishParams{TopicARN: topic.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "d"}
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
	s, err = Open(o)
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

// gateStore lets a test hold the commit of a batch that deletes keys.
type gateStore struct {
	storage.Store
	gate atomic.Pointer[func()]
}

func (s *gateStore) NewBatch() storage.Batch { return &gateBatch{Batch: s.Store.NewBatch(), s: s} }

type gateBatch struct {
	storage.Batch
	s       *gateStore
	deletes int
}

func (b *gateBatch) Delete(k []byte) { b.deletes++; b.Batch.Delete(k) }

func (b *gateBatch) Commit() (storage.Durable, error) {
	if g := b.s.gate.Load(); g != nil && b.deletes > 0 {
		(*g)()
	}
	return b.Batch.Commit()
}

// Expiry runs across topics: the batch of a publish to topic b deletes
// topic a's expired deduplication entry. When that batch commits after a
// publish to a has written a fresh entry for the same id, the fresh entry
// must survive, on disk too (a restart within the window still
// deduplicates).
func TestDedupExpiryDoesNotDeleteAFreshEntry(t *testing.T) {
	outbox := &gateStore{Store: mem.New()}
	clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	o := Options{Clock: clk, Store: outbox, Logger: slog.New(slog.DiscardHandler)}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	fifo := map[string]string{"FifoTopic": "true"}
	a, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "a.fifo", Attributes: fifo, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "b.fifo", Attributes: fifo, Tags: nil})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inA := PublishParams{TopicARN: a.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "d"}
	if _, err := s.Publish(ctx, inA); err != nil {
		t.Fatal(err)
	}
	clk.Advance(DedupWindow + time.Millisecond)

	blocked, release := make(chan struct{}), make(chan struct{})
	hold := func() { close(blocked); <-release }
	outbox.gate.Store(&hold)
	done := make(chan error, 1)
	go func() {
		_, err := s.Publish(ctx, PublishParams{TopicARN: b.ARN, Message: "m", MessageGroupID: "g", MessageDeduplicationID: "x"})
		done <- err
	}()
	<-blocked // b's publish has taken a's expired entry and is committing its deletion
	outbox.gate.Store(nil)
	fresh, err := s.Publish(ctx, inA)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, err := s.Publish(ctx, inA)
	if err != nil || *again != *fresh {
		t.Fatalf("after a restart: %+v %v, want %+v", again, err, fresh)
	}
}
