package postgres

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// holdTakes marks queue qid's receive statement as running, so that the
// receives of qid wait behind it until the test hands off.
func holdTakes(b *Broker, qid int64) *takeQueue {
	b.takes.mu.Lock()
	defer b.takes.mu.Unlock()
	if b.takes.queues == nil {
		b.takes.queues = map[int64]*takeQueue{}
	}
	tq := &takeQueue{running: true}
	b.takes.queues[qid] = tq
	return tq
}

// awaitWaiting returns once n receives wait behind tq.
func awaitWaiting(t *testing.T, b *Broker, tq *takeQueue, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b.takes.mu.Lock()
		w := len(tq.waiting)
		b.takes.mu.Unlock()
		if w == n {
			return
		}
	}
	t.Fatalf("%d receives never waited", n)
}

type receiveResult struct {
	ms  []*tidemq.Message
	err error
}

// receiveBehind starts a receive of queue that waits behind tq and
// returns once it does (it is the waiting-th).
func receiveBehind(t *testing.T, ctx context.Context, b *Broker, tq *takeQueue, waiting int, p tidemq.ReceiveMessagesParams) <-chan receiveResult {
	t.Helper()
	ch := make(chan receiveResult, 1)
	go func() {
		ms, err := b.ReceiveMessages(ctx, p)
		ch <- receiveResult{ms, err}
	}()
	awaitWaiting(t, b, tq, waiting)
	return ch
}

func takeParams(queue string, max, vt int, agent string) tidemq.ReceiveMessagesParams {
	return tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: &max, VisibilityTimeout: &vt,
		Client: tidemq.ClientInfo{UserAgent: agent}}
}

func bodies(ms []*tidemq.Message) string {
	s := ""
	for _, m := range ms {
		s += m.Body + " "
	}
	return s
}

func sendNumbered(t *testing.T, b *Broker, queue string, from, to int) {
	t.Helper()
	for i := from; i < to; i += 10 {
		var es []tidemq.SendEntry
		for j := i; j < min(i+10, to); j++ {
			es = append(es, tidemq.SendEntry{ID: fmt.Sprint(j), Body: fmt.Sprintf("m%02d", j)})
		}
		sendAll(t, b, queue, es)
	}
}

// numberedQueue creates the standard queue name, sends it m00 to
// m(n-1), and returns its row.
func numberedQueue(t *testing.T, b *Broker, name string, n int) *queue {
	t.Helper()
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name}); err != nil {
		t.Fatal(err)
	}
	q, err := b.getQueue(ctx, b.pool, name, false)
	if err != nil {
		t.Fatal(err)
	}
	sendNumbered(t, b, name, 0, n)
	return q
}

func numbered(from, to int) string {
	s := ""
	for i := from; i < to; i++ {
		s += fmt.Sprintf("m%02d ", i)
	}
	return s
}

// Receives of one queue that wait behind its running statement go in one
// statement, and each gets what it would have got alone, one after the
// other: as many messages as it asked for, in the queue's order, with its
// own visibility timeout and its own client in their history.
func TestGatheredReceivesShareOneStatement(t *testing.T) {
	b := openInternal(t)
	clock := b.clock.(*clocktest.Clock)
	ctx := context.Background()
	q := numberedQueue(t, b, "q", 25)

	tq := holdTakes(b, q.id)
	calls := []struct {
		max, vt int
		agent   string
		want    string
	}{
		{10, 10, "a", numbered(0, 10)},
		{5, 20, "b", numbered(10, 15)},
		{10, 40, "c", numbered(15, 25)},
	}
	var results []<-chan receiveResult
	for i, c := range calls {
		results = append(results, receiveBehind(t, ctx, b, tq, i+1, takeParams("q", c.max, c.vt, c.agent)))
	}
	before := b.takes.statements.Load()
	b.takes.handOff(q.id, tq)
	for i, c := range calls {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("call %s: %v", c.agent, r.err)
		}
		if got := bodies(r.ms); got != c.want {
			t.Fatalf("call %s received %q, want %q", c.agent, got, c.want)
		}
		for _, m := range r.ms {
			last := m.History[len(m.History)-1]
			if last.Kind != tidemq.HistoryReceived || last.Client.UserAgent != c.agent {
				t.Fatalf("call %s: %s's last event is %+v, want its receive by %s", c.agent, m.Body, last, c.agent)
			}
		}
	}
	if n := b.takes.statements.Load() - before; n != 1 {
		t.Fatalf("3 gathered receives ran %d statements, want 1", n)
	}

	// Each call's messages come back when its own visibility timeout ends.
	for _, c := range calls {
		clock.Set(time.Unix(1_700_000_000, 0).Add(time.Duration(c.vt)*time.Second + time.Millisecond))
		ms, err := b.ReceiveMessages(ctx, takeParams("q", 10, 300, "again"))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodies(ms); got != c.want {
			t.Fatalf("after %ds, received %q, want call %s's %q", c.vt, got, c.agent, c.want)
		}
	}
}

// A gathered statement that meets messages over maxReceiveCount moves
// them to the dead-letter queue once, and a call it left short looks
// again on its own.
func TestGatheredReceivesDeadLetterOnce(t *testing.T) {
	b := openInternal(t)
	clock := b.clock.(*clocktest.Clock)
	ctx := context.Background()
	for _, p := range []tidemq.CreateQueueParams{
		{Name: "dlq"},
		{Name: "src", Attributes: map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`}},
	} {
		if _, err := b.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	q, err := b.getQueue(ctx, b.pool, "src", false)
	if err != nil {
		t.Fatal(err)
	}
	sendNumbered(t, b, "src", 0, 10)
	if ms, err := b.ReceiveMessages(ctx, takeParams("src", 10, 30, "first")); err != nil || len(ms) != 10 {
		t.Fatalf("first receive: %d messages, %v", len(ms), err)
	}
	clock.Advance(31 * time.Second) // m00..m09 are back, received once: over maxReceiveCount
	sendNumbered(t, b, "src", 10, 30)

	tq := holdTakes(b, q.id)
	a := receiveBehind(t, ctx, b, tq, 1, takeParams("src", 10, 30, "a"))
	c := receiveBehind(t, ctx, b, tq, 2, takeParams("src", 10, 30, "c"))
	b.takes.handOff(q.id, tq)
	// The statement picks the ten that are back first (over: left for the
	// move) and ten new ones, all for a; c looks again once they moved.
	for _, r := range []struct {
		ch   <-chan receiveResult
		want string
	}{{a, numbered(10, 20)}, {c, numbered(20, 30)}} {
		got := <-r.ch
		if got.err != nil {
			t.Fatal(got.err)
		}
		if s := bodies(got.ms); s != r.want {
			t.Fatalf("received %q, want %q", s, r.want)
		}
	}
	ms, err := b.ReceiveMessages(ctx, takeParams("dlq", 10, 30, "dlq"))
	if err != nil {
		t.Fatal(err)
	}
	if got := bodies(ms); got != numbered(0, 10) {
		t.Fatalf("dead-letter queue holds %q, want %q", got, numbered(0, 10))
	}
	if ms, err := b.ReceiveMessages(ctx, takeParams("dlq", 10, 30, "dlq")); err != nil || len(ms) != 0 {
		t.Fatalf("dead-letter queue holds %d more (%v), want none", len(ms), err)
	}
}

// A receive whose client goes away while it waits leaves the line and
// takes nothing: the next call gets the messages it would have got.
func TestGatheredReceiveLeavesWhenItsClientGoes(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	q := numberedQueue(t, b, "q", 20)

	tq := holdTakes(b, q.id)
	gone, cancel := context.WithCancel(ctx)
	left := receiveBehind(t, gone, b, tq, 1, takeParams("q", 10, 43200, "gone"))
	other := receiveBehind(t, ctx, b, tq, 2, takeParams("q", 10, 30, "other"))
	cancel()
	select {
	case r := <-left:
		if len(r.ms) != 0 {
			t.Fatalf("the call whose client went away received %q", bodies(r.ms))
		}
	case <-time.After(10 * time.Second):
		b.takes.handOff(q.id, tq) // so that the broker can close
		t.Fatal("the call whose client went away still waits in the line")
	}
	awaitWaiting(t, b, tq, 1)
	b.takes.handOff(q.id, tq)
	r := <-other
	if r.err != nil || bodies(r.ms) != numbered(0, 10) {
		t.Fatalf("the other call received %q (%v), want %q", bodies(r.ms), r.err, numbered(0, 10))
	}
	ms, err := b.ReceiveMessages(ctx, takeParams("q", 10, 30, "next"))
	if err != nil || bodies(ms) != numbered(10, 20) {
		t.Fatalf("the next receive got %q (%v), want %q", bodies(ms), err, numbered(10, 20))
	}
}

// A statement that fails answers every call it carried with its error,
// and the queue's next receives go on.
func TestGatheredReceiveFailureAnswersEveryCall(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	q := numberedQueue(t, b, "q", 20)

	// Without the function that appends a receive's event, the statement
	// fails.
	var def string
	if err := b.pool.QueryRow(ctx, `SELECT pg_get_functiondef('tidemq_append_events'::regproc)`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `DROP FUNCTION tidemq_append_events`); err != nil {
		t.Fatal(err)
	}
	tq := holdTakes(b, q.id)
	calls := []<-chan receiveResult{
		receiveBehind(t, ctx, b, tq, 1, takeParams("q", 10, 30, "a")),
		receiveBehind(t, ctx, b, tq, 2, takeParams("q", 10, 30, "b")),
		receiveBehind(t, ctx, b, tq, 3, takeParams("q", 10, 30, "c")),
	}
	b.takes.handOff(q.id, tq)
	for i, ch := range calls {
		if r := <-ch; r.err == nil || len(r.ms) != 0 {
			t.Fatalf("call %d of the failed statement: %d messages, error %v", i, len(r.ms), r.err)
		}
	}
	if _, err := b.pool.Exec(ctx, def); err != nil {
		t.Fatal(err)
	}
	ms, err := b.ReceiveMessages(ctx, takeParams("q", 10, 30, "after"))
	if err != nil || bodies(ms) != numbered(0, 10) {
		t.Fatalf("the receive after the failure got %q (%v), want %q", bodies(ms), err, numbered(0, 10))
	}
}

// Many consumers of one queue, gathered or not, receive every message
// exactly once.
func TestConcurrentReceivesGetEachMessageOnce(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	const n, consumers = 400, 16
	sendNumbered(t, b, "q", 0, n)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, consumers)
	for i := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, err := b.ReceiveMessages(ctx, takeParams("q", 1+i%10, 300, fmt.Sprint(i)))
				if err != nil {
					errs <- err
					return
				}
				if len(ms) == 0 {
					return
				}
				mu.Lock()
				for _, m := range ms {
					seen[m.Body]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("%d distinct messages received, want %d", len(seen), n)
	}
	for body, k := range seen {
		if k != 1 {
			t.Fatalf("%s received %d times", body, k)
		}
	}
}

// Receives waiting in a queue's line hold none of the pool's
// connections: more of them wait than the pool has connections, the
// node's other requests go on meanwhile, and one statement carries them
// all.
func TestWaitingReceivesGiveTheirConnectionsBack(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	calls := DefaultMaxConns + 10
	q := numberedQueue(t, b, "q", calls*2)
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "other"}); err != nil {
		t.Fatal(err)
	}

	tq := holdTakes(b, q.id)
	handOff := sync.OnceFunc(func() { b.takes.handOff(q.id, tq) })
	t.Cleanup(handOff) // before the broker closes, if the test failed first
	var results []<-chan receiveResult
	for i := range calls {
		results = append(results, receiveBehind(t, ctx, b, tq, i+1, takeParams("q", 2, 30, fmt.Sprint(i))))
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.SendMessages(sctx, tidemq.SendMessagesParams{Queue: "other", Entries: []tidemq.SendEntry{{ID: "1", Body: "meanwhile"}}}); err != nil {
		t.Fatalf("a send while %d receives wait: %v", calls, err)
	}
	before := b.takes.statements.Load()
	handOff()
	seen := map[string]bool{}
	for i, ch := range results {
		r := <-ch
		if r.err != nil || len(r.ms) != 2 {
			t.Fatalf("call %d: %d messages, %v", i, len(r.ms), r.err)
		}
		for _, m := range r.ms {
			seen[m.Body] = true
		}
	}
	if len(seen) != calls*2 {
		t.Fatalf("%d calls received %d distinct messages, want %d", calls, len(seen), calls*2)
	}
	if n := b.takes.statements.Load() - before; n != 1 {
		t.Fatalf("%d gathered receives ran %d statements, want 1", calls, n)
	}
}

// A statement whose runner panics answers the other calls it carried
// with an error, not with an empty success.
func TestGatheredReceivePanicAnswersTheOthersWithAnError(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	q := numberedQueue(t, b, "q", 0)
	tq := holdTakes(b, q.id)
	run := func(t *take, stmt round) <-chan error {
		ch := make(chan error, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					ch <- fmt.Errorf("panicked: %v", p)
				}
			}()
			h := &heldConn{pool: b.pool}
			defer h.release()
			ch <- b.takes.run(ctx, b, h, q, t, stmt, nil)
		}()
		return ch
	}
	runner := run(&take{max: 10, ctx: ctx}, func(context.Context, time.Time, []*take) error { panic("boom") })
	awaitWaiting(t, b, tq, 1)
	other := run(&take{max: 10, ctx: ctx}, func(context.Context, time.Time, []*take) error {
		return fmt.Errorf("the carried call ran a statement of its own")
	})
	awaitWaiting(t, b, tq, 2)
	b.takes.handOff(q.id, tq)
	if err := <-runner; err == nil || err.Error() != "panicked: boom" {
		t.Fatalf("the runner returned %v, want its panic", err)
	}
	if err := <-other; err != errUnfinishedTake {
		t.Fatalf("the call carried by the statement that panicked got %v, want %v", err, errUnfinishedTake)
	}
}
