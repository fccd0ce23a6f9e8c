package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage/mem"
)

// FIFO paging (fifopage.go): what stays in memory, and the group index
// across a binary that does not write it. fifopage_diff_test.go compares
// whole workloads against an engine that does not page.

// fifoPageSize gives groups pages (and windows) of 2 messages.
const fifoPageSize = 32

type fifoEnv struct {
	t     *testing.T
	ctx   context.Context
	clk   *clocktest.Clock
	store *mem.Store
	e     *Engine
}

func newFIFOEnv(t *testing.T) *fifoEnv {
	env := &fifoEnv{t: t, ctx: context.Background(), clk: clocktest.New(time.Unix(1_700_000_000, 0)), store: mem.New()}
	env.open(fifoPageSize)
	t.Cleanup(func() { env.e.Close() })
	return env
}

func (env *fifoEnv) open(pageSize int) {
	e, err := Open(Options{Store: env.store, Clock: env.clk, SweepInterval: -1, PageSize: pageSize})
	if err != nil {
		env.t.Fatal(err)
	}
	env.e = e
}

func (env *fifoEnv) restart(pageSize int) {
	env.t.Helper()
	if err := env.e.Close(); err != nil {
		env.t.Fatal(err)
	}
	env.open(pageSize)
}

// send sends bodies first..first+n-1 to group, one batch of up to 10 at a time.
func (env *fifoEnv) send(group string, first, n int) {
	env.t.Helper()
	sendTens(env.t, env.e, "q.fifo", n, groupEntry(group, first))
}

// drain receives and deletes everything, and returns the bodies by group
// in the order received.
func (env *fifoEnv) drain() map[string][]string {
	env.t.Helper()
	out := map[string][]string{}
	for receiveAndDelete(env.t, env.e, "q.fifo", out) > 0 {
	}
	return out
}

// receiveAndDelete receives up to 10 messages of queue, appends their
// bodies to out by group, deletes them in one batch and returns how many
// it received.
func receiveAndDelete(t *testing.T, e *Engine, queue string, out map[string][]string) int {
	t.Helper()
	ctx := context.Background()
	msgs, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: new(10)})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 {
		return 0
	}
	var dels []tidemq.DeleteEntry
	for i, m := range msgs {
		out[m.MessageGroupID] = append(out[m.MessageGroupID], m.Body)
		dels = append(dels, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
	}
	errs, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: dels})
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return len(msgs)
}

func (env *fifoEnv) inMemory() (hot, paged int) {
	env.e.mu.Lock()
	defer env.e.mu.Unlock()
	q := env.e.queues["q.fifo"]
	return len(q.msgs), q.cold.n
}

func wantInOrder(t *testing.T, got []string, group string, from, to int) {
	t.Helper()
	if len(got) != to-from {
		t.Fatalf("group %s: %d messages, want %d: %v", group, len(got), to-from, got)
	}
	for i, body := range got {
		if want := group + "-" + strconv.Itoa(from+i); body != want {
			t.Fatalf("group %s: message %d is %s, want %s", group, i, body, want)
		}
	}
}

// A deep group keeps a window in memory, the rest paged, with exact
// counts, across a restart.
func TestFIFOPagedGroupStaysBounded(t *testing.T) {
	env := newFIFOEnv(t)
	if _, err := env.e.CreateQueue(env.ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	env.send("a", 0, 100)
	env.send("b", 0, 100)
	window := fifoPageSize / 16
	if hot, paged := env.inMemory(); hot != 2*window || paged != 200-2*window {
		t.Fatalf("after 200 sends in 2 groups: %d in memory, %d paged; want %d and %d", hot, paged, 2*window, 200-2*window)
	}
	env.restart(fifoPageSize)
	if hot, paged := env.inMemory(); hot != 2*window || paged != 200-2*window {
		t.Fatalf("after a restart: %d in memory, %d paged; want %d and %d", hot, paged, 2*window, 200-2*window)
	}
	a, err := env.e.GetQueueAttributes(env.ctx, tidemq.GetQueueAttributesParams{Queue: "q.fifo", Names: []string{tidemq.AttrApproximateNumberOfMessages}})
	if err != nil || a[tidemq.AttrApproximateNumberOfMessages] != "200" {
		t.Fatalf("count %v %v", a, err)
	}
	got := env.drain()
	wantInOrder(t, got["a"], "a", 0, 100)
	wantInOrder(t, got["b"], "b", 0, 100)
	if hot, paged := env.inMemory(); hot != 0 || paged != 0 {
		t.Fatalf("drained: %d in memory, %d paged", hot, paged)
	}
}

// A binary that does not write the group index (here an engine that does
// not page: it writes no index key, leaves those of the messages it
// deletes, and, as every binary does, removes the checkpoint's canary)
// leaves the index wrong; the next paging start-up rebuilds it, and every
// message is delivered once, in order.
func TestFIFOIndexRebuiltAfterOlderBinary(t *testing.T) {
	env := newFIFOEnv(t)
	if _, err := env.e.CreateQueue(env.ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	env.send("a", 0, 20)
	env.restart(0) // the "older binary"
	for i := 0; i < 5; i++ {
		msgs, err := env.e.ReceiveMessages(env.ctx, tidemq.ReceiveMessagesParams{Queue: "q.fifo"})
		if err != nil || len(msgs) != 1 {
			t.Fatal(err, len(msgs))
		}
		if _, err := env.e.DeleteMessages(env.ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: []tidemq.DeleteEntry{{ID: "0", ReceiptHandle: msgs[0].ReceiptHandle}}}); err != nil {
			t.Fatal(err)
		}
	}
	env.send("a", 20, 20)
	env.restart(fifoPageSize)
	got := env.drain()
	wantInOrder(t, got["a"], "a", 5, 40)
}
