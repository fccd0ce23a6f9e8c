package placement_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/placement"
)

// A CreateQueue the cluster refuses (its dead-letter queue does not exist
// yet) does not pin its name where its dead-letter queue will not be: the
// dead-letter queue's name is placed with it, and the source is created
// once the dead-letter queue is.
func TestRefusedCreateDoesNotStrandItsName(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	rp := map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("dlq") + `","maxReceiveCount":2}`}
	if _, err := w.r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "src", Attributes: rp}); !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("src before its dead-letter queue: %v", err)
	}
	mustCreate(t, w.r, "dlq", nil)
	mustCreate(t, w.r, "src", rp)
	if w.tab.where("src") != w.tab.where("dlq") {
		t.Fatalf("src on %s, dlq on %s", w.tab.where("src"), w.tab.where("dlq"))
	}

	// A create refused for naming queues on two clusters places nothing.
	mustCreate(t, w.r, "d1", nil)
	if w.tab.where("d1") == w.tab.where("dlq") {
		t.Fatalf("d1 on %s with dlq", w.tab.where("d1"))
	}
	_, err := w.r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "both",
		Attributes: map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("dlq") + `","maxReceiveCount":2}`},
		Tags:       map[string]string{tidemq.CaptureExpiredTag: "d1"}})
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("a create joining two clusters: %v", err)
	}
	if c := w.tab.where("both"); c != "" {
		t.Fatalf("the refused create placed its name on %s", c)
	}
}

// A dead-letter or capture queue named before it exists is placed with
// the queue naming it, whatever the counts say: a capture tag naming a
// queue to come, and a RedrivePolicy set on an existing queue (refused by
// the cluster, since the dead-letter queue does not exist yet, but its
// name is placed), then the queue created.
func TestNamedQueuesArePlacedWithTheirSource(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	mustCreate(t, w.r, "src", nil) // a
	if err := w.r.TagQueue(ctx, tidemq.TagQueueParams{Queue: "src", Tags: map[string]string{tidemq.CaptureExpiredTag: "cap"}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, w.r, "cap", nil) // by counts it would go to b
	if w.tab.where("cap") != w.tab.where("src") {
		t.Fatalf("src on %s, its capture queue on %s: captures would be dropped", w.tab.where("src"), w.tab.where("cap"))
	}
	mustCreate(t, w.r, "tagged", map[string]string{}) // b
	if _, err := w.r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "tagged2", Tags: map[string]string{tidemq.CaptureExpiredTag: "cap2"}}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, w.r, "cap2", nil)
	if w.tab.where("cap2") != w.tab.where("tagged2") {
		t.Fatalf("tagged2 on %s, cap2 on %s", w.tab.where("tagged2"), w.tab.where("cap2"))
	}

	mustCreate(t, w.r, "orders", nil)
	policy := map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("orders-dlq") + `","maxReceiveCount":3}`}
	err := w.r.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "orders", Attributes: policy})
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a RedrivePolicy naming a queue to come: %v", err)
	}
	mustCreate(t, w.r, "orders-dlq", nil)
	if err := w.r.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "orders", Attributes: policy}); err != nil {
		t.Fatalf("placements %v: %v", w.tab.rows, err)
	}

	// A name that is no queue name is not placed.
	if err := w.r.TagQueue(ctx, tidemq.TagQueueParams{Queue: "src", Tags: map[string]string{tidemq.CaptureExpiredTag: "no such name!"}}); err == nil {
		t.Log("(the cluster accepts the tag; it names no queue)")
	}
	if c := w.tab.where("no such name!"); c != "" {
		t.Fatalf("an invalid name placed on %s", c)
	}

	// A move's destination that does not exist is the cluster's to refuse,
	// and is not placed.
	if _, err := w.r.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "src", Destination: "typo", Max: 1}); err == nil {
		t.Fatal("a move to a queue that does not exist succeeded")
	}
	if c := w.tab.where("typo"); c != "" {
		t.Fatalf("a move's missing destination placed on %s", c)
	}

	// A dead-letter queue created first, by counts, on the other cluster
	// stays there: the refusal says what can be done.
	mustCreate(t, w.r, "late", nil)
	mustCreate(t, w.r, "late-dlq", nil)
	if w.tab.where("late") == w.tab.where("late-dlq") {
		t.Skip("counts put both on one cluster")
	}
	err = w.r.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "late",
		Attributes: map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("late-dlq") + `","maxReceiveCount":3}`}})
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) || !strings.Contains(err.Error(), "a name not used yet") {
		t.Fatalf("a dead-letter queue placed on the other cluster: %v", err)
	}
}

// A leader's long poll on a cluster other than the home one checks its
// fence again before each look: fenced off while it waits, it takes
// nothing, and the message stays for the new leader.
func TestFencedLongPollTakesNothingOnceFencedOff(t *testing.T) {
	var stale atomic.Bool
	var checks atomic.Int32
	clk := clocktest.New(brokertest.Start)
	tab := newMemTable()
	a, b := engineOn(t, clk), engineOn(t, clk)
	r, err := placement.New(placement.Options{
		Clusters: []placement.Cluster{{ID: "a", Broker: a}, {ID: "b", Broker: b}},
		Table:    tab, Region: brokertest.Region, AccountID: brokertest.AccountID,
		CheckFence: func(ctx context.Context) error {
			checks.Add(1)
			if _, ok := tidemq.FenceOf(ctx); !ok {
				return errors.New("the check was given no fence")
			}
			if stale.Load() {
				return tidemq.ErrFenced
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ctx := context.Background()
	mustCreate(t, b, "q", nil)
	fctx := tidemq.WithFence(ctx, tidemq.Fence{Lease: "leader", Holder: "n1", Token: 3})
	type result struct {
		ms  []*tidemq.Message
		err error
	}
	done := make(chan result, 1)
	go func() {
		ms, err := r.ReceiveMessages(fctx, tidemq.ReceiveMessagesParams{Queue: "q", WaitTimeSeconds: intp(20), MaxNumberOfMessages: intp(10)})
		done <- result{ms, err}
	}()
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the long poll never waited")
	}
	stale.Store(true)
	send(t, b, "q", "for the new leader")
	got := <-done
	if len(got.ms) > 0 || !errors.Is(got.err, tidemq.ErrFenced) {
		t.Fatalf("a poll fenced off while it waited: %d messages, %v", len(got.ms), got.err)
	}
	if checks.Load() != 2 {
		t.Fatalf("%d checks, want 2 (at the start, before the look after the wake)", checks.Load())
	}
	if d := depth(t, b, "q"); d != "1+0" {
		t.Fatalf("the message was touched: %s", d)
	}
	// The wake it got went on: an unfenced poll waiting now gets the next.
	if ms := receive(t, r, "q"); len(ms) != 1 {
		t.Fatalf("the message after the fenced poll: %v", ms)
	}
}

// down is a cluster's broker that cannot be reached.
type down struct{ tidemq.Broker }

func (down) GetQueue(context.Context, tidemq.GetQueueParams) (*tidemq.QueueInfo, error) {
	return nil, errors.New("dial tcp: connection refused")
}

// A cluster that cannot answer whether it has a queue is no answer that
// it has none: an unplaced name is not created or placed elsewhere.
func TestUnreachableClusterIsNotAbsent(t *testing.T) {
	clk := clocktest.New(brokertest.Start)
	tab := newMemTable()
	a, b := engineOn(t, clk), engineOn(t, clk)
	mustCreate(t, b, "old", nil) // made on b before placement
	r, err := placement.New(placement.Options{
		Clusters: []placement.Cluster{{ID: "a", Broker: a}, {ID: "b", Broker: down{b}}},
		Table:    tab, Region: brokertest.Region, AccountID: brokertest.AccountID,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ctx := context.Background()
	if _, err := r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "old"}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("CreateQueue with the cluster holding it down: %v", err)
	}
	if c := tab.where("old"); c != "" {
		t.Fatalf("old placed on %s while b was down", c)
	}
	if d := depth(t, a, "old"); d != "absent" {
		t.Fatalf("a second old made on a: %s", d)
	}
}
