package brokertest

import (
	"fmt"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// visibilityChecks cover visibility timeouts: the queue's, a receive's
// override, and ChangeMessageVisibility (reference §4 VisibilityTimeout, §5
// ChangeMessageVisibility and receipt handles).
//
// A message received at T with timeout v is checked hidden at T+v-1s and
// visible at T+v+1s, so that the checks do not depend on which side of the
// exact deadline a backend puts the instant T+v.
func visibilityChecks() []check {
	return []check{
		{"HistoryKeepsTheFirstAndTheLatestEvents", func(e *env) {
			// A message received over and over keeps a bounded story: the
			// send, its first recorded event and the latest ones
			// (tidemq.AppendHistory), whichever store keeps it.
			e.create("q", nil)
			e.sendBody("q", "x")
			const receives = tidemq.MaxHistoryEvents + 5
			var m *tidemq.Message
			for i := 1; i <= receives; i++ {
				m = e.receiveOne("q", withVisibility(1))
				e.advance(2 * time.Second)
			}
			h := m.History
			if len(h) != tidemq.MaxHistoryEvents+1 {
				e.t.Fatalf("after %d receives the history holds %d events %v, want %d (the send and %d kept)",
					receives, len(h), historyKinds(m), tidemq.MaxHistoryEvents+1, tidemq.MaxHistoryEvents)
			}
			first, prev, last := h[1], h[len(h)-2], h[len(h)-1]
			if h[0].Kind != tidemq.HistorySent || first.Kind != tidemq.HistoryReceived || !strings.HasPrefix(first.Detail, "receive 1,") {
				e.t.Errorf("history starts %s, %s %q; want the send, then the first receive", h[0].Kind, first.Kind, first.Detail)
			}
			if want := fmt.Sprintf("receive %d,", receives); last.Kind != tidemq.HistoryReceived || !strings.HasPrefix(last.Detail, want) {
				e.t.Errorf("history ends %s %q, want the latest receive (%q)", last.Kind, last.Detail, want)
			}
			if prev.Kind != tidemq.HistoryExpired {
				e.t.Errorf("before the latest receive the history has %s, want %s", prev.Kind, tidemq.HistoryExpired)
			}
		}},
		{"DefaultIs30Seconds", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			e.receiveOne("q", withQueueVisibility())
			e.wantCounts("q", 0, 1, 0, "in flight")
			e.advance(29 * time.Second)
			e.receiveNone("q", "29 s after a receive with the default 30 s timeout")
			e.advance(2 * time.Second)
			m := e.receiveOne("q")
			if m.ApproximateReceiveCount != 2 {
				e.t.Fatalf("after the timeout the message came back with ApproximateReceiveCount %d, want 2", m.ApproximateReceiveCount)
			}
		}},
		{"PerQueueTimeout", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrVisibilityTimeout: "10"})
			e.sendBody("q", "x")
			e.receiveOne("q", withQueueVisibility())
			e.advance(9 * time.Second)
			e.receiveNone("q", "9 s after a receive on a queue with VisibilityTimeout 10")
			e.advance(2 * time.Second)
			e.receiveOne("q")
		}},
		{"QueueTimeoutChangeAppliesToLaterReceives", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			e.receiveOne("q", withQueueVisibility())
			// A message already in flight keeps the timeout of its receive.
			e.set("q", map[string]string{tidemq.AttrVisibilityTimeout: "100"})
			e.advance(29 * time.Second)
			e.receiveNone("q", "29 s after a receive with the queue's 30 s")
			e.advance(2 * time.Second)
			e.receiveOne("q", withQueueVisibility())
			e.advance(99 * time.Second)
			e.receiveNone("q", "99 s after a receive on a queue whose VisibilityTimeout was set to 100")
			e.advance(2 * time.Second)
			e.receiveOne("q")
		}},
		{"PerReceiveOverride", func(e *env) {
			e.create("q", map[string]string{tidemq.AttrVisibilityTimeout: "60"})
			e.sendBody("q", "x")
			e.receiveOne("q", withVisibility(5))
			e.advance(4 * time.Second)
			e.receiveNone("q", "4 s after a receive with VisibilityTimeout 5")
			e.advance(2 * time.Second)
			// The override applied to that receive only: this one uses 60.
			e.receiveOne("q", withQueueVisibility())
			e.advance(59 * time.Second)
			e.receiveNone("q", "59 s after a receive with the queue's 60 s")
			e.advance(2 * time.Second)
			// Zero makes the message visible again at once.
			e.receiveOne("q", withVisibility(0))
			m := e.receiveOne("q")
			if m.ApproximateReceiveCount != 4 {
				e.t.Fatalf("ApproximateReceiveCount after four receives = %d", m.ApproximateReceiveCount)
			}
		}},
		{"ChangeCountsFromNow", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q")
			e.advance(20 * time.Second)
			e.change("q", m.ReceiptHandle, 15)
			e.advance(14 * time.Second)
			e.receiveNone("q", "14 s after changing the visibility to 15 s (34 s after the receive)")
			e.advance(2 * time.Second)
			e.receiveOne("q")
		}},
		{"ChangeCanShortenAndExtend", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			m := e.receive("q", 10)
			if len(m) != 2 {
				e.t.Fatalf("received %d messages, want 2", len(m))
			}
			e.change("q", m[0].ReceiptHandle, 5)
			e.change("q", m[1].ReceiptHandle, 100)
			e.advance(6 * time.Second)
			got := e.receive("q", 10)
			if len(got) != 1 || got[0].MessageID != m[0].MessageID {
				e.t.Fatalf("6 s after shortening a to 5 s, receive returned %v, want a", bodies(got))
			}
			e.del("q", got[0].ReceiptHandle)
			e.advance(93 * time.Second)
			e.receiveNone("q", "99 s after extending b to 100 s")
			e.advance(2 * time.Second)
			if got := e.receiveOne("q"); got.MessageID != m[1].MessageID {
				e.t.Fatalf("after b's extension ran out, receive returned %q, want b", got.Body)
			}
		}},
		{"ChangeToZeroMakesVisibleAtOnce", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q")
			e.change("q", m.ReceiptHandle, 0)
			e.wantCounts("q", 1, 0, 0, "after ChangeMessageVisibility 0")
			m2 := e.receiveOne("q")
			if m2.ApproximateReceiveCount != 2 || m2.ReceiptHandle == m.ReceiptHandle {
				e.t.Fatalf("receive after ChangeMessageVisibility 0: count %d, same handle %v", m2.ApproximateReceiveCount,
					m2.ReceiptHandle == m.ReceiptHandle)
			}
		}},
		{"ChangeIsNotRemembered", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q")
			e.change("q", m.ReceiptHandle, 100)
			e.advance(101 * time.Second)
			e.receiveOne("q", withQueueVisibility())
			e.advance(29 * time.Second)
			e.receiveNone("q", "29 s after the next receive (the queue's 30 s applies again)")
			e.advance(2 * time.Second)
			e.receiveOne("q")
		}},
		{"ChangeBeyond12HoursFromTheReceiveIsInvalid", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q", withVisibility(tidemq.MaxVisibilityTimeout))
			e.advance(time.Hour)
			e.wantCode(e.tryChange("q", m.ReceiptHandle, tidemq.MaxVisibilityTimeout), tidemq.ErrInvalidParameterValue,
				"ChangeMessageVisibility 43200 one hour after the receive (13 h in total)")
			e.wantCode(e.tryChange("q", m.ReceiptHandle, tidemq.MaxVisibilityTimeout+1), tidemq.ErrInvalidParameterValue,
				"ChangeMessageVisibility 43201")
			e.wantCode(e.tryChange("q", m.ReceiptHandle, -1), tidemq.ErrInvalidParameterValue, "ChangeMessageVisibility -1")
			e.wantCounts("q", 0, 1, 0, "after refused changes")
			// 11 h from now is 12 h less a minute in total: allowed, and not
			// clamped.
			e.change("q", m.ReceiptHandle, 11*3600-60)
			e.advance((11*3600 - 61) * time.Second)
			e.receiveNone("q", "1 s before the allowed extension ends")
			e.advance(2 * time.Second)
			e.receiveOne("q")
		}},
		{"ChangeWithExpiredHandleOnStandardIsNotAnError", func(e *env) {
			// Reference §5: on a standard queue ChangeMessageVisibility with
			// an expired handle returned 200 on AWS.
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q", withVisibility(5))
			e.advance(6 * time.Second)
			e.ok(e.tryChange("q", m.ReceiptHandle, 10), "ChangeMessageVisibility with an expired handle on a standard queue")
		}},
		{"ChangeAfterDeleteIsAnError", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q")
			e.del("q", m.ReceiptHandle)
			e.wantClientError(e.tryChange("q", m.ReceiptHandle, 10), "ChangeMessageVisibility of a deleted message")
			e.wantCounts("q", 0, 0, 0, "after a refused change of a deleted message")
		}},
	}
}

// withQueueVisibility leaves the receive's VisibilityTimeout unset, so the
// queue's applies (the default of params, spelled out for the reader).
func withQueueVisibility() recvOpt {
	return func(p *tidemq.ReceiveMessagesParams) { p.VisibilityTimeout = nil }
}
