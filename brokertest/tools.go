package brokertest

import (
	"time"

	"github.com/tidemq/tidemq"
)

// peekChecks cover PeekMessages, tidemq's look at a queue that changes
// nothing.
func peekChecks() []check {
	return []check{
		{"ReturnsMessagesWithoutReceivingThem", func(e *env) {
			e.create("q", nil)
			for _, b := range []string{"a", "b", "c"} {
				e.sendBody("q", b)
				e.advance(time.Second)
			}
			taken := e.receiveOne("q")
			e.send("q", tidemq.SendEntry{Body: "d", DelaySeconds: intp(60)})
			var want []string
			for _, b := range []string{"a", "b", "c"} {
				if b != taken.Body {
					want = append(want, b)
				}
			}
			for i := 0; i < 2; i++ {
				p := e.peek("q", 10, false)
				if !equalStrings(bodies(p), want) {
					e.t.Fatalf("peek %d returned %v, want the visible messages %v in send order", i, bodies(p), want)
				}
				for _, m := range p {
					if m.ReceiptHandle != "" || m.ApproximateReceiveCount != 0 || !m.FirstReceiveTimestamp.IsZero() {
						e.t.Fatalf("peeked message %q: handle %q, count %d, first receive %v; a peek must not receive",
							m.Body, m.ReceiptHandle, m.ApproximateReceiveCount, m.FirstReceiveTimestamp)
					}
					if hasHistory(m, tidemq.HistoryReceived) {
						e.t.Fatalf("peeked message %q has a receive in its History %v", m.Body, historyKinds(m))
					}
				}
			}
			e.wantCounts("q", 2, 1, 1, "after peeks")
			all := e.peek("q", 10, true)
			if len(all) != 4 {
				e.t.Fatalf("peek with IncludeInflight returned %v, want all 4 messages", bodies(all))
			}
			if first := e.peek("q", 1, false); len(first) != 1 || first[0].Body != want[0] {
				e.t.Fatalf("peek of 1 returned %v, want [%s]", bodies(first), want[0])
			}
			got := e.receive("q", 10)
			if !equalStrings(sortedBodies(got), want) {
				e.t.Fatalf("receive after peeks returned %v, want %v", bodies(got), want)
			}
			for _, m := range got {
				if m.ApproximateReceiveCount != 1 {
					e.t.Fatalf("message %q received after peeks has count %d, want 1", m.Body, m.ApproximateReceiveCount)
				}
			}
		}},
		{"DoesNotLockAFIFOGroup", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			if p := e.peek("f.fifo", 10, false); !equalStrings(bodies(p), []string{"m1", "m2"}) {
				e.t.Fatalf("FIFO peek returned %v", bodies(p))
			}
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"m1", "m2"}) {
				e.t.Fatalf("receive after a FIFO peek returned %v, want [m1 m2]", got)
			}
		}},
		{"ShowsDelayedMessagesAndWhenTheyBecomeReceivable", func(e *env) {
			// Seed 002's backoff: a message sent back with a delay is in the
			// queue; the tools show it, with when it becomes receivable.
			e.create("q", nil)
			e.sendBody("q", "taken")
			taken := e.receiveOne("q")
			e.sendBody("q", "now")
			sent := e.now()
			e.send("q", tidemq.SendEntry{Body: "later", DelaySeconds: intp(300)})
			p, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", Max: intp(10), IncludeDelayed: true})
			e.ok(err, "PeekMessages with IncludeDelayed")
			if !equalStrings(bodies(p), []string{"now", "later"}) {
				e.t.Fatalf("peek with IncludeDelayed returned %v, want [now later] (not the in-flight one)", bodies(p))
			}
			if !p[0].DelayedUntil.IsZero() || !p[0].InvisibleUntil.IsZero() {
				e.t.Fatalf("a visible message peeks as delayed until %v, invisible until %v", p[0].DelayedUntil, p[0].InvisibleUntil)
			}
			if want := sent.Add(300 * time.Second); !p[1].DelayedUntil.Equal(want) || !p[1].InvisibleUntil.IsZero() {
				e.t.Fatalf("the delayed message peeks as delayed until %v (want %v), invisible until %v", p[1].DelayedUntil, want, p[1].InvisibleUntil)
			}
			all := e.peek("q", 10, true)
			for _, m := range all {
				if m.Body == taken.Body && !m.InvisibleUntil.Equal(sent.Add(30*time.Second)) {
					e.t.Fatalf("the in-flight message peeks as invisible until %v, want %v", m.InvisibleUntil, sent.Add(30*time.Second))
				}
			}
			if got := bodies(e.peek("q", 10, false)); !equalStrings(got, []string{"now"}) {
				e.t.Fatalf("plain peek returned %v, want only the visible [now]", got)
			}
			e.advance(300 * time.Second)
			p, err = e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", Max: intp(10), IncludeDelayed: true})
			e.ok(err, "PeekMessages after the delay")
			for _, m := range p {
				if !m.DelayedUntil.IsZero() || !m.InvisibleUntil.IsZero() {
					e.t.Fatalf("after the delay and the visibility timeout, %q peeks as delayed until %v, invisible until %v", m.Body, m.DelayedUntil, m.InvisibleUntil)
				}
			}
		}},
		{"MissingQueue", func(e *env) {
			_, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "missing", Max: intp(10)})
			e.wantCode(err, tidemq.ErrQueueDoesNotExist, "PeekMessages(missing)")
		}},
	}
}

// moveChecks cover MoveMessages: redrive from a dead-letter queue back to
// each message's source, or to a named queue (reference §6 for the
// semantics the move tasks build on).
func moveChecks() []check {
	return []check{
		{"BackToEachMessagesSource", func(e *env) {
			e.create("dlq", nil)
			e.create("src1", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("src2", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			attrs := map[string]tidemq.MessageAttributeValue{"k": {DataType: "Number", StringValue: "7"}}
			e.send("src1", tidemq.SendEntry{Body: "from src1", Attributes: attrs})
			e.sendBody("src2", "from src2")
			e.sendBody("src2", "also from src2")
			e.deadLetter("src1", 1)
			e.deadLetter("src2", 2)
			e.wantCounts("dlq", 3, 0, 0, "after dead-lettering")
			res, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "dlq", Max: 10})
			e.ok(err, "MoveMessages(dlq → sources)")
			if res.Moved != 3 || res.Remaining != 0 {
				e.t.Fatalf("MoveMessages = %+v, want Moved 3, Remaining 0", res)
			}
			e.wantCounts("dlq", 0, 0, 0, "the DLQ after the move")
			e.wantCounts("src1", 1, 0, 0, "src1 after the move")
			e.wantCounts("src2", 2, 0, 0, "src2 after the move")
			// Peek rather than receive: what a receive does with a moved
			// message's receive count is not part of this check.
			m := e.peek("src1", 10, false)
			if len(m) != 1 || m[0].Body != "from src1" {
				e.t.Fatalf("src1 got back %v", bodies(m))
			}
			wantAttributes(e, m[0].Attributes, attrs, "moved message")
			if got := sortedBodies(e.peek("src2", 10, false)); !equalStrings(got, []string{"also from src2", "from src2"}) {
				e.t.Fatalf("src2 got back %v", got)
			}
		}},
		{"ToANamedDestination", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.create("elsewhere", nil)
			e.sendBody("src", "x")
			e.deadLetter("src", 1)
			res, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "dlq", Destination: "elsewhere", Max: 10})
			e.ok(err, "MoveMessages(dlq → elsewhere)")
			if res.Moved != 1 || res.Remaining != 0 {
				e.t.Fatalf("MoveMessages = %+v, want Moved 1, Remaining 0", res)
			}
			e.wantCounts("dlq", 0, 0, 0, "the DLQ")
			e.wantCounts("src", 0, 0, 0, "the source")
			e.wantCounts("elsewhere", 1, 0, 0, "the destination")
			if m := e.receive("elsewhere", 10); len(m) != 1 || m[0].Body != "x" {
				e.t.Fatalf("destination got %v", bodies(m))
			}
		}},
		{"MaxBoundsTheMove", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			for _, b := range []string{"a", "b", "c"} {
				e.sendBody("src", b)
			}
			e.deadLetter("src", 3)
			res, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "dlq", Max: 2})
			e.ok(err, "MoveMessages(Max 2)")
			if res.Moved != 2 || res.Remaining != 1 {
				e.t.Fatalf("MoveMessages(Max 2) = %+v, want Moved 2, Remaining 1", res)
			}
			e.wantCounts("dlq", 1, 0, 0, "the DLQ after moving 2 of 3")
			e.wantCounts("src", 2, 0, 0, "the source after moving 2 of 3")
		}},
		{"OnlyVisibleMessagesMove", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src", "a")
			e.sendBody("src", "b")
			e.deadLetter("src", 2)
			held := e.receiveOne("dlq")
			res, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "dlq", Max: 10})
			e.ok(err, "MoveMessages with one message in flight")
			if res.Moved != 1 || res.Remaining != 0 {
				e.t.Fatalf("MoveMessages = %+v, want Moved 1, Remaining 0", res)
			}
			e.wantCounts("dlq", 0, 1, 0, "the DLQ (its in-flight message stays)")
			e.wantCounts("src", 1, 0, 0, "the source")
			e.del("dlq", held.ReceiptHandle)
			e.wantCounts("dlq", 0, 0, 0, "the DLQ after deleting its in-flight message")
		}},
		{"MovedMessageIsInExactlyOneQueue", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src", "x")
			e.deadLetter("src", 1)
			_, err := e.b.MoveMessages(e.ctx, tidemq.MoveMessagesParams{Source: "dlq", Max: 10})
			e.ok(err, "MoveMessages")
			inSrc := e.peek("src", 10, true)
			inDLQ := e.peek("dlq", 10, true)
			if len(inSrc)+len(inDLQ) != 1 || len(inSrc) != 1 {
				e.t.Fatalf("after the move the source holds %d and the DLQ %d messages, want 1 and 0", len(inSrc), len(inDLQ))
			}
			if !hasHistory(inSrc[0], tidemq.HistoryDeadLetter) {
				e.t.Errorf("moved message's History %v lost its dead-letter event", historyKinds(inSrc[0]))
			}
			e.wantCounts("src", 1, 0, 0, "the source after the move")
			e.wantCounts("dlq", 0, 0, 0, "the DLQ after the move")
		}},
	}
}

// peek calls PeekMessages and fails the test on an error.
func (e *env) peek(q string, max int, inflight bool) []*tidemq.Message {
	e.t.Helper()
	m, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: q, Max: intp(max), IncludeInflight: inflight})
	e.ok(err, "PeekMessages(%s)", q)
	if len(m) > max {
		e.t.Fatalf("PeekMessages(%s, Max %d) returned %d messages", q, max, len(m))
	}
	return m
}

// deadLetter drives the n visible messages of src (whose RedrivePolicy has
// maxReceiveCount 1) into its dead-letter queue: one receive each, the
// visibility timeout, and the receive that moves them.
func (e *env) deadLetter(src string, n int) {
	e.t.Helper()
	got := 0
	for got < n {
		m := e.receive(src, 10, withVisibility(10))
		if len(m) == 0 {
			e.t.Fatalf("dead-lettering: received %d of %d messages from %s", got, n, src)
		}
		got += len(m)
	}
	e.advance(11 * time.Second)
	e.receiveNone(src, "the receive that dead-letters")
}
