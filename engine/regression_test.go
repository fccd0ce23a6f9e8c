package engine

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

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
	msgs, _ := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(2), VisibilityTimeout: &vt})
	if len(msgs) != 2 {
		t.Fatalf("first receive got %d", len(msgs))
	}
	must(t)(e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: []tidemq.DeleteEntry{{ReceiptHandle: msgs[1].ReceiptHandle}}}))
	clk.Advance(6 * time.Second)
	msgs, err = e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo", MaxNumberOfMessages: new(10)})
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
	forged := tidemq.ReceiptCodec{Version: receiptVersion, Key: []byte("not the engine's key")}.Encode(tidemq.Receipt{Queue: 1, Seq: 1, Count: 1})
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

// A Cancel that lands while a move task's last step is syncing must not
// leave CANCELLING in the store after COMPLETED in memory: the task would
// resume at the next Open and end CANCELLED.
func TestMoveTaskCancelDuringFinalStep(t *testing.T) {
	ctx := context.Background()
	env := newTaskEnv(t, 3)
	gate := make(chan struct{})
	env.e.mu.Lock()
	env.e.store = gatedStore{Store: env.store, gate: gate}
	env.e.mu.Unlock()
	started := make(chan error, 1)
	go func() {
		_, err := env.e.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq")})
		started <- err
	}()
	var task *moveTask
	for { // until the task's single step has moved every message (its sync then waits on the gate)
		env.e.mu.Lock()
		for _, tk := range env.e.tasks {
			task = tk
		}
		moved := len(env.e.queues["dlq"].msgs) == 0
		env.e.mu.Unlock()
		if task != nil && moved {
			break
		}
		runtime.Gosched()
	}
	cancelled := make(chan error, 1)
	go func() {
		_, err := env.e.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: tidemq.MoveTaskHandle{TaskID: task.id, SourceARN: task.SourceARN}.Encode()})
		cancelled <- err
	}()
	for { // until the cancel has marked the task (and waits on the gate too)
		env.e.mu.Lock()
		s := task.Status
		env.e.mu.Unlock()
		if s == tidemq.MoveTaskCancelling {
			break
		}
		runtime.Gosched()
	}
	close(gate)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	if s := env.waitEnd(t); s != tidemq.MoveTaskCompleted {
		t.Fatalf("task ended %s, want COMPLETED (its last step ran before the cancel)", s)
	}
	env.e.Close()
	env.open(t)
	defer env.e.Close()
	if got := env.task(t); got.Status != tidemq.MoveTaskCompleted || got.ApproximateNumberOfMessagesMoved != 3 {
		t.Fatalf("after a restart the task is %s with %d moved, want COMPLETED with 3", got.Status, got.ApproximateNumberOfMessagesMoved)
	}
	select {
	case s := <-env.ended:
		t.Fatalf("the task ran again after the restart and ended %s", s)
	default:
	}
}

// Close racing StartMessageMoveTask: the task's runner is either refused
// (the engine is closed) or waited for by Close, never started behind a
// Close that already returned.
func TestCloseRacingMoveTaskStart(t *testing.T) {
	for i := 0; i < 30; i++ {
		env := newTaskEnv(t, 2)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = env.e.StartMessageMoveTask(context.Background(), tidemq.StartMoveTaskParams{SourceARN: env.e.arn("dlq"), MaxNumberOfMessagesPerSecond: new(1)})
		}()
		if err := env.e.Close(); err != nil {
			t.Fatal(err)
		}
		<-done
	}
}

// A visibility timeout that expires leaves an event in the message's
// history, and the event survives a restart before the next receive.
func TestVisibilityExpiryHistorySurvivesRestart(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	store := mem.New()
	e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "30"}}))
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}))
	must(t)(e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"}))
	clk.Advance(31 * time.Second)
	must(t)(e.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "q", Names: []string{"All"}}))
	e.Close()
	e, err = Open(Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	msgs, err := e.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "q", Max: new(10)})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("peek: %v, %v", msgs, err)
	}
	var expired int
	for _, ev := range msgs[0].History {
		if ev.Kind == tidemq.HistoryExpired {
			expired++
		}
	}
	if expired != 1 {
		t.Fatalf("history after a restart has %d visibility expiries, want 1: %+v", expired, msgs[0].History)
	}
}

// A visibility timeout that runs out while the server is down is recorded
// at the next start, once.
func TestVisibilityExpiryWhileDownIsRecorded(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	store := mem.New()
	open := func() *Engine {
		e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "30"}}))
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: "x"}}}))
	must(t)(e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"}))
	e.Close()
	clk.Advance(time.Minute)
	for i := 0; i < 2; i++ { // the second start must not add it again
		e = open()
		msgs, err := e.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "q", Max: new(10)})
		e.Close()
		if err != nil || len(msgs) != 1 {
			t.Fatalf("peek: %v, %v", msgs, err)
		}
		var kinds []string
		for _, ev := range msgs[0].History {
			kinds = append(kinds, ev.Kind)
		}
		want := []string{tidemq.HistorySent, tidemq.HistoryReceived, tidemq.HistoryExpired}
		if fmt.Sprint(kinds) != fmt.Sprint(want) {
			t.Fatalf("start %d: history %v, want %v", i+1, kinds, want)
		}
	}
}

// Long polls are woken one per message, not all at once; no message may be
// left waiting for a poll's timeout while polls wait (the fake clock never
// moves here, so a lost wake would leave a message unreceived for good).
func TestLongPollsWakeOnePerMessageAndLoseNone(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{Store: mem.New(), Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}))
	const pollers, messages = 8, 200
	got := make(chan int, messages)
	wait := 20
	var wg sync.WaitGroup
	pctx, stop := context.WithCancel(ctx)
	for i := 0; i < pollers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			// Half the pollers give up (their client goes away) at once and
			// come back, so wakes also land on polls that are leaving.
			for pctx.Err() == nil {
				c, cancel := pctx, context.CancelFunc(func() {})
				if i%2 == 1 {
					c, cancel = context.WithTimeout(pctx, time.Millisecond)
				}
				msgs, _ := e.ReceiveMessages(c, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(3), WaitTimeSeconds: &wait})
				cancel()
				for _, m := range msgs {
					must(t)(e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ReceiptHandle: m.ReceiptHandle}}}))
					got <- 1
				}
			}
		}(i)
	}
	for i := 0; i < messages; i++ {
		must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{Body: fmt.Sprint(i)}}}))
	}
	timeout := time.After(10 * time.Second)
	for n := 0; n < messages; n++ {
		select {
		case <-got:
		case <-timeout:
			t.Fatalf("only %d of %d messages received: a wake was lost", n, messages)
		}
	}
	stop()
	e.Drain()
	wg.Wait()
}

// A deleted message must become garbage at once, not when the deadline of
// its visibility timeout (here 12 hours) comes: at thousands of messages a
// second, every one kept until then grew the heap, and the garbage
// collector's marking of it showed in the tail latency.
func TestDeletedMessageIsNotRetained(t *testing.T) {
	ctx := context.Background()
	e, err := Open(Options{Store: mem.New(), Clock: clocktest.New(time.Unix(1_700_000_000, 0)), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q", Attributes: map[string]string{"VisibilityTimeout": "43200"}}))
	must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}))
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(1)})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(msgs))
	}
	e.mu.Lock()
	var ref weak.Pointer[message]
	for _, m := range e.queues["q"].msgs {
		ref = weak.Make(m)
	}
	e.mu.Unlock()
	must(t)(e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}}))
	// An empty receive drops the ready heap's stale entry for it.
	zero := 0
	if _, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", WaitTimeSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	if ref.Value() != nil {
		t.Fatal("the deleted message is still reachable")
	}
}

// Stale heap entries must not pile up without bound. On a queue nobody
// receives from, every expired message left its ready entry (and, with it,
// the message) behind for good; under receive + delete, every deleted
// message left a timer entry until its visibility deadline.
func TestStaleEntriesAreBounded(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := Open(Options{Store: mem.New(), Clock: clk, SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "unread", Attributes: map[string]string{"MessageRetentionPeriod": "60"}}))
	must(t)(e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "busy", Attributes: map[string]string{"VisibilityTimeout": "43200"}}))
	batch := func(n int) []tidemq.SendEntry {
		var entries []tidemq.SendEntry
		for i := range n {
			entries = append(entries, tidemq.SendEntry{ID: fmt.Sprint(i), Body: "x"})
		}
		return entries
	}
	var expired weak.Pointer[message]
	for cycle := 0; cycle < 500; cycle++ { // 5,000 messages expire unread
		must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "unread", Entries: batch(10), Batch: true}))
		if cycle == 0 {
			e.mu.Lock()
			for _, m := range e.queues["unread"].msgs {
				expired = weak.Make(m)
				break
			}
			e.mu.Unlock()
		}
		clk.Advance(61 * time.Second)
		e.Sweep()
	}
	for i := 0; i < 5000; i++ { // 5,000 received and deleted
		must(t)(e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "busy", Entries: batch(1)}))
		msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "busy", MaxNumberOfMessages: new(1)})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("receive %d: %v, %d messages", i, err, len(msgs))
		}
		must(t)(e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "busy", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: msgs[0].ReceiptHandle}}}))
	}
	e.mu.Lock()
	unread, busy := e.queues["unread"], e.queues["busy"]
	if n := len(unread.ready); n > 2*unread.nReady+staleSlack {
		t.Errorf("unread queue: %d ready entries for %d ready messages", n, unread.nReady)
	}
	if n := len(busy.timers); n > 2*(busy.nDelayed+busy.nInflight)+staleSlack {
		t.Errorf("busy queue: %d timer entries for %d delayed or in flight", n, busy.nDelayed+busy.nInflight)
	}
	e.mu.Unlock()
	runtime.GC()
	if expired.Value() != nil {
		t.Error("a message that expired unread is still reachable")
	}
}
