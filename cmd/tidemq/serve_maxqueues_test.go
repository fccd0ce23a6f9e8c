package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// At --max-queues, CreateQueue of a new queue is OverLimit; of an existing
// one it answers as always; a delete makes room.
func TestMaxQueues(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "before"}); err != nil {
		t.Fatal(err)
	}
	b := newQueueCapped(eng, 3)
	for _, n := range []string{"a", "b", "a"} {
		if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: n}); err != nil {
			t.Fatalf("CreateQueue %s under the limit: %v", n, err)
		}
	}
	var te *tidemq.Error
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "c"}); !errors.As(err, &te) || te.Code != tidemq.ErrOverLimit {
		t.Fatalf("CreateQueue past 3 queues = %v, want OverLimit", err)
	}
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "b"}); err != nil {
		t.Errorf("CreateQueue of an existing queue at the limit: %v", err)
	}
	if err := b.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "c"}); err != nil {
		t.Errorf("CreateQueue after a delete made room: %v", err)
	}
}

// snapshotCounting is an engine whose Snapshot calls are counted.
type snapshotCounting struct {
	*engine.Engine
	snapshots int
}

func (s *snapshotCounting) Snapshot() []tidemq.QueueSnapshot {
	s.snapshots++
	return s.Engine.Snapshot()
}

// The count at start and at each recount comes from the broker's
// QueueCount, not from a snapshot of every queue.
func TestMaxQueuesCountsWithoutSnapshot(t *testing.T) {
	eng, err := engine.Open(engine.Options{Store: mem.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if _, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	sc := &snapshotCounting{Engine: eng}
	b := newQueueCapped(sc, 3)
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	var te *tidemq.Error
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "d"}); !errors.As(err, &te) || te.Code != tidemq.ErrOverLimit {
		t.Fatalf("CreateQueue past 3 queues = %v, want OverLimit", err)
	}
	if sc.snapshots != 0 {
		t.Errorf("the count took %d snapshots of every queue, want none (QueueCount)", sc.snapshots)
	}
}
