package placement_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/placement"
)

func intp(n int) *int { return &n }

func arn(name string) string { return tidemq.QueueARN(brokertest.Region, brokertest.AccountID, name) }

func mustCreate(t *testing.T, b tidemq.Broker, name string, attrs map[string]string) {
	t.Helper()
	if _, err := b.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
		t.Fatalf("CreateQueue(%s): %v", name, err)
	}
}

func send(t *testing.T, b tidemq.Broker, q, body string) {
	t.Helper()
	res, err := b.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{ID: "1", Body: body}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("send to %s: %v %v", q, err, res)
	}
}

func receive(t *testing.T, b tidemq.Broker, q string) []*tidemq.Message {
	t.Helper()
	ms, err := b.ReceiveMessages(context.Background(), tidemq.ReceiveMessagesParams{Queue: q, MaxNumberOfMessages: intp(10), WaitTimeSeconds: intp(0), VisibilityTimeout: intp(30)})
	if err != nil {
		t.Fatalf("receive from %s: %v", q, err)
	}
	return ms
}

// depth is the number of messages a queue holds on one cluster's broker.
func depth(t *testing.T, b tidemq.Broker, q string) string {
	t.Helper()
	a, err := b.GetQueueAttributes(context.Background(), tidemq.GetQueueAttributesParams{Queue: q,
		Names: []string{tidemq.AttrApproximateNumberOfMessages, tidemq.AttrApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		return "absent"
	}
	return a[tidemq.AttrApproximateNumberOfMessages] + "+" + a[tidemq.AttrApproximateNumberOfMessagesNotVisible]
}

// twoClusters is a Router over two engines, with the engines and the
// table at hand.
type twoClusters struct {
	r      *placement.Router
	a, b   tidemq.Broker
	tab    *memTable
	clk    *clocktest.Clock
	checks int
	fenced error
}

func newTwo(t *testing.T) *twoClusters {
	t.Helper()
	w := &twoClusters{tab: newMemTable(), clk: clocktest.New(brokertest.Start)}
	w.a, w.b = engineOn(t, w.clk), engineOn(t, w.clk)
	r, err := placement.New(placement.Options{
		Clusters: []placement.Cluster{{ID: "a", Broker: w.a}, {ID: "b", Broker: w.b}},
		Table:    w.tab, Region: brokertest.Region, AccountID: brokertest.AccountID,
		CheckFence: func(ctx context.Context) error {
			w.checks++
			return w.fenced
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.r = r
	t.Cleanup(func() { r.Close() })
	return w
}

// cluster returns the broker a queue is placed on.
func (w *twoClusters) cluster(t *testing.T, q string) (tidemq.Broker, tidemq.Broker) {
	t.Helper()
	switch w.tab.where(q) {
	case "a":
		return w.a, w.b
	case "b":
		return w.b, w.a
	}
	t.Fatalf("queue %s is not placed", q)
	return nil, nil
}

// New queues go to the cluster with the fewest, each lives on its cluster
// only, every message call reaches it, and ListQueues pages over both.
func TestQueuesSpreadOverClusters(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	var names []string
	for i := 0; i < 7; i++ {
		names = append(names, fmt.Sprintf("q%d", i))
		mustCreate(t, w.r, names[i], nil)
	}
	counts, _ := w.tab.Counts(ctx)
	if counts["a"] != 4 || counts["b"] != 3 {
		t.Fatalf("placements %v, want 4 on a and 3 on b", counts)
	}
	for _, q := range names {
		home, other := w.cluster(t, q)
		send(t, w.r, q, "m-"+q)
		if got := depth(t, home, q); got != "1+0" {
			t.Fatalf("%s on its cluster: %s, want 1+0", q, got)
		}
		if got := depth(t, other, q); got != "absent" {
			t.Fatalf("%s on the other cluster: %s", q, got)
		}
		ms := receive(t, w.r, q)
		if len(ms) != 1 || ms[0].Body != "m-"+q {
			t.Fatalf("receive %s: %v", q, ms)
		}
		if _, err := w.r.ChangeMessageVisibility(ctx, tidemq.ChangeVisibilityParams{Queue: q,
			Entries: []tidemq.ChangeVisibilityEntry{{ID: "1", ReceiptHandle: ms[0].ReceiptHandle, VisibilityTimeout: intp(60)}}}); err != nil {
			t.Fatal(err)
		}
		res, err := w.r.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: q, Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: ms[0].ReceiptHandle}}})
		if err != nil || res[0] != nil {
			t.Fatalf("delete from %s: %v %v", q, err, res)
		}
		if got := depth(t, home, q); got != "0+0" {
			t.Fatalf("%s after the delete: %s", q, got)
		}
	}
	// A receipt handle of one cluster is no handle on the other's queue.
	send(t, w.r, "q0", "x")
	h := receive(t, w.r, "q0")[0].ReceiptHandle
	res, err := w.r.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q1", Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: h}}})
	if err == nil && res[0] == nil {
		t.Fatal("a handle of q0 (cluster a) deleted on q1 (cluster b)")
	}
	// ListQueues: all of them, one page or many.
	all, err := w.r.ListQueues(ctx, tidemq.ListQueuesParams{})
	if err != nil || strings.Join(all.Names, ",") != strings.Join(names, ",") || all.NextToken != "" {
		t.Fatalf("ListQueues: %v %v", all, err)
	}
	for _, size := range []int{1, 2, 3, 6, 7, 10} {
		var got []string
		token := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatalf("MaxResults %d: no end", size)
			}
			page, err := w.r.ListQueues(ctx, tidemq.ListQueuesParams{MaxResults: intp(size), NextToken: token})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Names) > size {
				t.Fatalf("MaxResults %d: a page of %d", size, len(page.Names))
			}
			got = append(got, page.Names...)
			if token = page.NextToken; token == "" {
				break
			}
		}
		if strings.Join(got, ",") != strings.Join(names, ",") {
			t.Fatalf("MaxResults %d: pages gave %v", size, got)
		}
	}
	if prefixed, _ := w.r.ListQueues(ctx, tidemq.ListQueuesParams{Prefix: "q3"}); len(prefixed.Names) != 1 {
		t.Fatalf("prefix q3: %v", prefixed.Names)
	}
	if snaps := w.r.Snapshot(); len(snaps) != 7 || snaps[0].Name != "q0" || snaps[6].Name != "q6" {
		t.Fatalf("Snapshot: %d queues", len(snaps))
	}
	// Deleted and created again, a queue comes back where it was.
	was := w.tab.where("q1")
	if err := w.r.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "q1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.r.GetQueue(ctx, tidemq.GetQueueParams{Name: "q1"}); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		t.Fatalf("GetQueue of a deleted queue: %v", err)
	}
	mustCreate(t, w.r, "q1", nil)
	if w.tab.where("q1") != was {
		t.Fatalf("q1 came back on %s, was on %s", w.tab.where("q1"), was)
	}
	// A queue nobody made is nowhere, and placed nowhere.
	if _, err := w.r.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "nope", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
		t.Fatalf("send to a missing queue: %v", err)
	}
	if w.tab.where("nope") != "" {
		t.Fatal("a missing queue was placed")
	}
}

// A queue created with a RedrivePolicy goes to its dead-letter queue's
// cluster, whatever the counts say; its messages move there after
// maxReceiveCount receives, and a move task brings them back.
func TestDeadLetterQueueOnItsSourcesCluster(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	mustCreate(t, w.r, "filler", nil) // on a
	mustCreate(t, w.r, "dlq", nil)    // on b
	if w.tab.where("dlq") != "b" {
		t.Fatalf("dlq on %s", w.tab.where("dlq"))
	}
	mustCreate(t, w.r, "src", map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("dlq") + `","maxReceiveCount":1}`})
	if w.tab.where("src") != "b" {
		t.Fatalf("src on %s, its dead-letter queue on b", w.tab.where("src"))
	}
	send(t, w.r, "src", "poison")
	if len(receive(t, w.r, "src")) != 1 {
		t.Fatal("no first receive")
	}
	w.clk.Advance(31 * time.Second)
	if ms := receive(t, w.r, "src"); len(ms) != 0 {
		t.Fatalf("received %d past maxReceiveCount", len(ms))
	}
	if got := depth(t, w.b, "dlq"); got != "1+0" {
		t.Fatalf("dlq: %s, want the message", got)
	}
	srcs, err := w.r.ListDeadLetterSourceQueues(ctx, tidemq.ListDeadLetterSourceQueuesParams{Queue: "dlq"})
	if err != nil || len(srcs.Names) != 1 || srcs.Names[0] != "src" {
		t.Fatalf("ListDeadLetterSourceQueues: %v %v", srcs, err)
	}
	handle, err := w.r.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: arn("dlq")})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, err := w.r.ListMessageMoveTasks(ctx, tidemq.ListMoveTasksParams{SourceARN: arn("dlq")})
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) == 1 && tasks[0].Status == tidemq.MoveTaskCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the move task did not end: %+v", tasks)
		}
		runtime.Gosched() // the task runs in its own goroutine
	}
	if got := depth(t, w.b, "src"); got != "1+0" {
		t.Fatalf("the move task did not bring the message back: src %s, dlq %s", got, depth(t, w.b, "dlq"))
	}
	if _, err := w.r.CancelMessageMoveTask(ctx, tidemq.CancelMoveTaskParams{TaskHandle: handle}); !tidemq.HasCode(err, tidemq.ErrResourceNotFound) && !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) {
		t.Fatalf("cancelling a finished task: %v", err) // routed to the task's cluster, which knows it has ended
	}
}

// What would join two clusters is refused, with a clear error: a
// RedrivePolicy, a capture tag, a move task's or a move's destination.
func TestJoiningTwoClustersIsRefused(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	mustCreate(t, w.r, "here", nil)  // a
	mustCreate(t, w.r, "there", nil) // b
	if w.tab.where("here") == w.tab.where("there") {
		t.Fatal("both on one cluster")
	}
	refused := func(what string, err error) {
		t.Helper()
		if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) || !strings.Contains(err.Error(), "another PostgreSQL cluster") {
			t.Errorf("%s: %v, want InvalidParameterValue naming the other cluster", what, err)
		}
	}
	policy := `{"deadLetterTargetArn":"` + arn("there") + `","maxReceiveCount":3}`
	refused("SetQueueAttributes RedrivePolicy", w.r.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "here",
		Attributes: map[string]string{tidemq.AttrRedrivePolicy: policy}}))
	refused("TagQueue capture tag", w.r.TagQueue(ctx, tidemq.TagQueueParams{Queue: "here", Tags: map[string]string{tidemq.CaptureExpiredTag: "there"}}))
	refused("TagQueue capture tag (ARN)", w.r.TagQueue(ctx, tidemq.TagQueueParams{Queue: "here", Tags: map[string]string{tidemq.CaptureExpiredTag: arn("there")}}))
	_, err := w.r.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: arn("here"), DestinationARN: arn("there")})
	refused("StartMessageMoveTask", err)
	_, err = w.r.MoveMessages(ctx, tidemq.MoveMessagesParams{Source: "here", Destination: "there", Max: 10})
	refused("MoveMessages", err)
	// A queue deleted and created again stays on its cluster: a
	// RedrivePolicy to the other cluster is refused at creation too.
	if err := w.r.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "here"}); err != nil {
		t.Fatal(err)
	}
	_, err = w.r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "here", Attributes: map[string]string{tidemq.AttrRedrivePolicy: policy}})
	refused("CreateQueue of a placed name with a RedrivePolicy to the other cluster", err)
	// Within one cluster, all of it is accepted.
	mustCreate(t, w.r, "here", nil)
	if w.tab.where("here") != "a" {
		t.Fatalf("here came back on %s", w.tab.where("here"))
	}
	mustCreate(t, w.r, "near2", nil) // a: one name on each, and a is first
	if w.tab.where("near2") != "a" {
		t.Fatalf("near2 on %s", w.tab.where("near2"))
	}
	if err := w.r.TagQueue(ctx, tidemq.TagQueueParams{Queue: "here", Tags: map[string]string{tidemq.CaptureExpiredTag: "near2"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.r.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "here",
		Attributes: map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("near2") + `","maxReceiveCount":3}`}}); err != nil {
		t.Fatal(err)
	}
}

// A leader's fenced write on the home cluster is left to the home broker
// (its transaction checks the fence); on another cluster the fence is
// checked against the home database first, and a stale one refused
// before the cluster is touched.
func TestFenceOnTheOtherCluster(t *testing.T) {
	w := newTwo(t)
	mustCreate(t, w.r, "onA", nil)
	mustCreate(t, w.r, "onB", nil)
	ctx := tidemq.WithFence(context.Background(), tidemq.Fence{Lease: "leader", Holder: "n1", Token: 7})
	if _, err := w.r.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "onA", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if w.checks != 0 {
		t.Fatalf("a home write checked the fence %d times outside its transaction", w.checks)
	}
	if _, err := w.r.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "onB", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if w.checks != 1 {
		t.Fatalf("the write on b checked the fence %d times, want 1", w.checks)
	}
	w.fenced = tidemq.ErrFenced
	if _, err := w.r.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "onB", WaitTimeSeconds: intp(0)}); !errors.Is(err, tidemq.ErrFenced) {
		t.Fatalf("a stale fence on b: %v", err)
	}
	if got := depth(t, w.b, "onB"); got != "1+0" {
		t.Fatalf("the refused receive touched b: %s", got)
	}
	// Client requests carry no fence and are not checked.
	if len(receive(t, w.r, "onB")) != 1 || w.checks != 2 {
		t.Fatalf("an unfenced receive: checks %d", w.checks)
	}
}

// A queue made on a cluster before placement was turned on (it has no
// placement) is found there and placed there; a placement naming a
// cluster this node was not given is an error, not a wrong answer.
func TestUnplacedAndUnknown(t *testing.T) {
	w := newTwo(t)
	ctx := context.Background()
	mustCreate(t, w.b, "old", nil)
	send(t, w.b, "old", "from before")
	if ms := receive(t, w.r, "old"); len(ms) != 1 || ms[0].Body != "from before" {
		t.Fatalf("the queue made before: %v", ms)
	}
	if w.tab.where("old") != "b" {
		t.Fatalf("old placed on %q", w.tab.where("old"))
	}
	mustCreate(t, w.b, "old2", nil)
	mustCreate(t, w.r, "old2", nil) // CreateQueue finds it too, rather than making a second one on a
	if w.tab.where("old2") != "b" || depth(t, w.a, "old2") != "absent" {
		t.Fatalf("old2 placed on %q", w.tab.where("old2"))
	}
	// A new source of an unplaced dead-letter queue goes where that is.
	mustCreate(t, w.b, "olddlq", nil)
	mustCreate(t, w.r, "newsrc", map[string]string{tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("olddlq") + `","maxReceiveCount":2}`})
	if w.tab.where("newsrc") != "b" || w.tab.where("olddlq") != "b" {
		t.Fatalf("newsrc on %q, olddlq on %q", w.tab.where("newsrc"), w.tab.where("olddlq"))
	}
	w.tab.Place(ctx, "lost", "zzz")
	_, err := w.r.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "lost"})
	if !tidemq.HasCode(err, tidemq.ErrInternalFailure) || !strings.Contains(err.Error(), "zzz") {
		t.Fatalf("a queue on an unknown cluster: %v", err)
	}
	if _, err := placement.New(placement.Options{Table: w.tab,
		Clusters: []placement.Cluster{{ID: "a", Broker: w.a}, {ID: "a", Broker: w.b}}}); err == nil {
		t.Fatal("two clusters of one identity accepted")
	}
}
