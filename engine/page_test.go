package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// The paged backlog (page.go), with pages of 4 messages: what stays in
// memory, and that the queue behaves as if nothing were paged. brokertest
// runs paged too (conformance_test.go); these pin what it cannot see.

const testPageSize = 4

type pagedEnv struct {
	t     *testing.T
	ctx   context.Context
	clk   *clocktest.Clock
	store storage.Store
	e     *Engine
	// maxBytes is Options.MaxQueueBytes.
	maxBytes int64
}

func newPagedEnv(t *testing.T) *pagedEnv {
	env := &pagedEnv{t: t, ctx: context.Background(), clk: clocktest.New(time.Unix(1_700_000_000, 0)), store: mem.New()}
	env.open()
	t.Cleanup(func() { env.e.Close() })
	return env
}

func (env *pagedEnv) open() {
	e, err := Open(Options{Store: env.store, Clock: env.clk, SweepInterval: -1, PageSize: testPageSize, MaxQueueBytes: env.maxBytes})
	if err != nil {
		env.t.Fatal(err)
	}
	env.e = e
}

// restart closes the engine and opens it again on the same store.
func (env *pagedEnv) restart() {
	env.t.Helper()
	if err := env.e.Close(); err != nil {
		env.t.Fatal(err)
	}
	env.open()
}

// crash opens a new engine on the store without closing the old one, as
// a start-up after kill -9 finds it: the last checkpoint (checkpoint.go)
// and whatever was written after it.
func (env *pagedEnv) crash() {
	env.t.Helper()
	env.open()
}

// send sends n messages whose bodies are their numbers from first on.
func (env *pagedEnv) send(queue string, first, n int) {
	env.t.Helper()
	sendTens(env.t, env.e, queue, n, func(j int) tidemq.SendEntry {
		return tidemq.SendEntry{Body: strconv.Itoa(first + j)}
	})
}

// sendTens sends n messages to queue in batches of up to 10, entry(j)
// the j-th (its ID is set), and fails t unless each is accepted.
func sendTens(t *testing.T, e *Engine, queue string, n int, entry func(j int) tidemq.SendEntry) {
	t.Helper()
	for i := 0; i < n; i += 10 {
		var entries []tidemq.SendEntry
		for j := i; j < n && j < i+10; j++ {
			se := entry(j)
			se.ID = strconv.Itoa(j)
			entries = append(entries, se)
		}
		res, err := e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: entries, Batch: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
}

// groupEntry is the j-th of a FIFO group's messages numbered from first:
// its body, also its deduplication id, is group-number.
func groupEntry(group string, first int) func(j int) tidemq.SendEntry {
	return func(j int) tidemq.SendEntry {
		body := group + "-" + strconv.Itoa(first+j)
		return tidemq.SendEntry{Body: body, MessageGroupID: group, MessageDeduplicationID: body}
	}
}

func (env *pagedEnv) receive(queue string, max, vt int) []*tidemq.Message {
	env.t.Helper()
	msgs, err := env.e.ReceiveMessages(env.ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: &max, VisibilityTimeout: &vt})
	if err != nil {
		env.t.Fatal(err)
	}
	return msgs
}

func (env *pagedEnv) delete(queue string, msgs ...*tidemq.Message) {
	env.t.Helper()
	var entries []tidemq.DeleteEntry
	for i, m := range msgs {
		entries = append(entries, tidemq.DeleteEntry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle})
	}
	errs, err := env.e.DeleteMessages(env.ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: entries})
	if err != nil {
		env.t.Fatal(err)
	}
	for _, err := range errs {
		if err != nil {
			env.t.Fatal(err)
		}
	}
}

// counts returns visible, in flight and delayed as GetQueueAttributes has them.
func (env *pagedEnv) counts(queue string) [3]int {
	env.t.Helper()
	a, err := env.e.GetQueueAttributes(env.ctx, tidemq.GetQueueAttributesParams{Queue: queue, Names: []string{tidemq.AttrAll}})
	if err != nil {
		env.t.Fatal(err)
	}
	var out [3]int
	for i, n := range []string{tidemq.AttrApproximateNumberOfMessages, tidemq.AttrApproximateNumberOfMessagesNotVisible, tidemq.AttrApproximateNumberOfMessagesDelayed} {
		out[i], _ = strconv.Atoi(a[n])
	}
	return out
}

// inMemory returns how many of the queue's messages are in memory, and
// how many are paged.
func (env *pagedEnv) inMemory(queue string) (hot, paged int) {
	env.e.mu.Lock()
	defer env.e.mu.Unlock()
	q := env.e.queues[queue]
	return len(q.msgs), q.cold.n
}

func (env *pagedEnv) create(name string, attrs map[string]string) {
	env.t.Helper()
	if _, err := env.e.CreateQueue(env.ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
		env.t.Fatal(err)
	}
}

// A deep backlog keeps a page of ready messages in memory, and receives
// drain it in send order with exact counts, across a restart too.
func TestPagedBacklogStaysBoundedAndInOrder(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 200)
	if hot, paged := env.inMemory("q"); hot != testPageSize || paged != 200-testPageSize {
		t.Fatalf("after 200 sends: %d in memory, %d paged; want %d and %d", hot, paged, testPageSize, 200-testPageSize)
	}
	if c := env.counts("q"); c != [3]int{200, 0, 0} {
		t.Fatalf("counts %v", c)
	}
	next := 0
	for round := 0; next < 200; round++ {
		if round == 5 {
			env.crash()
			if hot, paged := env.inMemory("q"); hot != 0 || paged != 200-next {
				t.Fatalf("after a crash: %d in memory, %d paged; want only the %d messages left, paged", hot, paged, 200-next)
			}
		}
		if round == 8 {
			// A clean restart reads the checkpoint Close wrote, and pages
			// the ready messages it held in memory.
			hot, paged := env.inMemory("q")
			env.restart()
			if h, p := env.inMemory("q"); h != 0 || p != hot+paged {
				t.Fatalf("after a restart: %d in memory, %d paged; want 0 and %d", h, p, hot+paged)
			}
		}
		msgs := env.receive("q", 10, 30)
		for _, m := range msgs {
			if m.Body != strconv.Itoa(next) {
				t.Fatalf("received %s, want %d (send order)", m.Body, next)
			}
			next++
		}
		if hot, _ := env.inMemory("q"); hot > len(msgs)+2*testPageSize {
			t.Fatalf("%d messages in memory with %d in flight: the window is not bounded", hot, len(msgs))
		}
		if c := env.counts("q"); c != [3]int{200 - next, len(msgs), 0} {
			t.Fatalf("after receiving up to %d: counts %v", next, c)
		}
		env.delete("q", msgs...)
	}
	if hot, paged := env.inMemory("q"); hot != 0 || paged != 0 {
		t.Fatalf("drained queue: %d in memory, %d paged", hot, paged)
	}
}

// A restart keeps in flight what was in flight and pages the rest; a
// handle given before the restart deletes a message that came back to
// the queue and is paged since.
func TestPagedRestartKeepsHandlesAndInFlight(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 20)
	first := env.receive("q", 2, 10)  // 0, 1: their timeout runs out
	second := env.receive("q", 3, 60) // 2, 3, 4: still in flight after the restart
	env.clk.Advance(20 * time.Second)
	env.crash()
	// The first start-up writes the expiry of 0 and 1 into their history,
	// so they stay in memory; the second pages them.
	if hot, paged := env.inMemory("q"); hot != 5 || paged != 15 {
		t.Fatalf("after the restart: %d in memory, %d paged; want 5 (3 in flight, 2 expired while down), 15 paged", hot, paged)
	}
	env.crash()
	if hot, paged := env.inMemory("q"); hot != 3 || paged != 17 {
		t.Fatalf("after the second restart: %d in memory, %d paged; want the 3 in flight, 17 paged", hot, paged)
	}
	if c := env.counts("q"); c != [3]int{17, 3, 0} {
		t.Fatalf("counts %v", c)
	}
	env.delete("q", first...) // paged messages, deleted by their old handles
	env.delete("q", second...)
	if c := env.counts("q"); c != [3]int{15, 0, 0} {
		t.Fatalf("after the deletes: counts %v", c)
	}
	msgs := env.receive("q", 10, 30)
	if len(msgs) == 0 || msgs[0].Body != "5" {
		t.Fatalf("the deleted messages came back, or the order is lost: first %+v", msgs)
	}
	if msgs[0].ApproximateReceiveCount != 1 {
		t.Fatalf("receive count %d", msgs[0].ApproximateReceiveCount)
	}
}

// Retention expires paged messages even when a later page holds an older
// one (a dead-lettered message keeps its enqueue time), and peek shows
// the paged backlog oldest first.
func TestPagedRetentionAndPeek(t *testing.T) {
	env := newPagedEnv(t)
	env.create("dlq", map[string]string{"MessageRetentionPeriod": "600"})
	env.create("q", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`})
	env.send("q", 1000, 1) // enqueued at T
	env.clk.Advance(300 * time.Second)
	env.send("dlq", 0, 20) // enqueued at T+300: pages of dlq
	env.receive("q", 1, 1)
	env.clk.Advance(2 * time.Second)
	if msgs := env.receive("q", 1, 1); len(msgs) != 0 {
		t.Fatalf("should have been dead-lettered: %+v", msgs)
	}
	if hot, paged := env.inMemory("dlq"); hot != testPageSize || paged != 17 {
		t.Fatalf("dlq: %d in memory, %d paged", hot, paged)
	}
	peek, err := env.e.PeekMessages(env.ctx, tidemq.PeekMessagesParams{Queue: "dlq", Max: new(3)})
	if err != nil || len(peek) != 3 || peek[0].Body != "1000" || peek[1].Body != "0" || peek[2].Body != "1" {
		t.Fatalf("peek should show the dead-lettered (oldest) message first: %v %+v", err, peek)
	}
	// T+602: the dead-lettered message's retention is over, nothing else's.
	env.clk.Advance(300 * time.Second)
	if c := env.counts("dlq"); c != [3]int{20, 0, 0} {
		t.Fatalf("after the dead-lettered message expired: counts %v", c)
	}
	for _, s := range env.e.Snapshot() {
		if s.Name == "dlq" && (s.Stats.Expired != 1 || s.OldestAgeSeconds != 302) {
			t.Fatalf("dlq snapshot: %+v", s)
		}
	}
	// T+902: all of them.
	env.clk.Advance(300 * time.Second)
	if c := env.counts("dlq"); c != [3]int{0, 0, 0} {
		t.Fatalf("after retention: counts %v", c)
	}
	if hot, paged := env.inMemory("dlq"); hot != 0 || paged != 0 {
		t.Fatalf("expired: %d in memory, %d paged", hot, paged)
	}
	env.restart()
	if c := env.counts("dlq"); c != [3]int{0, 0, 0} {
		t.Fatalf("expired messages came back after a restart: %v", c)
	}
}

// Purge drops the paged backlog with the rest; later sends start clean.
func TestPagedPurge(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 50)
	if err := env.e.PurgeQueue(env.ctx, tidemq.PurgeQueueParams{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	if c := env.counts("q"); c != [3]int{0, 0, 0} {
		t.Fatalf("after purge: %v", c)
	}
	env.send("q", 100, 10)
	msgs := env.receive("q", 10, 30)
	if len(msgs) != 10 || msgs[0].Body != "100" {
		t.Fatalf("after purge and 10 sends: %d messages, first %+v", len(msgs), msgs)
	}
	env.restart()
	if c := env.counts("q"); c != [3]int{0, 10, 0} {
		t.Fatalf("after a restart: %v", c)
	}
}

// A page that cannot be read fails the engine loudly (it refuses work and
// reports why) rather than serving a wrong queue.
func TestPagedCorruptRecordFailsTheEngine(t *testing.T) {
	env := newPagedEnv(t)
	env.create("q", nil)
	env.send("q", 0, 12)
	env.e.mu.Lock()
	q := env.e.queues["q"]
	seq := q.cold.pages[len(q.cold.pages)-1].lo
	env.e.mu.Unlock()
	b := env.store.NewBatch()
	b.Set(seqKey(prefixMessage, q.id, seq), []byte{recordVersion, 0xff})
	if err := storage.CommitSync(b); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 12 && err == nil; i++ {
		var msgs []*tidemq.Message
		msgs, err = env.e.ReceiveMessages(env.ctx, tidemq.ReceiveMessagesParams{Queue: "q"})
		if err == nil && len(msgs) == 0 {
			t.Fatal("the queue ran dry before the corrupt page was read")
		}
	}
	if !tidemq.HasCode(err, tidemq.ErrInternalFailure) || env.e.Healthy() == nil {
		t.Fatalf("reading a corrupt page: %v, healthy %v", err, env.e.Healthy())
	}
}
