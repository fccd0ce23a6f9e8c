package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

// groupedQueue creates the FIFO queue name (with attrs besides) and
// sends it per messages in each of groups (sendGroups).
func groupedQueue(t *testing.T, b *Broker, name string, groups string, per int, attrs ...string) *queue {
	t.Helper()
	ctx := context.Background()
	a := map[string]string{tidemq.AttrFifoQueue: "true"}
	for i := 0; i+1 < len(attrs); i += 2 {
		a[attrs[i]] = attrs[i+1]
	}
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: a}); err != nil {
		t.Fatal(err)
	}
	q, err := b.getQueue(ctx, b.pool, name, false)
	if err != nil {
		t.Fatal(err)
	}
	sendGroups(t, b, name, groups, per)
	return q
}

// sendGroups sends FIFO queue name per messages in each of groups, group
// after group, a millisecond apart: A0, A1, ... in group A. (Heads ready
// at the same instant would all be locked: the lock statement goes on
// through the heads of its last one's instant.)
func sendGroups(t *testing.T, b *Broker, name string, groups string, per int) {
	t.Helper()
	for _, g := range groups {
		b.clock.(*clocktest.Clock).Advance(time.Millisecond)
		var es []tidemq.SendEntry
		for i := range per {
			body := fmt.Sprintf("%c%d", g, i)
			es = append(es, tidemq.SendEntry{ID: body, Body: body, MessageGroupID: string(g), MessageDeduplicationID: body})
			if len(es) == tidemq.MaxBatchEntries || i == per-1 {
				sendAll(t, b, name, es)
				es = nil
			}
		}
	}
}

// gathered holds the receives of calls behind q's running statement,
// lets them go in one statement, and returns what each received, failing
// unless it was one statement.
func gathered(t *testing.T, b *Broker, q *queue, calls []tidemq.ReceiveMessagesParams) [][]*tidemq.Message {
	t.Helper()
	ctx := context.Background()
	tq := holdTakes(b, q.id)
	var results []<-chan receiveResult
	for i, p := range calls {
		results = append(results, receiveBehind(t, ctx, b, tq, i+1, p))
	}
	before := b.takes.statements.Load()
	b.takes.handOff(q.id, tq)
	out := make([][]*tidemq.Message, len(calls))
	for i := range calls {
		r := <-results[i]
		if r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
		out[i] = r.ms
	}
	if n := b.takes.statements.Load() - before; n != 1 {
		t.Fatalf("%d gathered receives ran %d statements, want 1", len(calls), n)
	}
	return out
}

func trimmed(ms []*tidemq.Message) string { return strings.TrimSpace(bodies(ms)) }

// FIFO receives that wait behind the queue's running statement go in one
// statement, and the groups' ready runs go to them in the line, each run
// to one call: a call takes runs while it has room, and the run that
// fills it gives it only what it has room for, the rest staying in its
// group behind what is in flight.
func TestGatheredFIFOReceivesHandEachGroupToOneCall(t *testing.T) {
	b := openInternal(t)
	clock := b.clock.(*clocktest.Clock)
	q := groupedQueue(t, b, "q.fifo", "ABCD", 4)
	start := clock.Now()

	calls := []struct {
		max, vt int
		agent   string
		want    string
	}{
		{5, 10, "a", "A0 A1 A2 A3 B0"},
		{3, 20, "b", "C0 C1 C2"},
		{10, 40, "c", "D0 D1 D2 D3"},
	}
	var ps []tidemq.ReceiveMessagesParams
	for _, c := range calls {
		ps = append(ps, takeParams("q.fifo", c.max, c.vt, c.agent))
	}
	got := gathered(t, b, q, ps)
	for i, c := range calls {
		if s := trimmed(got[i]); s != c.want {
			t.Fatalf("call %s received %q, want %q", c.agent, s, c.want)
		}
		for _, m := range got[i] {
			last := m.History[len(m.History)-1]
			if last.Kind != tidemq.HistoryReceived || last.Client.UserAgent != c.agent {
				t.Fatalf("call %s: %s's last event is %+v, want its receive by %s", c.agent, m.Body, last, c.agent)
			}
		}
	}

	// B and C wait behind their messages in flight: nothing is ready.
	ctx := context.Background()
	if ms, err := b.ReceiveMessages(ctx, takeParams("q.fifo", 10, 300, "next")); err != nil || len(ms) != 0 {
		t.Fatalf("with every group's head in flight, a receive got %q (%v)", trimmed(ms), err)
	}
	// Each call's messages come back when its own visibility timeout
	// ends: after 10 s, a's (A, and B from B0 on).
	clock.Set(start.Add(10*time.Second + time.Millisecond))
	ms, err := b.ReceiveMessages(ctx, takeParams("q.fifo", 10, 300, "again"))
	if err != nil || trimmed(ms) != "A0 A1 A2 A3 B0 B1 B2 B3" {
		t.Fatalf("after 10 s, received %q (%v), want a's groups A and B", trimmed(ms), err)
	}
	clock.Set(start.Add(20*time.Second + time.Millisecond))
	ms, err = b.ReceiveMessages(ctx, takeParams("q.fifo", 10, 300, "again"))
	if err != nil || trimmed(ms) != "C0 C1 C2 C3" {
		t.Fatalf("after 20 s, received %q (%v), want b's group C", trimmed(ms), err)
	}
}

// Calls of one message each get one group each: a group counts for as
// many messages as one call takes, so the statement locks a group per
// call.
func TestGatheredFIFOReceivesOfOneMessageGetAGroupEach(t *testing.T) {
	b := openInternal(t)
	q := groupedQueue(t, b, "q.fifo", "ABCD", 5)
	var ps []tidemq.ReceiveMessagesParams
	for i := range 3 {
		ps = append(ps, takeParams("q.fifo", 1, 30, fmt.Sprint(i)))
	}
	got := gathered(t, b, q, ps)
	for i, want := range []string{"A0", "B0", "C0"} {
		if s := trimmed(got[i]); s != want {
			t.Fatalf("call %d received %q, want %q", i, s, want)
		}
	}
}

// Calls of different sizes: the lock statement hands the runs to the
// calls as the receive statement will, so the small calls that big runs
// fill do not leave the last call without a group.
func TestGatheredFIFOReceivesOfMixedSizesEachGetAGroup(t *testing.T) {
	b := openInternal(t)
	q := groupedQueue(t, b, "q.fifo", "ABCD", 3)
	ps := []tidemq.ReceiveMessagesParams{
		takeParams("q.fifo", 1, 30, "a"),
		takeParams("q.fifo", 1, 30, "b"),
		takeParams("q.fifo", 3, 30, "c"),
	}
	got := gathered(t, b, q, ps)
	for i, want := range []string{"A0", "B0", "C0 C1 C2"} {
		if s := trimmed(got[i]); s != want {
			t.Fatalf("call %d received %q, want %q", i, s, want)
		}
	}
}

// A call whose client goes away once a statement carries it takes
// nothing from it: the group it would have got goes to the next call.
func TestGatheredFIFOReceiveTakesNothingForACallThatIsGone(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	q := groupedQueue(t, b, "q.fifo", "ABC", 3)
	tq := holdTakes(b, q.id)
	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	a := receiveBehind(t, ctx, b, tq, 1, takeParams("q.fifo", 3, 30, "a"))
	left := receiveBehind(t, gone, b, tq, 2, takeParams("q.fifo", 3, 43200, "gone"))
	c := receiveBehind(t, ctx, b, tq, 3, takeParams("q.fifo", 3, 30, "c"))
	before := b.takes.statements.Load()
	// The hand-off (takes.handOff's) takes the line with the client
	// already gone: the call cannot leave it, and the statement carries it.
	b.takes.mu.Lock()
	cancel()
	next := tq.waiting
	tq.waiting = nil
	next[0].lead = next
	close(next[0].done)
	b.takes.mu.Unlock()

	if r := <-left; len(r.ms) != 0 {
		t.Fatalf("the call whose client went away received %q", trimmed(r.ms))
	}
	for _, w := range []struct {
		ch   <-chan receiveResult
		want string
	}{{a, "A0 A1 A2"}, {c, "B0 B1 B2"}} {
		r := <-w.ch
		if r.err != nil || trimmed(r.ms) != w.want {
			t.Fatalf("received %q (%v), want %q", trimmed(r.ms), r.err, w.want)
		}
	}
	if n := b.takes.statements.Load() - before; n != 1 {
		t.Fatalf("the three calls ran %d statements, want 1", n)
	}
	ms, err := b.ReceiveMessages(ctx, takeParams("q.fifo", 10, 30, "next"))
	if err != nil || trimmed(ms) != "C0 C1 C2" {
		t.Fatalf("the next receive got %q (%v), want C's run", trimmed(ms), err)
	}
}

// Many consumers of one FIFO queue receive every message exactly once,
// each group's in order, and never a group's message while an earlier
// one of it is in flight.
func TestConcurrentFIFOReceivesKeepEachGroupInOrder(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	const groups, per, consumers = "ABCDEFGH", 40, 12
	groupedQueue(t, b, "q.fifo", groups, per)
	var mu sync.Mutex
	next := map[byte]int{} // each group's next message, as deleted
	var wg sync.WaitGroup
	errs := make(chan error, consumers)
	for i := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, err := b.ReceiveMessages(ctx, takeParams("q.fifo", 1+i%10, 300, fmt.Sprint(i)))
				if err != nil {
					errs <- err
					return
				}
				if len(ms) == 0 {
					mu.Lock()
					done := len(next) == len(groups) && func() bool {
						for _, n := range next {
							if n != per {
								return false
							}
						}
						return true
					}()
					mu.Unlock()
					if done {
						return
					}
					continue
				}
				mu.Lock()
				for _, m := range ms {
					g, n := m.Body[0], 0
					fmt.Sscan(m.Body[1:], &n)
					if n != next[g] {
						mu.Unlock()
						errs <- fmt.Errorf("consumer %d received %s, want %c%d next", i, m.Body, g, next[g])
						return
					}
					next[g]++
				}
				mu.Unlock()
				// Delete after the bookkeeping: the group's next message
				// can be received only once this one is gone.
				var es []tidemq.DeleteEntry
				for k, m := range ms {
					es = append(es, tidemq.DeleteEntry{ID: fmt.Sprint(k), ReceiptHandle: m.ReceiptHandle})
				}
				res, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q.fifo", Entries: es, Batch: true})
				if err == nil {
					err = errors.Join(res...)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// overHead creates the FIFO dead-letter queue d.fifo and the FIFO queue
// s.fifo, whose messages move there after one receive, sends s.fifo
// groups, receives A0 and lets it come back: the head of group A is then
// over maxReceiveCount.
func overHead(t *testing.T, b *Broker, groups string, per int) {
	t.Helper()
	if _, err := b.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "d.fifo", Attributes: map[string]string{tidemq.AttrFifoQueue: "true"}}); err != nil {
		t.Fatal(err)
	}
	groupedQueue(t, b, "s.fifo", groups, per, tidemq.AttrRedrivePolicy,
		`{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d.fifo","maxReceiveCount":1}`)
	if ms, err := b.ReceiveMessages(context.Background(), takeParams("s.fifo", 1, 30, "first")); err != nil || trimmed(ms) != "A0" {
		t.Fatalf("first receive got %q (%v), want A0", trimmed(ms), err)
	}
	b.clock.(*clocktest.Clock).Advance(31 * time.Second) // A0 is back, received once
}

// wantDeadLettered checks that d.fifo, overHead's dead-letter queue, holds
// the messages want (trimmed's form), in order.
func wantDeadLettered(t *testing.T, b *Broker, want string) {
	t.Helper()
	if ms, err := b.ReceiveMessages(context.Background(), takeParams("d.fifo", 10, 30, "dlq")); err != nil || trimmed(ms) != want {
		t.Fatalf("the dead-letter queue holds %q (%v), want %q", trimmed(ms), err, want)
	}
}

// A FIFO group whose head was received maxReceiveCount times gives
// nothing until the head has moved to the dead-letter queue; then the
// receive looks again and gets the rest of the group, in order.
func TestGatheredFIFOReceiveMovesAnOverHeadFirst(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	overHead(t, b, "AB", 3)
	ms, err := b.ReceiveMessages(ctx, takeParams("s.fifo", 10, 30, "second"))
	if err != nil || trimmed(ms) != "B0 B1 B2 A1 A2" {
		t.Fatalf("the receive after A0 came back got %q (%v), want B's run, then A's rest once A0 moved", trimmed(ms), err)
	}
	wantDeadLettered(t, b, "A0")
}

// A receive never waits for the row lock of a message over
// maxReceiveCount that another transaction holds (a delete, a redrive,
// another node's move): it serves the other groups at once and leaves
// the message where it is, and a later receive moves it.
func TestGatheredFIFOReceiveDoesNotWaitForALockedOverHead(t *testing.T) {
	b := openInternal(t)
	ctx := context.Background()
	overHead(t, b, "AB", 2)
	holder, _ := lockMessageRow(t, b, "s.fifo", "A0")
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ms, err := b.ReceiveMessages(wctx, takeParams("s.fifo", 10, 30, "second"))
	if err != nil || trimmed(ms) != "B0 B1" {
		t.Fatalf("with A0's row locked, a receive got %q (%v), want B's run at once", trimmed(ms), err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	ms, err = b.ReceiveMessages(ctx, takeParams("s.fifo", 10, 30, "third"))
	if err != nil || trimmed(ms) != "A1" {
		t.Fatalf("once A0's row was free, a receive got %q (%v), want A1 (A0 moved)", trimmed(ms), err)
	}
	wantDeadLettered(t, b, "A0")
}

// While the group a head over maxReceiveCount moves into is held in the
// FIFO dead-letter queue, the head stays, and nothing of its group is
// received, but the group fills no call: the groups behind it in the
// line are served; it moves on a later receive.
func TestGatheredFIFOReceiveLeavesAGroupWhoseHeadCannotMoveYet(t *testing.T) {
	b := openInternal(t)
	clock := b.clock.(*clocktest.Clock)
	ctx := context.Background()
	overHead(t, b, "A", 2)
	sendGroups(t, b, "s.fifo", "B", 2) // behind A0 in the line

	d, err := b.getQueue(ctx, b.pool, "d.fifo", false)
	if err != nil {
		t.Fatal(err)
	}
	holder := holdGroup(t, b, d, "A")
	// The group whose head cannot move fills no call: a receive of one
	// message gets B0, not nothing.
	ms, err := b.ReceiveMessages(ctx, takeParams("s.fifo", 1, 30, "second"))
	if err != nil || trimmed(ms) != "B0" {
		t.Fatalf("with d.fifo's group A held, a receive of one got %q (%v), want B0", trimmed(ms), err)
	}
	clock.Advance(31 * time.Second) // B0 is back too: over maxReceiveCount, and moves
	ms, err = b.ReceiveMessages(ctx, takeParams("s.fifo", 10, 30, "second"))
	if err != nil || trimmed(ms) != "B1" {
		t.Fatalf("with d.fifo's group A held, a receive got %q (%v), want B1 (B0 moved)", trimmed(ms), err)
	}
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	ms, err = b.ReceiveMessages(ctx, takeParams("s.fifo", 10, 30, "third"))
	if err != nil || trimmed(ms) != "A1" {
		t.Fatalf("once d.fifo's group A was free, a receive got %q (%v), want A1 (A0 moved)", trimmed(ms), err)
	}
	wantDeadLettered(t, b, "B0 A0")
}
