package brokertest

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// Reference §5 wordings of the two FIFO send errors.
const (
	msgNeedGroup = "The request must contain the parameter MessageGroupId."
	msgNeedDedup = "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"
)

// fifoChecks cover FIFO queues: required ids, ordering, group locks,
// deduplication, sequence numbers and receive attempts (reference §4, §5).
func fifoChecks() []check {
	return []check{
		{"MessageGroupIDRequired", func(e *env) {
			e.create("f.fifo", nil)
			_, err := e.trySend("f.fifo", tidemq.SendEntry{Body: "x", MessageDeduplicationID: "d"})
			e.wantMessage(err, tidemq.ErrMissingParameter, msgNeedGroup, "FIFO SendMessage without MessageGroupId")
			e.wantCounts("f.fifo", 0, 0, 0, "after the refused send")
		}},
		{"DeduplicationIDRequiredWithoutContentBasedDedup", func(e *env) {
			e.create("f.fifo", nil)
			_, err := e.trySend("f.fifo", tidemq.SendEntry{Body: "x", MessageGroupID: "g"})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, msgNeedDedup, "FIFO SendMessage without MessageDeduplicationId")
			e.wantCounts("f.fifo", 0, 0, 0, "after the refused send")
			e.create("cbd.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			e.sendFIFO("cbd.fifo", "g", "", "x")
		}},
		{"PerMessageDelayAndStandardDedupWording", func(e *env) {
			// AWS words both "…not valid for this queue type." (with the
			// final period).
			e.create("f.fifo", nil)
			_, err := e.trySend("f.fifo", tidemq.SendEntry{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "d", DelaySeconds: intp(5)})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue,
				"Value 5 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", "FIFO SendMessage with DelaySeconds 5")
			e.create("s", nil)
			_, err = e.trySend("s", tidemq.SendEntry{Body: "x", MessageDeduplicationID: "d"})
			e.wantMessage(err, tidemq.ErrInvalidParameterValue,
				"Value d for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.", "standard SendMessage with a MessageDeduplicationId")
		}},
		{"BatchWithoutGroupOrDedupFailsTheWholeRequest", func(e *env) {
			e.create("f.fifo", nil)
			_, err := e.trySendBatch("f.fifo",
				tidemq.SendEntry{ID: "good", Body: "x", MessageGroupID: "g", MessageDeduplicationID: "1"},
				tidemq.SendEntry{ID: "nogroup", Body: "y", MessageDeduplicationID: "2"},
			)
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, msgNeedGroup, "FIFO SendMessageBatch with an entry without MessageGroupId")
			_, err = e.trySendBatch("f.fifo",
				tidemq.SendEntry{ID: "good", Body: "x", MessageGroupID: "g", MessageDeduplicationID: "1"},
				tidemq.SendEntry{ID: "nodedup", Body: "y", MessageGroupID: "g"},
			)
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, msgNeedDedup, "FIFO SendMessageBatch with an entry without MessageDeduplicationId")
			e.wantCounts("f.fifo", 0, 0, 0, "after the refused batches (the good entries must not be sent either)")
		}},
		{"InvalidFIFOTokens", func(e *env) {
			e.create("f.fifo", nil)
			long := fmt.Sprintf("%0129d", 0)
			for _, c := range []tidemq.SendEntry{
				{Body: "x", MessageGroupID: "has space", MessageDeduplicationID: "d"},
				{Body: "x", MessageGroupID: long, MessageDeduplicationID: "d"},
				{Body: "x", MessageGroupID: "g", MessageDeduplicationID: "dédup"},
				{Body: "x", MessageGroupID: "g", MessageDeduplicationID: long},
			} {
				_, err := e.trySend("f.fifo", c)
				e.wantCode(err, tidemq.ErrInvalidParameterValue, "FIFO send with group %.20q, dedup %.20q", c.MessageGroupID, c.MessageDeduplicationID)
			}
			e.sendFIFO("f.fifo", "g!#$%&'()*+,-./:;<=>?@[]^_`{|}~", "D-1.x_y", "punctuation is allowed")
		}},
		{"StrictOrderWithinAGroup", func(e *env) {
			e.create("f.fifo", nil)
			var want []string
			for i := 0; i < 5; i++ {
				body := fmt.Sprintf("single-%d", i)
				e.sendFIFO("f.fifo", "g", body, body)
				want = append(want, body)
			}
			var batch []tidemq.SendEntry
			for i := 0; i < 10; i++ {
				body := fmt.Sprintf("batch-%d", i)
				batch = append(batch, tidemq.SendEntry{ID: fmt.Sprintf("e%d", i), Body: body, MessageGroupID: "g", MessageDeduplicationID: body})
				want = append(want, body)
			}
			res, err := e.trySendBatch("f.fifo", batch...)
			e.ok(err, "FIFO SendMessageBatch")
			for _, r := range res {
				e.ok(r.Err, "batch entry %s", r.ID)
			}
			var got []string
			for len(got) < len(want) {
				m := e.receiveOne("f.fifo")
				got = append(got, m.Body)
				e.del("f.fifo", m.ReceiptHandle)
			}
			if !equalStrings(got, want) {
				e.t.Fatalf("FIFO order: got %v, want %v", got, want)
			}
			e.receiveNone("f.fifo", "after receiving everything")
		}},
		{"OneReceiveFillsFromOneGroupFirst", func(e *env) {
			e.create("f.fifo", nil)
			for i, s := range []struct{ group, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"}, {"a", "a3"}} {
				e.sendFIFO("f.fifo", s.group, fmt.Sprint(i), s.body)
			}
			got := bodies(e.receive("f.fifo", 3))
			if !equalStrings(got, []string{"a1", "a2", "a3"}) {
				e.t.Fatalf("receive of 3 returned %v, want [a1 a2 a3] (as many of one group as possible)", got)
			}
			got = bodies(e.receive("f.fifo", 10))
			if !equalStrings(got, []string{"b1", "b2"}) {
				e.t.Fatalf("next receive returned %v, want [b1 b2]", got)
			}
		}},
		{"OneReceiveMayFillFromOtherGroups", func(e *env) {
			e.create("f.fifo", nil)
			for i, s := range []struct{ group, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"c", "c1"}, {"b", "b2"}} {
				e.sendFIFO("f.fifo", s.group, fmt.Sprint(i), s.body)
			}
			got := e.receive("f.fifo", 10)
			if len(got) != 5 {
				e.t.Fatalf("receive of 10 returned %v, want all 5 messages", bodies(got))
			}
			if b := bodies(got); b[0] != "a1" || b[1] != "a2" {
				e.t.Fatalf("receive of 10 returned %v, want it to start with group a's [a1 a2]", b)
			}
			pos := map[string]int{}
			for i, m := range got {
				pos[m.Body] = i
			}
			if pos["b1"] > pos["b2"] {
				e.t.Fatalf("receive of 10 returned %v: group b out of order", bodies(got))
			}
		}},
		{"GroupLockedWhileInFlight", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "a", "1", "a1")
			e.sendFIFO("f.fifo", "a", "2", "a2")
			e.sendFIFO("f.fifo", "b", "3", "b1")
			a1 := e.receiveOne("f.fifo")
			if a1.Body != "a1" {
				e.t.Fatalf("first receive returned %q, want a1", a1.Body)
			}
			got := e.receive("f.fifo", 10)
			if !equalStrings(bodies(got), []string{"b1"}) {
				e.t.Fatalf("with a1 in flight, receive returned %v, want only [b1] (group a locked, group b served)", bodies(got))
			}
			e.del("f.fifo", got[0].ReceiptHandle)
			e.receiveNone("f.fifo", "with a1 in flight and group b empty")
			// Releasing a1 without deleting it: it comes back before a2.
			e.change("f.fifo", a1.ReceiptHandle, 0)
			got = e.receive("f.fifo", 10)
			if !equalStrings(bodies(got), []string{"a1", "a2"}) {
				e.t.Fatalf("after releasing a1, receive returned %v, want [a1 a2]", bodies(got))
			}
			if got[0].ApproximateReceiveCount != 2 || got[1].ApproximateReceiveCount != 1 {
				e.t.Fatalf("receive counts %d, %d, want 2, 1", got[0].ApproximateReceiveCount, got[1].ApproximateReceiveCount)
			}
			e.del("f.fifo", got[0].ReceiptHandle)
			// a2 still in flight: the group stays locked.
			e.sendFIFO("f.fifo", "a", "4", "a3")
			e.receiveNone("f.fifo", "with a2 in flight")
		}},
		{"EarlierMessageReturnsWhileALaterOneIsInFlight", func(e *env) {
			// AWS holds a message back only while an EARLIER message of its
			// group is in flight: m1 (released) can be received again
			// while m2 is in flight, m3 (after m2) cannot.
			e.create("f.fifo", nil)
			for i := 1; i <= 3; i++ {
				e.sendFIFO("f.fifo", "g", fmt.Sprint(i), fmt.Sprintf("m%d", i))
			}
			e.sendFIFO("f.fifo", "h", "h1", "h1")
			got := e.receive("f.fifo", 3, withVisibility(30))
			if !equalStrings(bodies(got), []string{"m1", "m2", "m3"}) {
				e.t.Fatalf("first receive returned %v, want [m1 m2 m3]", bodies(got))
			}
			m1, m2, m3 := got[0], got[1], got[2]
			e.change("f.fifo", m2.ReceiptHandle, 120) // m2 stays in flight
			e.change("f.fifo", m1.ReceiptHandle, 0)   // m1 visible at once
			// g, released, goes behind h in the line of groups (GroupOrder).
			again := e.receive("f.fifo", 10, withVisibility(300))
			if !equalStrings(bodies(again), []string{"h1", "m1"}) {
				e.t.Fatalf("with m1 released and m2, m3 in flight, receive returned %v, want [h1 m1]", bodies(again))
			}
			if again[1].ApproximateReceiveCount != 2 {
				e.t.Fatalf("m1 received again with count %d, want 2", again[1].ApproximateReceiveCount)
			}
			e.del("f.fifo", again[1].ReceiptHandle)
			// m3's timeout runs out while m2, before it, is still in flight.
			e.advance(31 * time.Second)
			e.wantCounts("f.fifo", 1, 2, 0, "m3 visible, m2 and h1 in flight")
			e.receiveNone("f.fifo", "m3 visible but m2, before it, in flight")
			e.del("f.fifo", m2.ReceiptHandle)
			last := e.receive("f.fifo", 10)
			if !equalStrings(bodies(last), []string{"m3"}) || last[0].MessageID != m3.MessageID {
				e.t.Fatalf("after deleting m2, receive returned %v, want [m3]", bodies(last))
			}
		}},
		{"LaterMessagesWaitBehindAnEarlierOneInFlight", func(e *env) {
			// Released out of order: m2 comes back while m1 is in flight,
			// and must wait for m1.
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			got := e.receive("f.fifo", 2)
			if !equalStrings(bodies(got), []string{"m1", "m2"}) {
				e.t.Fatalf("first receive returned %v, want [m1 m2]", bodies(got))
			}
			e.change("f.fifo", got[1].ReceiptHandle, 0)
			e.wantCounts("f.fifo", 1, 1, 0, "m2 released, m1 in flight")
			e.receiveNone("f.fifo", "m2 released while m1, before it, is in flight")
			e.change("f.fifo", got[0].ReceiptHandle, 0)
			if b := bodies(e.receive("f.fifo", 10)); !equalStrings(b, []string{"m1", "m2"}) {
				e.t.Fatalf("after releasing m1 too, receive returned %v, want [m1 m2]", b)
			}
		}},
		{"ExpiredMessageComesBackFirstInItsGroup", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			e.receiveOne("f.fifo", withVisibility(10))
			e.advance(9 * time.Second)
			e.receiveNone("f.fifo", "9 s into m1's visibility timeout")
			e.advance(2 * time.Second)
			m := e.receiveOne("f.fifo")
			if m.Body != "m1" || m.ApproximateReceiveCount != 2 {
				e.t.Fatalf("after m1's timeout, receive returned %q with count %d, want m1 with count 2", m.Body, m.ApproximateReceiveCount)
			}
		}},
		{"DeduplicationWithinFiveMinutes", func(e *env) {
			e.create("f.fifo", nil)
			first := e.sendFIFO("f.fifo", "g", "dedup-1", "first")
			dup := e.sendFIFO("f.fifo", "g", "dedup-1", "second")
			if dup.MessageID != first.MessageID {
				e.t.Fatalf("duplicate send returned MessageId %q, want the original %q", dup.MessageID, first.MessageID)
			}
			got := e.receive("f.fifo", 10)
			if !equalStrings(bodies(got), []string{"first"}) {
				e.t.Fatalf("after a duplicate send, receive returned %v, want [first]", bodies(got))
			}
			if got[0].MessageDeduplicationID != "dedup-1" || got[0].MessageGroupID != "g" {
				e.t.Fatalf("received MessageDeduplicationId %q, MessageGroupId %q", got[0].MessageDeduplicationID, got[0].MessageGroupID)
			}
			e.del("f.fifo", got[0].ReceiptHandle)
			e.advance(time.Second)
			again := e.sendFIFO("f.fifo", "g", "dedup-1", "third")
			if again.MessageID != first.MessageID {
				e.t.Fatalf("duplicate send after the original was deleted returned %q, want the original %q", again.MessageID, first.MessageID)
			}
			e.receiveNone("f.fifo", "after a duplicate of a deleted message")
			e.wantCounts("f.fifo", 0, 0, 0, "after a duplicate of a deleted message")
			e.advance(tidemq.DedupWindow + 5*time.Second)
			late := e.sendFIFO("f.fifo", "g", "dedup-1", "fourth")
			if late.MessageID == first.MessageID {
				e.t.Fatal("a send 5 minutes after the original was deduplicated")
			}
			if m := e.receiveOne("f.fifo"); m.Body != "fourth" {
				e.t.Fatalf("received %q, want fourth", m.Body)
			}
		}},
		{"DeduplicationWithinOneBatch", func(e *env) {
			e.create("f.fifo", nil)
			res, err := e.trySendBatch("f.fifo",
				tidemq.SendEntry{ID: "a", Body: "first", MessageGroupID: "g", MessageDeduplicationID: "same"},
				tidemq.SendEntry{ID: "b", Body: "second", MessageGroupID: "g", MessageDeduplicationID: "same"},
				tidemq.SendEntry{ID: "c", Body: "third", MessageGroupID: "g", MessageDeduplicationID: "other"},
			)
			e.ok(err, "FIFO SendMessageBatch")
			if len(res) != 3 || res[0].Err != nil || res[1].Err != nil || res[2].Err != nil {
				e.t.Fatalf("FIFO SendMessageBatch results %+v", res)
			}
			if res[1].MessageID != res[0].MessageID || res[2].MessageID == res[0].MessageID {
				e.t.Fatalf("MessageIds %q %q %q: want the duplicate to return the first's", res[0].MessageID, res[1].MessageID, res[2].MessageID)
			}
			if got := bodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"first", "third"}) {
				e.t.Fatalf("received %v, want [first third]", got)
			}
		}},
		{"ContentBasedDeduplication", func(e *env) {
			e.create("f.fifo", map[string]string{tidemq.AttrContentBasedDeduplication: "true"})
			a := e.sendFIFO("f.fifo", "g", "", "same body")
			b := e.sendFIFO("f.fifo", "g", "", "same body")
			if a.MessageID != b.MessageID {
				e.t.Fatalf("same body with content-based dedup: MessageIds %q and %q, want one", a.MessageID, b.MessageID)
			}
			c := e.sendFIFO("f.fifo", "g", "", "other body")
			if c.MessageID == a.MessageID {
				e.t.Fatal("a different body was deduplicated")
			}
			// An explicit id takes precedence over the body's hash.
			d := e.sendFIFO("f.fifo", "g", "explicit", "same body")
			if d.MessageID == a.MessageID {
				e.t.Fatal("an explicit MessageDeduplicationId did not take precedence over content-based dedup")
			}
			var got []string
			for {
				m := e.receive("f.fifo", 10)
				if len(m) == 0 {
					break
				}
				for _, msg := range m {
					got = append(got, msg.Body)
					if msg.MessageDeduplicationID == "" {
						e.t.Fatalf("message %q has no MessageDeduplicationId", msg.Body)
					}
					e.del("f.fifo", msg.ReceiptHandle)
				}
			}
			if !equalStrings(got, []string{"same body", "other body", "same body"}) {
				e.t.Fatalf("received %v, want [same body, other body, same body]", got)
			}
		}},
		{"DeduplicationScopeQueue", func(e *env) {
			e.create("f.fifo", nil)
			a := e.sendFIFO("f.fifo", "g1", "d", "in g1")
			b := e.sendFIFO("f.fifo", "g2", "d", "in g2")
			if a.MessageID != b.MessageID {
				e.t.Fatal("with DeduplicationScope queue, the same dedup id in another group was not deduplicated")
			}
			e.wantCounts("f.fifo", 1, 0, 0, "queue-scoped dedup")
		}},
		{"DeduplicationScopeMessageGroup", func(e *env) {
			e.create("f.fifo", map[string]string{tidemq.AttrDeduplicationScope: "messageGroup"})
			a := e.sendFIFO("f.fifo", "g1", "d", "in g1")
			b := e.sendFIFO("f.fifo", "g2", "d", "in g2")
			if a.MessageID == b.MessageID {
				e.t.Fatal("with DeduplicationScope messageGroup, the same dedup id in two groups was deduplicated")
			}
			c := e.sendFIFO("f.fifo", "g1", "d", "in g1 again")
			if c.MessageID != a.MessageID {
				e.t.Fatal("with DeduplicationScope messageGroup, the same dedup id in the same group was not deduplicated")
			}
			e.wantCounts("f.fifo", 2, 0, 0, "group-scoped dedup")
			if got := sortedBodies(e.receive("f.fifo", 10)); !equalStrings(got, []string{"in g1", "in g2"}) {
				e.t.Fatalf("received %v, want [in g1 in g2]", got)
			}
		}},
		{"SequenceNumbers", func(e *env) {
			e.create("f.fifo", nil)
			e.create("other.fifo", nil)
			var seqs []string
			ids := map[string]string{}
			for i := 0; i < 12; i++ {
				r := e.sendFIFO("f.fifo", fmt.Sprintf("g%d", i%3), fmt.Sprint(i), fmt.Sprint(i))
				seqs = append(seqs, r.SequenceNumber)
				ids[r.MessageID] = r.SequenceNumber
				// Another queue's traffic in between does not matter.
				e.sendFIFO("other.fifo", "g", fmt.Sprint(i), "x")
			}
			var batch []tidemq.SendEntry
			for i := 0; i < 5; i++ {
				batch = append(batch, tidemq.SendEntry{ID: fmt.Sprintf("e%d", i), Body: "b", MessageGroupID: "g0", MessageDeduplicationID: fmt.Sprintf("b%d", i)})
			}
			res, err := e.trySendBatch("f.fifo", batch...)
			e.ok(err, "FIFO SendMessageBatch")
			for _, r := range res {
				e.ok(r.Err, "batch entry %s", r.ID)
				seqs = append(seqs, r.SequenceNumber)
				ids[r.MessageID] = r.SequenceNumber
			}
			e.wantIncreasing(seqs, "sends in order")
			for i := 0; i < 3; i++ {
				for _, m := range e.receive("f.fifo", 10) {
					if m.SequenceNumber != ids[m.MessageID] {
						e.t.Fatalf("received SequenceNumber %q, the send returned %q", m.SequenceNumber, ids[m.MessageID])
					}
				}
			}
		}},
		{"SequenceNumbersInSQSForm", func(e *env) {
			// AWS's SequenceNumbers are 20-digit decimals past the range of
			// an int64 (e.g. 18849496460467696128), never zero-padded.
			e.create("f.fifo", nil)
			r := e.sendFIFO("f.fifo", "g", "1", "m1")
			m := e.receiveOne("f.fifo")
			for _, s := range []string{r.SequenceNumber, m.SequenceNumber} {
				if len(s) != 20 || s[0] == '0' || strings.Trim(s, "0123456789") != "" {
					e.t.Fatalf("SequenceNumber %q: want 20 decimal digits without leading zeros, as SQS returns", s)
				}
				if e.seq(s).Cmp(new(big.Int).Lsh(big.NewInt(1), 63)) < 0 {
					e.t.Fatalf("SequenceNumber %q is below 2^63: SQS's are larger than an int64", s)
				}
			}
		}},
		{"ReceiveRequestAttemptIDReturnsTheSameMessages", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.sendFIFO("f.fifo", "g", "2", "m2")
			e.sendFIFO("f.fifo", "h", "3", "h1")
			first := e.receive("f.fifo", 2, withAttempt("attempt-1"))
			if !equalStrings(bodies(first), []string{"m1", "m2"}) {
				e.t.Fatalf("first receive returned %v, want [m1 m2]", bodies(first))
			}
			e.advance(10 * time.Second)
			retry := e.receive("f.fifo", 2, withAttempt("attempt-1"))
			if len(retry) != len(first) {
				e.t.Fatalf("retried receive returned %v, want the same %v", bodies(retry), bodies(first))
			}
			for i := range first {
				if retry[i].MessageID != first[i].MessageID || retry[i].ReceiptHandle != first[i].ReceiptHandle {
					e.t.Fatalf("retried receive entry %d: %q/%q, want the same message and receipt handle as %q/%q", i,
						retry[i].MessageID, retry[i].ReceiptHandle, first[i].MessageID, first[i].ReceiptHandle)
				}
			}
			other := e.receive("f.fifo", 10, withAttempt("attempt-2"))
			if !equalStrings(bodies(other), []string{"h1"}) {
				e.t.Fatalf("a receive with another attempt id returned %v, want [h1]", bodies(other))
			}
			for _, m := range retry {
				e.del("f.fifo", m.ReceiptHandle)
			}
			e.wantCounts("f.fifo", 0, 1, 0, "after deleting with the retried handles")
		}},
		{"StaleHandleOnDeleteIsExpired", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			m := e.receiveOne("f.fifo", withVisibility(10))
			e.advance(11 * time.Second)
			err := e.tryDelete("f.fifo", m.ReceiptHandle)
			e.wantMessage(err, tidemq.ErrInvalidParameterValue, "The receipt handle has expired.", "FIFO delete after the visibility timeout")
			again := e.receiveOne("f.fifo")
			if again.MessageID != m.MessageID || again.ApproximateReceiveCount != 2 {
				e.t.Fatalf("after the refused delete, receive returned %q with count %d, want m1 with count 2", again.Body, again.ApproximateReceiveCount)
			}
			e.wantClientError(e.tryDelete("f.fifo", m.ReceiptHandle), "FIFO delete with the handle of an earlier receive")
			e.wantCounts("f.fifo", 0, 1, 0, "after a delete with the handle of an earlier receive")
			e.del("f.fifo", again.ReceiptHandle)
			e.wantCounts("f.fifo", 0, 0, 0, "after deleting with the current handle")
		}},
		{"MalformedHandleIsReceiptHandleIsInvalid", func(e *env) {
			e.create("f.fifo", nil)
			e.sendFIFO("f.fifo", "g", "1", "m1")
			e.receiveOne("f.fifo")
			e.wantCode(e.tryDelete("f.fifo", "garbage"), tidemq.ErrReceiptHandleIsInvalid, "FIFO delete with a malformed handle")
		}},
	}
}
