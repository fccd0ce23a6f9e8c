package alarms_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
)

type recorder struct {
	mu   sync.Mutex
	sent []alarms.Transition
}

func (r *recorder) Send(t alarms.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, t)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent)
}

// Two nodes evaluate the same shared queues; only the one leading sends
// the transition, once; after a failover the other sends the next one,
// and the firing alarm is not announced again.
func TestLeaderWebhookSendsOncePerTransition(t *testing.T) {
	clk := clocktest.New(start)
	var depth atomic.Int32
	snaps := func() []tidemq.QueueSnapshot {
		return []tidemq.QueueSnapshot{{Name: "orders-dlq", IsDeadLetterQueue: true, Visible: int(depth.Load()), RetentionSeconds: 345600}}
	}
	rec := &recorder{}
	var hooks [2]*alarms.LeaderWebhook
	var evs [2]*alarms.Evaluator
	for i := range evs {
		hooks[i] = &alarms.LeaderWebhook{Webhook: rec}
		evs[i] = alarms.New(alarms.Options{Snapshots: snaps, Clock: clk, Webhook: hooks[i]})
	}
	evalAll := func() {
		for _, e := range evs {
			e.Evaluate()
		}
	}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { defer close(doneA); hooks[0].Lead(ctxA) }()
	// Lead flips the gate as it starts; wait for it without sleeping long.
	waitLead := func(h *alarms.LeaderWebhook) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			before := rec.count()
			h.Send(alarms.Transition{})
			if rec.count() > before {
				rec.mu.Lock()
				rec.sent = rec.sent[:before]
				rec.mu.Unlock()
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the node does not lead")
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitLead(hooks[0])
	evalAll()
	if rec.count() != 0 {
		t.Fatalf("%d transitions with an empty queue", rec.count())
	}
	depth.Store(3)
	clk.Advance(time.Minute)
	evalAll()
	if rec.count() != 1 || rec.sent[0].State != alarms.StateFiring {
		t.Fatalf("sent %+v, want one firing transition", rec.sent)
	}
	stopA()
	<-doneA
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go hooks[1].Lead(ctxB)
	waitLead(hooks[1])
	clk.Advance(time.Minute)
	evalAll() // still firing: nothing new
	if rec.count() != 1 {
		t.Fatalf("sent %d transitions after the failover, want still 1", rec.count())
	}
	depth.Store(0)
	clk.Advance(time.Minute)
	evalAll()
	if rec.count() != 2 || rec.sent[1].State == alarms.StateFiring {
		t.Fatalf("sent %+v, want the resolution once", rec.sent)
	}
}

// With Fence, a transition is forwarded only after the fence checked out:
// a node that still believes it leads (it was paused past its lease) but
// whose token the database refuses sends nothing.
func TestLeaderWebhookChecksTheFenceBeforeEachNotification(t *testing.T) {
	rec := &recorder{}
	var stale atomic.Bool
	var checks atomic.Int32
	h := &alarms.LeaderWebhook{Webhook: rec, Fence: func(ctx context.Context) error {
		checks.Add(1)
		if stale.Load() {
			return tidemq.ErrFenced
		}
		return nil
	}}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Lead(ctx) }()
	defer func() { stop(); <-done }()
	deadline := time.Now().Add(5 * time.Second)
	for rec.count() == 0 { // Lead starts asynchronously: send until it forwards
		if time.Now().After(deadline) {
			t.Fatal("a current fence: nothing forwarded")
		}
		h.Send(alarms.Transition{})
		time.Sleep(time.Millisecond)
	}
	stale.Store(true)
	before, sent := checks.Load(), rec.count()
	for i := 0; i < 3; i++ {
		h.Send(alarms.Transition{})
	}
	for checks.Load() < before+3 {
		if time.Now().After(deadline) {
			t.Fatalf("the fence was checked %d times for 3 transitions", checks.Load()-before)
		}
		time.Sleep(time.Millisecond)
	}
	if rec.count() != sent {
		t.Fatalf("%d transitions forwarded with a stale fence", rec.count()-sent)
	}
}
