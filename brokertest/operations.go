package brokertest

import (
	"strings"
	"time"

	"github.com/tidemq/tidemq"
)

// operationChecks cover what a server needs of its broker beyond the SQS
// actions: Snapshot (metrics, alarms, top), RecordFailure (triggers),
// Healthy (GET /health) and Drain (shutdown).
func operationChecks() []check {
	return []check{
		{"SnapshotCountsEveryState", func(e *env) {
			e.create("dlq", nil)
			e.create("q", map[string]string{tidemq.AttrRedrivePolicy: e.redrive("dlq", 3)})
			e.sendBody("q", "visible")
			e.sendBody("q", "in flight")
			e.receiveOne("q", withVisibility(60))
			e.send("q", tidemq.SendEntry{Body: "delayed", DelaySeconds: intp(120)})
			e.advance(30 * time.Second)
			snaps := map[string]tidemq.QueueSnapshot{}
			for _, s := range e.b.Snapshot() {
				snaps[s.Name] = s
			}
			q, ok := snaps["q"]
			if !ok {
				e.t.Fatalf("Snapshot has no queue q: %+v", snaps)
			}
			// Depth is visible + in flight + delayed (seed 003: a depth
			// that leaves out in-flight messages hides a stuck consumer).
			if q.Visible+q.InFlight+q.Delayed != 3 || q.InFlight != 1 || q.Delayed != 1 {
				e.t.Errorf("Snapshot of q: visible %d, in flight %d, delayed %d; want 1, 1, 1", q.Visible, q.InFlight, q.Delayed)
			}
			if q.ARN != e.arn("q") || q.DeadLetterTarget != e.arn("dlq") || q.MaxReceiveCount != 3 || q.IsDeadLetterQueue {
				e.t.Errorf("Snapshot of q: %+v, want its ARN, the dlq as target, maxReceiveCount 3", q)
			}
			if q.OldestAgeSeconds < 30 {
				e.t.Errorf("Snapshot of q: oldest age %.0f s, want at least 30", q.OldestAgeSeconds)
			}
			if q.Stats.Sent != 3 || q.Stats.Received != 1 {
				e.t.Errorf("Snapshot of q: sent %d, received %d; want 3, 1", q.Stats.Sent, q.Stats.Received)
			}
			if d := snaps["dlq"]; !d.IsDeadLetterQueue || d.Visible != 0 {
				e.t.Errorf("Snapshot of dlq: %+v, want an empty dead-letter queue", d)
			}
		}},
		{"RecordFailureWritesTheStory", func(e *env) {
			e.create("q", nil)
			e.sendBody("q", "x")
			m := e.receiveOne("q", withVisibility(30))
			errs, err := e.b.RecordFailure(e.ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{m.ReceiptHandle},
				Detail: "trigger t: function error", Client: client})
			e.ok(err, "RecordFailure")
			if len(errs) != 1 || errs[0] != nil {
				e.t.Fatalf("RecordFailure entry errors %v, want one nil", errs)
			}
			// Nothing else changes: still in flight until its timeout.
			e.wantCounts("q", 0, 1, 0, "after RecordFailure")
			peek, err := e.b.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", Max: intp(1), IncludeInflight: true})
			e.ok(err, "peek")
			found := false
			for _, ev := range peek[0].History {
				found = found || ev.Kind == tidemq.HistoryConsumerFailed && strings.Contains(ev.Detail, "function error")
			}
			if !found {
				e.t.Errorf("the history has no consumer-failed event: %+v", peek[0].History)
			}
			// A handle from before the message was received again is an
			// error for that entry only.
			e.advance(31 * time.Second)
			e.receiveOne("q")
			errs, err = e.b.RecordFailure(e.ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{m.ReceiptHandle}, Detail: "late"})
			e.ok(err, "RecordFailure with a stale handle")
			if len(errs) != 1 || errs[0] == nil {
				e.t.Errorf("RecordFailure with a stale handle: entry errors %v, want one error", errs)
			}
		}},
		{"HealthyWhileOpen", func(e *env) {
			if err := e.b.Healthy(); err != nil {
				e.t.Errorf("Healthy on a fresh broker = %v", err)
			}
		}},
		{"DrainAnswersLongPolls", func(e *env) {
			e.create("q", nil)
			p := e.startPoll(e.ctx, "q", 10, withWait(20))
			e.b.Drain()
			m, err := p.result()
			e.ok(err, "a long poll open at Drain")
			if len(m) != 0 {
				e.t.Errorf("a long poll open at Drain returned %d messages", len(m))
			}
			// Later receives do not wait either: no clock advance needed.
			m, err = e.tryReceive("q", 10, withWait(20))
			e.ok(err, "a long poll after Drain")
			if len(m) != 0 {
				e.t.Errorf("a long poll after Drain returned %d messages", len(m))
			}
		}},
	}
}
