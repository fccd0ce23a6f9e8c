package engine

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// A FIFO receive that dead-letters a group's head must go on to the next
// message, not trip over the slots the group's head skipped (it panicked
// with the engine lock held).
func TestFIFODeadLetterMidGroupReceive(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := Open(Options{Store: mem.New(), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fifo := map[string]string{"FifoQueue": "true"}
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq.fifo", Attributes: fifo}))
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq.fifo","maxReceiveCount":1}`}}))
	var entries []tidemq.SendEntry
	for i, b := range []string{"A", "B", "C"} {
		entries = append(entries, tidemq.SendEntry{ID: b, Body: b, MessageGroupID: "g", MessageDeduplicationID: string(rune('0' + i))})
	}
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q.fifo", Entries: entries, Batch: true}))
	vt := 5
	msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: 2, VisibilityTimeout: &vt})
	if len(msgs) != 2 {
		t.Fatalf("first receive got %d", len(msgs))
	}
	must(t)(e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: []tidemq.DeleteEntry{{ReceiptHandle: msgs[1].ReceiptHandle}}}))
	clk.Advance(6 * time.Second)
	msgs, err = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: 10})
	if err != nil || len(msgs) != 1 || msgs[0].Body != "C" {
		t.Fatalf("after A is dead-lettered the receive should return C: %v %+v", err, msgs)
	}
}

// A receipt handle carries small integers; without its seal it must not work.
func TestForgedReceiptHandleIsInvalid(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{Store: mem.New(), Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}))
	msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	if len(msgs) != 1 {
		t.Fatal("no message")
	}
	forged := receipt{qid: 1, seq: 1, count: 1}.encode([]byte("not the engine's key"))
	errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: forged}}})
	if err != nil || !tidemq.HasCode(errs[0], tidemq.ErrReceiptHandleIsInvalid) {
		t.Fatalf("forged handle: %v %v", err, errs)
	}
	errs, _ = e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: msgs[0].ReceiptHandle}}})
	if errs[0] != nil {
		t.Fatalf("the real handle: %v", errs[0])
	}
}

// gatedStore holds every batch's durability until the gate opens.
type gatedStore struct {
	*mem.Store
	gate chan struct{}
}

func (s gatedStore) NewBatch() storage.Batch { return gatedBatch{s.Store.NewBatch(), s.gate} }

type gatedBatch struct {
	storage.Batch
	gate chan struct{}
}

func (b gatedBatch) Commit() (storage.Durable, error) {
	if _, err := b.Batch.Commit(); err != nil {
		return nil, err
	}
	return gatedDurable{b.gate}, nil
}

type gatedDurable struct{ gate chan struct{} }

func (d gatedDurable) Wait() error { <-d.gate; return nil }

// A delete that finds its message already deleted must not answer before
// that first delete is durable: acknowledged, then lost in a crash.
func TestNothingToWriteStillWaitsForWhatItRead(t *testing.T) {
	ctx := context.Background()
	open := make(chan struct{})
	close(open)
	gs := gatedStore{Store: mem.New(), gate: open}
	e, err := Open(Options{Store: gs, Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}))
	msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
	gate := make(chan struct{})
	e.mu.Lock()
	e.store = gatedStore{Store: gs.Store, gate: gate}
	e.mu.Unlock()
	del := tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: msgs[0].ReceiptHandle}}}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); e.DeleteMessages(ctx, del) }()
	for { // wait until the first delete has removed the message (it then waits on the gate)
		e.mu.Lock()
		n := len(e.queues["q"].msgs)
		e.mu.Unlock()
		if n == 0 {
			break
		}
		runtime.Gosched()
	}
	second := make(chan struct{})
	go func() { e.DeleteMessages(ctx, del); close(second) }()
	select {
	case <-second:
		t.Fatal("the second delete answered before the first was durable")
	case <-time.After(100 * time.Millisecond):
	}
	close(gate)
	<-second
	wg.Wait()
}
