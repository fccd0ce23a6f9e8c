package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/engine"
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

// Summary keeps agreeing with Snapshot as queues come and go (their
// gauges' slots freed and reused), as RedrivePolicies change which queues
// are dead-letter queues, when the k-th deepest depth is shared by more
// queues than fit (ties by name above depth 0), and after a restart.
func TestSummaryFollowsQueuesThatComeAndGo(t *testing.T) {
	ctx := context.Background()
	e, clk, store := openWithStore(t)
	create := func(name string, attrs map[string]string) {
		t.Helper()
		if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	send := func(q string, n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{Body: "x"}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(step string, wantDLQs int) {
		t.Helper()
		snaps := e.Snapshot()
		var want tidemq.QueueTotals
		for i := range snaps {
			want.Add(&snaps[i])
		}
		if want.DeadLetterQueues != wantDLQs {
			t.Fatalf("%s: the test's own state: %d dead-letter queues, want %d", step, want.DeadLetterQueues, wantDLQs)
		}
		for _, limit := range []int{1, 2, 3, 5, 8, 13, 200, 2000} { // 200: ties at depth 2, sorted
			tot, top := e.Summary(limit)
			if tot != want {
				t.Fatalf("%s, limit %d: totals %+v, want %+v", step, limit, tot, want)
			}
			deepest := append([]tidemq.QueueSnapshot(nil), snaps...)
			sort.SliceStable(deepest, func(i, j int) bool { return tidemq.DeeperFirst(&deepest[i], &deepest[j]) })
			deepest = deepest[:min(limit, len(deepest))]
			sort.Slice(deepest, func(i, j int) bool { return deepest[i].Name < deepest[j].Name })
			if !reflect.DeepEqual(names(top), names(deepest)) {
				t.Fatalf("%s, limit %d: queues %v, want %v", step, limit, names(top), names(deepest))
			}
		}
	}
	// The oldest message is alone in its queue.
	create("oldest", nil)
	send("oldest", 1)
	clk.Advance(10 * time.Second)
	// 1,500 queues: more than one chunk of the gauges' table. Queues
	// whose number is a multiple of 7 hold 2 messages, of 11 hold 5:
	// more queues share depth 2 than the limits take.
	for i := 0; i < 1500; i++ {
		create(fmt.Sprintf("q%04d", i), nil)
	}
	for i := 0; i < 1500; i++ {
		switch {
		case i%11 == 0:
			send(fmt.Sprintf("q%04d", i), 5)
		case i%7 == 0:
			send(fmt.Sprintf("q%04d", i), 2)
		}
	}
	check("filled", 0)

	// A RedrivePolicy makes its target a dead-letter queue; changing it
	// moves that to the new target; removing it, to none.
	redrive := func(target string) map[string]string {
		return map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:` + target + `","maxReceiveCount":3}`}
	}
	if err := e.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q0001", Attributes: redrive("q0014")}); err != nil {
		t.Fatal(err)
	}
	check("redrive to q0014", 1)
	if err := e.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q0001", Attributes: redrive("q0022")}); err != nil {
		t.Fatal(err)
	}
	check("redrive to q0022", 1)

	// Deleted queues free their slots, which new queues take: neither the
	// deleted queues' counts nor their marks stay.
	for i := 0; i < 1500; i += 3 {
		if err := e.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: fmt.Sprintf("q%04d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	check("a third deleted", 1) // q0022 stays (22 is no multiple of 3)
	create("orders-dlq", nil)
	for i := 0; i < 40; i++ {
		create(fmt.Sprintf("new%02d", i), nil)
		send(fmt.Sprintf("new%02d", i), i%4)
	}
	if err := e.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "q0001", Attributes: map[string]string{"RedrivePolicy": ""}}); err != nil {
		t.Fatal(err)
	}
	check("new queues in freed slots", 1) // orders-dlq, by its name

	if _, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q0011", MaxNumberOfMessages: new(3)}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	check("in flight", 1)

	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if e, err = engine.Open(engine.Options{Store: store, Clock: clk, SweepInterval: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	check("after a restart", 1)
}

func names(s []tidemq.QueueSnapshot) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i].Name
	}
	return out
}
