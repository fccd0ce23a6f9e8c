package brokertest

import (
	"fmt"
	"slices"
	"time"

	"github.com/tidemq/tidemq"
)

// dlqChecks cover dead-letter queues: RedrivePolicy and RedriveAllowPolicy
// validation, when and how a message moves, and what it looks like
// afterwards (reference §4 maxReceiveCount, DLQ, RedriveAllowPolicy; §5 the
// first three points).
func dlqChecks() []check {
	return []check{
		{"RedrivePolicyValidation", func(e *env) {
			e.create("dlq", nil)
			e.create("src", nil)
			for _, n := range []int{0, 1001} {
				e.wantCode(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", n)}), tidemq.ErrInvalidParameterValue,
					"RedrivePolicy with maxReceiveCount %d", n)
			}
			for _, p := range []string{
				"not json",
				`{"maxReceiveCount":3}`,
				`{"deadLetterTargetArn":"` + e.arn("dlq") + `"}`,
				`{"deadLetterTargetArn":"not-an-arn","maxReceiveCount":3}`,
			} {
				e.wantCode(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: p}), tidemq.ErrInvalidParameterValue, "RedrivePolicy %s", p)
			}
			e.wantClientError(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("nosuchqueue", 3)}),
				"RedrivePolicy naming a queue that does not exist")
			_, err := e.tryCreate("src2", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("nosuchqueue", 3)})
			e.wantClientError(err, "CreateQueue with a RedrivePolicy naming a queue that does not exist")
			if v := e.attrs("src")[tidemq.AttrRedrivePolicy]; v != "" {
				e.t.Fatalf("refused RedrivePolicy changes left %q", v)
			}
			for _, n := range []int{1, 1000} {
				e.set("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", n)})
				p, err := tidemq.ParseRedrivePolicy(e.attrs("src")[tidemq.AttrRedrivePolicy])
				e.ok(err, "reading back RedrivePolicy")
				if p.DeadLetterTargetARN != e.arn("dlq") || p.MaxReceiveCount != n {
					e.t.Fatalf("RedrivePolicy read back as %+v", p)
				}
			}
		}},
		{"QueueTypesMustMatch", func(e *env) {
			e.create("std-dlq", nil)
			e.create("fifo-dlq.fifo", nil)
			e.create("src.fifo", nil)
			e.create("src", nil)
			e.wantClientError(e.trySet("src.fifo", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("std-dlq", 3)}),
				"FIFO queue with a standard dead-letter queue")
			e.wantClientError(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("fifo-dlq.fifo", 3)}),
				"standard queue with a FIFO dead-letter queue")
			_, err := e.tryCreate("new.fifo", map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrRedrivePolicy: e.redrive("std-dlq", 3)})
			e.wantClientError(err, "CreateQueue of a FIFO queue with a standard dead-letter queue")
			e.set("src.fifo", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("fifo-dlq.fifo", 3)})
			e.set("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("std-dlq", 3)})
		}},
		{"RedriveAllowPolicy", func(e *env) {
			e.create("src", nil)
			e.create("closed", map[string]string{tidemq.AttrRedriveAllowPolicy: `{"redrivePermission":"denyAll"}`})
			e.wantCode(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("closed", 3)}), tidemq.ErrInvalidParameterValue,
				"RedrivePolicy pointing to a denyAll queue")
			e.create("picky", map[string]string{tidemq.AttrRedriveAllowPolicy: `{"redrivePermission":"byQueue","sourceQueueArns":["` + e.arn("other") + `"]}`})
			e.wantCode(e.trySet("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("picky", 3)}), tidemq.ErrInvalidParameterValue,
				"RedrivePolicy pointing to a byQueue queue that does not list the source")
			e.create("friendly", map[string]string{tidemq.AttrRedriveAllowPolicy: `{"redrivePermission":"byQueue","sourceQueueArns":["` + e.arn("src") + `"]}`})
			e.set("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("friendly", 3)})
			e.create("open", map[string]string{tidemq.AttrRedriveAllowPolicy: `{"redrivePermission":"allowAll"}`})
			e.set("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("open", 3)})
			for _, bad := range []string{`{"redrivePermission":"sometimes"}`, `{"redrivePermission":"byQueue"}`,
				`{"redrivePermission":"allowAll","sourceQueueArns":["` + e.arn("src") + `"]}`} {
				e.wantClientError(e.trySet("open", map[string]string{tidemq.AttrRedriveAllowPolicy: bad}), "RedriveAllowPolicy %s", bad)
			}
		}},
		{"MaxReceiveCount1", func(e *env) {
			e.create("dlq", nil)
			src := e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			attrs := map[string]tidemq.MessageAttributeValue{"k": {DataType: "String", StringValue: "v"},
				"b": {DataType: "Binary", BinaryValue: []byte{1, 2, 3}}}
			trace := map[string]tidemq.MessageAttributeValue{"AWSTraceHeader": {DataType: "String", StringValue: "Root=1-abc-def"}}
			sentAt := e.now()
			sent := e.send("src", tidemq.SendEntry{Body: "poison", Attributes: attrs, SystemAttributes: trace})
			first := e.receiveOne("src", withVisibility(10))
			if first.ApproximateReceiveCount != 1 {
				e.t.Fatalf("first receive: count %d, want 1", first.ApproximateReceiveCount)
			}
			e.advance(11 * time.Second)
			e.receiveNone("src", "the receive after maxReceiveCount (1) receives")
			e.wantCounts("src", 0, 0, 0, "the source after the move")
			e.wantCounts("dlq", 1, 0, 0, "the dead-letter queue after the move")
			d := e.receiveOne("dlq")
			if d.MessageID != sent.MessageID || d.Body != "poison" {
				e.t.Fatalf("dead letter is %q/%q, want the same MessageId %q and body", d.MessageID, d.Body, sent.MessageID)
			}
			wantAttributes(e, d.Attributes, attrs, "dead letter's message attributes")
			wantAttributes(e, d.SystemAttributes, trace, "dead letter's AWSTraceHeader")
			if d.ApproximateReceiveCount != 2 {
				e.t.Errorf("first receive from the DLQ: ApproximateReceiveCount %d, want 2 (it continues)", d.ApproximateReceiveCount)
			}
			if d.DeadLetterQueueSourceARN != src.ARN {
				e.t.Errorf("DeadLetterQueueSourceARN = %q, want %q", d.DeadLetterQueueSourceARN, src.ARN)
			}
			if d.SentTimestamp.UnixMilli() != sentAt.UnixMilli() {
				e.t.Errorf("dead letter's SentTimestamp = %v, want the original %v", d.SentTimestamp, sentAt)
			}
			if d.FirstReceiveTimestamp.UnixMilli() != first.FirstReceiveTimestamp.UnixMilli() {
				e.t.Errorf("dead letter's FirstReceiveTimestamp = %v, want the original %v", d.FirstReceiveTimestamp, first.FirstReceiveTimestamp)
			}
			if !hasHistory(d, tidemq.HistoryReceived) || !hasHistory(d, tidemq.HistoryDeadLetter) {
				e.t.Errorf("dead letter's History %v lacks a %q or a %q event", historyKinds(d), tidemq.HistoryReceived, tidemq.HistoryDeadLetter)
			}
		}},
		{"MaxReceiveCount3", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 3)})
			sent := e.sendBody("src", "x")
			for i := 1; i <= 3; i++ {
				m := e.receiveOne("src", withVisibility(10))
				if m.ApproximateReceiveCount != i {
					e.t.Fatalf("receive %d: count %d", i, m.ApproximateReceiveCount)
				}
				e.wantCounts("dlq", 0, 0, 0, fmt.Sprintf("the dead-letter queue after receive %d", i))
				e.advance(11 * time.Second)
			}
			e.receiveNone("src", "the receive after maxReceiveCount (3) receives")
			d := e.receiveOne("dlq")
			if d.MessageID != sent.MessageID || d.ApproximateReceiveCount != 4 {
				e.t.Fatalf("dead letter %q with count %d, want %q with count 4", d.MessageID, d.ApproximateReceiveCount, sent.MessageID)
			}
			n := 0
			for _, h := range d.History {
				if h.Kind == tidemq.HistoryReceived {
					n++
				}
			}
			if n < 3 || !hasHistory(d, tidemq.HistoryDeadLetter) {
				e.t.Errorf("dead letter's History %v, want at least 3 receives and a dead-letter move", historyKinds(d))
			}
		}},
		{"DeletedBeforeTheLimitIsNeverDeadLettered", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src", "good")
			e.sendBody("src", "bad")
			for _, m := range e.receive("src", 10, withVisibility(10)) {
				if m.Body == "good" {
					e.del("src", m.ReceiptHandle)
				}
			}
			e.advance(11 * time.Second)
			e.receiveNone("src", "after the limit")
			if got := bodies(e.receive("dlq", 10)); !equalStrings(got, []string{"bad"}) {
				e.t.Fatalf("dead-letter queue holds %v, want [bad]", got)
			}
		}},
		{"RemovingRedrivePolicyStopsMoves", func(e *env) {
			e.create("dlq", nil)
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.set("src", map[string]string{tidemq.AttrRedrivePolicy: ""})
			if v, ok := e.attrs("src")[tidemq.AttrRedrivePolicy]; ok && v != "" {
				e.t.Fatalf("RedrivePolicy after removal = %q", v)
			}
			e.sendBody("src", "x")
			e.receiveOne("src", withVisibility(10))
			e.advance(11 * time.Second)
			if m := e.receiveOne("src"); m.ApproximateReceiveCount != 2 {
				e.t.Fatalf("second receive: count %d", m.ApproximateReceiveCount)
			}
			e.wantCounts("dlq", 0, 0, 0, "the former dead-letter queue")
		}},
		{"StandardDLQKeepsTheEnqueueTime", func(e *env) {
			e.create("dlq", map[string]string{tidemq.AttrMessageRetentionPeriod: "120"})
			e.create("src", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 1)})
			e.sendBody("src", "x") // T
			e.receiveOne("src", withVisibility(30))
			e.advance(31 * time.Second)
			e.receiveNone("src", "after the limit") // moved at T+31
			e.wantCounts("dlq", 1, 0, 0, "just after the move")
			e.advance(88 * time.Second) // T+119
			e.wantCounts("dlq", 1, 0, 0, "119 s after the original send")
			e.advance(2 * time.Second) // T+121
			e.wantCounts("dlq", 0, 0, 0, "121 s after the original send (DLQ retention 120 s counts from the send)")
			e.receiveNone("dlq", "after the DLQ's retention from the original send")
		}},
		{"FIFODLQRestartsTheEnqueueTime", func(e *env) {
			e.create("dlq.fifo", map[string]string{tidemq.AttrMessageRetentionPeriod: "120"})
			e.create("src.fifo", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq.fifo", 1)})
			e.sendFIFO("src.fifo", "g", "1", "x") // T
			e.receiveOne("src.fifo", withVisibility(30))
			e.advance(31 * time.Second)
			e.receiveNone("src.fifo", "after the limit") // moved at T+31
			e.wantCounts("dlq.fifo", 1, 0, 0, "just after the move")
			// The move happened when the visibility ran out (T+30) or at the
			// next receive (T+31); either way the DLQ's 120 s count from it.
			e.advance(90 * time.Second) // T+121
			e.wantCounts("dlq.fifo", 1, 0, 0, "121 s after the original send, 90 s after the move")
			e.advance(28 * time.Second) // T+149
			e.wantCounts("dlq.fifo", 1, 0, 0, "118 s after the move")
			e.advance(4 * time.Second) // T+153
			e.wantCounts("dlq.fifo", 0, 0, 0, "more than 120 s after the move (FIFO DLQ retention counts from the move)")
		}},
		{"FIFODeadLetterHeadHoldsOnlyItsGroup", func(e *env) {
			// A group whose head is due for the dead-letter queue gives
			// nothing past it until it has moved; the other groups are
			// served meanwhile, and the group's rest follows in order.
			e.create("dlq.fifo", nil)
			e.create("src.fifo", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq.fifo", 1)})
			e.sendFIFO("src.fifo", "g", "1", "m1")
			e.sendFIFO("src.fifo", "g", "2", "m2")
			e.sendFIFO("src.fifo", "g", "3", "m3")
			if m := e.receiveOne("src.fifo", withVisibility(10)); m.Body != "m1" {
				e.t.Fatalf("first receive returned %q, want m1", m.Body)
			}
			e.advance(11 * time.Second) // m1 is back, at maxReceiveCount
			e.sendFIFO("src.fifo", "h", "4", "n1")
			var got []string
			for i := 0; i < 3 && len(got) < 3; i++ {
				got = append(got, bodies(e.receive("src.fifo", 10, withVisibility(30)))...)
			}
			sorted := append([]string(nil), got...)
			slices.Sort(sorted)
			if !equalStrings(sorted, []string{"m2", "m3", "n1"}) || slices.Index(got, "m2") > slices.Index(got, "m3") {
				e.t.Fatalf("after m1 hit maxReceiveCount, the source returned %v, want m2 then m3, and n1", got)
			}
			if d := bodies(e.receive("dlq.fifo", 10)); !equalStrings(d, []string{"m1"}) {
				e.t.Fatalf("the dead-letter queue holds %v, want [m1]", d)
			}
		}},
		{"FIFODeadLetterUnlocksTheGroup", func(e *env) {
			e.create("dlq.fifo", nil)
			src := e.create("src.fifo", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq.fifo", 1)})
			sent := e.sendFIFO("src.fifo", "g", "1", "m1")
			e.sendFIFO("src.fifo", "g", "2", "m2")
			if m := e.receiveOne("src.fifo", withVisibility(10)); m.Body != "m1" {
				e.t.Fatalf("first receive returned %q, want m1", m.Body)
			}
			e.advance(11 * time.Second)
			var got []string
			for i := 0; i < 2 && len(got) == 0; i++ {
				got = bodies(e.receive("src.fifo", 10))
			}
			if !equalStrings(got, []string{"m2"}) {
				e.t.Fatalf("after m1 hit maxReceiveCount, the source returned %v, want [m2]", got)
			}
			// Its deduplication id is now its message id (SQS's developer
			// guide: so that the DLQ keeps messages that shared one).
			d := e.receiveOne("dlq.fifo")
			if d.Body != "m1" || d.MessageID != sent.MessageID || d.MessageGroupID != "g" || d.MessageDeduplicationID != sent.MessageID || d.DeadLetterQueueSourceARN != src.ARN {
				e.t.Fatalf("FIFO dead letter: body %q id %q group %q dedup %q source %q; want m1, id and dedup %q", d.Body, d.MessageID, d.MessageGroupID,
					d.MessageDeduplicationID, d.DeadLetterQueueSourceARN, sent.MessageID)
			}
			if d.ApproximateReceiveCount != 2 || d.SequenceNumber == "" {
				e.t.Fatalf("FIFO dead letter: count %d, SequenceNumber %q", d.ApproximateReceiveCount, d.SequenceNumber)
			}
		}},
	}
}
