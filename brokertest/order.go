package brokertest

import (
	"time"

	"github.com/tidemq/tidemq"
)

// requeueChecks cover the place of a standard queue's message that comes
// back from in flight: it is served first, before the messages sent while
// it was away (AWS-recorded, test_inflight_message_requeue; the engine
// serves a standard queue lowest sequence first).
func requeueChecks() []check {
	return []check{
		{"BackFromInFlightIsServedFirst", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "m1")
			e.receiveOne("q", withVisibility(10))
			e.advance(5 * time.Second)
			e.sendBody("q", "m2")
			e.sendBody("q", "m3")
			e.advance(6 * time.Second) // m1's timeout ran out at T+10
			if got := bodies(e.receive("q", 10)); !equalStrings(got, []string{"m1", "m2", "m3"}) {
				e.t.Fatalf("after m1's visibility timeout, receive returned %v, want [m1 m2 m3]", got)
			}
		}},
		{"BackFromInFlightIsServedFirstOneAtATime", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "m1")
			e.receiveOne("q", withVisibility(10))
			e.advance(5 * time.Second)
			e.sendBody("q", "m2")
			e.advance(6 * time.Second)
			m := e.receiveOne("q")
			if m.Body != "m1" || m.ApproximateReceiveCount != 2 {
				e.t.Fatalf("after m1's visibility timeout, receive returned %q (count %d), want m1 (count 2)", m.Body, m.ApproximateReceiveCount)
			}
			if m := e.receiveOne("q"); m.Body != "m2" {
				e.t.Fatalf("next receive returned %q, want m2", m.Body)
			}
		}},
		{"ReleasedIsServedFirst", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "m1")
			m1 := e.receiveOne("q", withVisibility(60))
			e.advance(5 * time.Second)
			e.sendBody("q", "m2")
			e.advance(5 * time.Second)
			e.change("q", m1.ReceiptHandle, 0)
			if got := bodies(e.receive("q", 10)); !equalStrings(got, []string{"m1", "m2"}) {
				e.t.Fatalf("after releasing m1, receive returned %v, want [m1 m2]", got)
			}
		}},
	}
}

// groupOrderChecks cover the order in which a FIFO queue serves its groups
// (tidemq.GroupHead; 8 AWS-recorded cases): a group that was received and
// came back goes to the back of the line of waiting groups.
func groupOrderChecks() []check {
	return []check{
		{"UntouchedGroupBeforeReturnedOnes", func(e *env) {
			e.create("f.fifo", nil)
			for i, s := range []struct{ group, body string }{
				{"g1", "g1-m1"}, {"g1", "g1-m2"}, {"g2", "g2-m1"}, {"g2", "g2-m2"}, {"g3", "g3-m1"},
			} {
				e.sendFIFO("f.fifo", s.group, itoa(i), s.body)
			}
			if got := bodies(e.receive("f.fifo", 2, withVisibility(10))); !equalStrings(got, []string{"g1-m1", "g1-m2"}) {
				e.t.Fatalf("first receive of 2 returned %v, want [g1-m1 g1-m2]", got)
			}
			if got := bodies(e.receive("f.fifo", 2, withVisibility(10))); !equalStrings(got, []string{"g2-m1", "g2-m2"}) {
				e.t.Fatalf("second receive of 2 returned %v, want [g2-m1 g2-m2]", got)
			}
			e.advance(11 * time.Second)
			want := []string{"g3-m1", "g1-m1", "g1-m2", "g2-m1", "g2-m2"}
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, want) {
				e.t.Fatalf("after g1 and g2 came back, receive returned %v, want %v (AWS: the untouched group first)", got, want)
			}
		}},
		{"ReleasedGroupGoesBehind", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g1", "1", "g1-m1")
			e.sendFIFO("f.fifo", "g2", "2", "g2-m1")
			m := e.receiveOne("f.fifo")
			if m.Body != "g1-m1" {
				e.t.Fatalf("first receive returned %q, want g1-m1", m.Body)
			}
			e.change("f.fifo", m.ReceiptHandle, 0)
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"g2-m1", "g1-m1"}) {
				e.t.Fatalf("after ChangeMessageVisibility(g1-m1, 0), receive returned %v, want [g2-m1 g1-m1]", got)
			}
		}},
		{"ReturnedGroupStandsBeforeLaterGroups", func(e *env) {
			// The line is kept in time: a group that came back before
			// another group's first message was sent is served first.
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g1", "1", "g1-m1")
			e.receiveOne("f.fifo", withVisibility(10))
			e.advance(11 * time.Second) // g1 back at T+10
			e.sendFIFO("f.fifo", "g2", "2", "g2-m1")
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"g1-m1", "g2-m1"}) {
				e.t.Fatalf("receive returned %v, want [g1-m1 g2-m1]", got)
			}
		}},
		{"DeletedHeadKeepsTheGroupsPlace", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g1", "1", "g1-m1")
			e.sendFIFO("f.fifo", "g1", "2", "g1-m2")
			e.sendFIFO("f.fifo", "g2", "3", "g2-m1")
			m := e.receiveOne("f.fifo")
			e.del("f.fifo", m.ReceiptHandle)
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"g1-m2", "g2-m1"}) {
				e.t.Fatalf("after deleting g1-m1, receive returned %v, want [g1-m2 g2-m1]", got)
			}
		}},
		{"OrderSurvivesRestart", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g1", "1", "g1-m1")
			e.sendFIFO("f.fifo", "g2", "2", "g2-m1")
			m := e.receiveOne("f.fifo")
			e.change("f.fifo", m.ReceiptHandle, 0)
			e.restart()
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"g2-m1", "g1-m1"}) {
				e.t.Fatalf("after a restart, receive returned %v, want [g2-m1 g1-m1]", got)
			}
		}},
	}
}

// dedupKeyChecks cover the deduplication window of a FIFO queue with
// DeduplicationScope messageGroup (tidemq.QueueSettings.DedupKey): an id
// is remembered per group, whichever way it was given.
func dedupKeyChecks() []check {
	group := map[string]string{tidemq.AttrDeduplicationScope: "messageGroup"}
	return []check{
		{"ContentBasedPerGroup", func(e *env) {
			e.create("f.fifo", map[string]string{tidemq.AttrDeduplicationScope: "messageGroup", tidemq.AttrContentBasedDeduplication: "true"})
			a := e.sendFIFO("f.fifo", "g1", "", "same body")
			b := e.sendFIFO("f.fifo", "g2", "", "same body")
			c := e.sendFIFO("f.fifo", "g1", "", "same body")
			if a.MessageID == b.MessageID || c.MessageID != a.MessageID || c.SequenceNumber != a.SequenceNumber {
				e.t.Fatalf("content-based ids per group: g1 %s, g2 %s, g1 again %s; want g1's twice and g2's apart", a.MessageID, b.MessageID, c.MessageID)
			}
			e.wantCounts("f.fifo", 2, 0, 0, "one body in two groups")
		}},
		{"PerGroupInOneBatch", func(e *env) {
			e.create("f.fifo", group)
			res, err := e.trySendBatch("f.fifo",
				tidemq.SendEntry{ID: "a", Body: "a", MessageGroupID: "g1", MessageDeduplicationID: "d"},
				tidemq.SendEntry{ID: "b", Body: "b", MessageGroupID: "g2", MessageDeduplicationID: "d"},
				tidemq.SendEntry{ID: "c", Body: "c", MessageGroupID: "g1", MessageDeduplicationID: "d"},
			)
			e.ok(err, "SendMessageBatch")
			if res[0].MessageID == res[1].MessageID || res[2].MessageID != res[0].MessageID {
				e.t.Fatalf("batch ids %s %s %s: want the first and third alike, the second apart", res[0].MessageID, res[1].MessageID, res[2].MessageID)
			}
			if got := sortedBodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"a", "b"}) {
				e.t.Fatalf("received %v, want [a b]", got)
			}
		}},
		{"GroupAndIDDoNotRunTogether", func(e *env) {
			// The key joins the group and the id: ("g1", "x") and ("g", "1x")
			// must not meet, nor ("g1", "d") and a queue-scoped "g1 d".
			e.create("f.fifo", group)
			a := e.sendFIFO("f.fifo", "g1", "x", "a")
			b := e.sendFIFO("f.fifo", "g", "1x", "b")
			if a.MessageID == b.MessageID {
				e.t.Fatal("(g1, x) and (g, 1x) were taken for one message")
			}
			e.wantCounts("f.fifo", 2, 0, 0, "two messages")
		}},
		{"PerGroupAfterRestart", func(e *env) {
			e.create("f.fifo", group)
			a := e.sendFIFO("f.fifo", "g1", "d", "a")
			e.restart()
			b := e.sendFIFO("f.fifo", "g2", "d", "b")
			c := e.sendFIFO("f.fifo", "g1", "d", "c")
			if a.MessageID == b.MessageID || c.MessageID != a.MessageID {
				e.t.Fatalf("after a restart: g1 %s, g2 %s, g1 again %s; want g1's twice and g2's apart", a.MessageID, b.MessageID, c.MessageID)
			}
		}},
		{"WindowEndsPerGroup", func(e *env) {
			e.create("f.fifo", group)
			a := e.sendFIFO("f.fifo", "g1", "d", "a")
			e.advance(tidemq.DedupWindow - time.Second)
			b := e.sendFIFO("f.fifo", "g2", "d", "b")
			e.advance(2 * time.Second) // g1's window is over, g2's is not
			if c := e.sendFIFO("f.fifo", "g1", "d", "c"); c.MessageID == a.MessageID {
				e.t.Fatal("g1's id was still remembered after its five minutes")
			}
			if d := e.sendFIFO("f.fifo", "g2", "d", "d"); d.MessageID != b.MessageID {
				e.t.Fatal("g2's id was forgotten within its five minutes")
			}
		}},
	}
}
