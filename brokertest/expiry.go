package brokertest

import (
	"time"

	"github.com/tidemq/tidemq"
)

// expiryChecks cover what happens to a message at the end of its queue's
// retention period: it leaves the queue, counted once as expired
// (Snapshot's Stats.Expired, what /metrics and the alarms read), or, when
// the queue's tidemq:capture-expired tag names a queue, it moves there
// with its story (tidemq.CaptureExpiredTag).
func expiryChecks() []check {
	short := map[string]string{tidemq.AttrMessageRetentionPeriod: "60"}
	return []check{
		{"DroppedAreCountedOnce", func(e *env) {
			e.create("q", short)
			e.sendBody("q", "visible")
			e.sendBody("q", "in flight")
			e.send("q", tidemq.SendEntry{Body: "delayed", DelaySeconds: intp(120)})
			e.receiveOne("q", withVisibility(600))
			e.advance(59 * time.Second)
			if s := e.snapshot("q"); s.Stats.Expired != 0 || s.Visible+s.InFlight+s.Delayed != 3 {
				e.t.Fatalf("before the retention ended: expired %d, depth %d; want 0 and 3", s.Stats.Expired, s.Visible+s.InFlight+s.Delayed)
			}
			e.advance(2 * time.Second)
			e.wantCounts("q", 0, 0, 0, "after the retention")
			for i := 0; i < 2; i++ { // looking again counts nothing again
				if s := e.snapshot("q"); s.Stats.Expired != 3 || s.Visible+s.InFlight+s.Delayed != 0 {
					e.t.Fatalf("after the retention (look %d): expired %d, depth %d; want 3 and 0", i+1, s.Stats.Expired, s.Visible+s.InFlight+s.Delayed)
				}
			}
			e.receiveNone("q", "after the retention")
		}},
		{"CapturedIntoTheTaggedQueue", func(e *env) {
			e.create("expired", nil)
			e.createTagged("q", short, "expired")
			e.sendBody("q", "a")
			e.sendBody("q", "b")
			e.receiveOne("q", withVisibility(600))
			e.advance(61 * time.Second)
			e.wantCounts("q", 0, 0, 0, "after the retention")
			e.wantCounts("expired", 2, 0, 0, "after q's retention")
			snaps := e.snapshots()
			if s := snaps["q"]; s.Stats.Expired != 2 || s.Stats.MovedOut != 0 {
				e.t.Errorf("q: expired %d, moved out %d; want 2 and 0 (a capture is an expiry)", s.Stats.Expired, s.Stats.MovedOut)
			}
			if s := snaps["expired"]; s.Stats.MovedIn != 2 {
				e.t.Errorf("the capture queue: moved in %d, want 2", s.Stats.MovedIn)
			}
			got := e.receive("expired", 10)
			if b := sortedBodies(got); !equalStrings(b, []string{"a", "b"}) {
				e.t.Fatalf("the capture queue holds %v, want [a b]", b)
			}
			for _, m := range got {
				if !hasHistory(m, tidemq.HistoryCaptured) {
					e.t.Errorf("captured message %q: history %v has no %q", m.Body, historyKinds(m), tidemq.HistoryCaptured)
				}
			}
			// In the capture queue a message's retention starts again.
			e.advance(61 * time.Second)
			if s := e.snapshot("expired"); s.Stats.Expired != 0 {
				e.t.Errorf("the capture queue expired %d messages, want 0", s.Stats.Expired)
			}
		}},
		{"CaptureOfAMissingQueueDrops", func(e *env) {
			e.createTagged("q", short, "nowhere")
			e.sendBody("q", "a")
			e.advance(61 * time.Second)
			e.wantCounts("q", 0, 0, 0, "after the retention")
			if s := e.snapshot("q"); s.Stats.Expired != 1 {
				e.t.Errorf("q: expired %d, want 1", s.Stats.Expired)
			}
		}},
		{"FIFOCapturedKeepsGroupOrder", func(e *env) {
			e.create("expired.fifo", nil)
			e.createTagged("q.fifo", map[string]string{tidemq.AttrFifoQueue: "true", tidemq.AttrMessageRetentionPeriod: "60"}, "expired.fifo")
			for i, b := range []string{"m1", "m2", "m3"} {
				e.sendFIFO("q.fifo", "g", itoa(i), b)
			}
			e.advance(61 * time.Second)
			e.wantCounts("q.fifo", 0, 0, 0, "after the retention")
			var got []string
			for i := 0; i < 3; i++ {
				m := e.receiveOne("expired.fifo")
				got = append(got, m.Body)
				e.del("expired.fifo", m.ReceiptHandle)
			}
			if !equalStrings(got, []string{"m1", "m2", "m3"}) {
				e.t.Fatalf("the capture queue served %v, want [m1 m2 m3]", got)
			}
		}},
	}
}

// createTagged creates a queue whose expired messages are captured into
// the queue named capture.
func (e *env) createTagged(name string, attrs map[string]string, capture string) {
	e.t.Helper()
	_, err := e.b.CreateQueue(e.ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs,
		Tags: map[string]string{tidemq.CaptureExpiredTag: capture}})
	e.ok(err, "CreateQueue(%s)", name)
}

// snapshots returns the broker's Snapshot by queue name.
func (e *env) snapshots() map[string]tidemq.QueueSnapshot {
	out := map[string]tidemq.QueueSnapshot{}
	for _, s := range e.b.Snapshot() {
		out[s.Name] = s
	}
	return out
}

// snapshot returns one queue's Snapshot.
func (e *env) snapshot(q string) tidemq.QueueSnapshot {
	e.t.Helper()
	s, ok := e.snapshots()[q]
	if !ok {
		e.t.Fatalf("Snapshot has no queue %s", q)
	}
	return s
}
