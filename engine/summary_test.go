package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// Summary gives the totals and the deepest queues that a walk over every
// queue's Snapshot gives, at the moment Snapshot applied the deadlines.
func TestSummaryAgreesWithSnapshot(t *testing.T) {
	ctx := context.Background()
	e, clk := open(t)
	create := func(name string, attrs map[string]string) {
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	send := func(q string, n int, delay int) {
		for i := 0; i < n; i++ {
			if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{Body: "x", DelaySeconds: &delay}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	create("dlq", nil)
	create("orders-deadletter", nil)
	create("src", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":3}`})
	for i := 0; i < 20; i++ {
		create(fmt.Sprintf("q%02d", i), nil)
	}
	send("src", 7, 0)
	send("q03", 3, 0)
	send("q07", 2, 60)
	send("dlq", 1, 0)
	send("q11", 3, 0)
	clk.Advance(5 * time.Second)
	if _, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src", MaxNumberOfMessages: new(4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q99"}); err == nil {
		t.Fatal("a receive on a missing queue")
	}
	if _, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q05"}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(61 * time.Second) // q07's delay ends, src's in-flight return
	snaps := e.Snapshot()
	var want tidemq.QueueTotals
	for i := range snaps {
		want.Add(&snaps[i])
	}
	if want.Visible != 16 || want.Delayed != 0 || want.DeadLetterQueues != 2 || want.Stats.EmptyReceives != 1 {
		t.Fatalf("the test's own state is not what it means: %+v", want)
	}
	for _, limit := range []int{-1, 1, 3, 4, 6, 100} {
		tot, top := e.Summary(limit)
		if tot != want {
			t.Fatalf("limit %d: totals %+v, want %+v", limit, tot, want)
		}
		deepest := append([]tidemq.QueueSnapshot(nil), snaps...)
		sort.SliceStable(deepest, func(i, j int) bool { return tidemq.DeeperFirst(&deepest[i], &deepest[j]) })
		deepest = deepest[:max(min(limit, len(deepest)), 0)]
		sort.Slice(deepest, func(i, j int) bool { return deepest[i].Name < deepest[j].Name })
		if len(top) != len(deepest) || (len(top) > 0 && !reflect.DeepEqual(top, deepest)) {
			t.Fatalf("limit %d: queues %v, want %v", limit, names(top), names(deepest))
		}
	}
	if _, top := e.Summary(3); fmt.Sprint(names(top)) != "[q03 q11 src]" {
		t.Fatalf("the 3 deepest: %v", names(top))
	}
}

func names(s []tidemq.QueueSnapshot) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].Name
	}
	return out
}
