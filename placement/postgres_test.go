package placement_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/placement"
	"github.com/tidemq/tidemq/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func openPG(t *testing.T, dsn string) *postgres.Broker {
	t.Helper()
	b, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Region: brokertest.Region, AccountID: brokertest.AccountID,
		SweepInterval: -1, Logger: quietLog()})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	return b
}

// pgNode is one node serving both clusters: a Router over its own
// brokers of the home cluster and of the second one.
func pgNode(t *testing.T, home, other string, check ...func(context.Context) error) (*placement.Router, *postgres.Broker, *postgres.Broker) {
	t.Helper()
	ctx := context.Background()
	h, o := openPG(t, home), openPG(t, other)
	hid, err := h.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oid, err := o.ClusterID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	o2 := placement.Options{Clusters: []placement.Cluster{{ID: hid, Broker: h}, {ID: oid, Broker: o}},
		Table: h.Placements(), Region: brokertest.Region, AccountID: brokertest.AccountID}
	if len(check) > 0 {
		o2.CheckFence = check[0]
	}
	r, err := placement.New(o2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, h, o
}

// Two PostgreSQL clusters, two nodes each serving both: queues spread
// over the clusters, a name created on both nodes at once is one queue on
// one cluster, every message call reaches the queue's cluster whichever
// node takes it, a dead-letter move and a redrive stay within a cluster,
// and a dead-letter queue on the other cluster is refused.
func TestTwoPostgreSQLClusters(t *testing.T) {
	home, _ := pgtest.Schema(t)
	other := pgtest.Separate(t) // a second cluster
	n1, h1, o1 := pgNode(t, home, other)
	n2, _, _ := pgNode(t, home, other)
	ctx := context.Background()
	hid, _ := h1.ClusterID(ctx)
	oid, _ := o1.ClusterID(ctx)
	if hid == oid || hid == "" {
		t.Fatalf("cluster identities %q and %q", hid, oid)
	}

	// Eight names, each created on both nodes at once.
	names := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(names))
	for _, q := range names {
		for _, n := range []*placement.Router{n1, n2} {
			wg.Add(1)
			go func(n *placement.Router, q string) {
				defer wg.Done()
				_, err := n.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q})
				errs <- err
			}(n, q)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("CreateQueue: %v", err)
		}
	}
	counts, err := h1.Placements().Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[hid]+counts[oid] != len(names) || counts[hid] == 0 || counts[oid] == 0 {
		t.Fatalf("placements %v: want %d names over both clusters", counts, len(names))
	}
	onHome, _ := h1.ListQueues(ctx, tidemq.ListQueuesParams{})
	onOther, _ := o1.ListQueues(ctx, tidemq.ListQueuesParams{})
	if len(onHome.Names) != counts[hid] || len(onOther.Names) != counts[oid] {
		t.Fatalf("queues: %v on home, %v on the other; placements %v (a name on both clusters?)", onHome.Names, onOther.Names, counts)
	}
	t.Logf("home cluster: %v; second cluster: %v", onHome.Names, onOther.Names)

	// Every call, through either node, on the queue's cluster.
	for i, q := range names {
		in, out := n1, n2
		if i%2 == 1 {
			in, out = n2, n1
		}
		send(t, in, q, "m-"+q)
		ms := receive(t, out, q)
		if len(ms) != 1 || ms[0].Body != "m-"+q {
			t.Fatalf("%s: sent on one node, received on the other: %v", q, ms)
		}
		res, err := in.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: q, Entries: []tidemq.DeleteEntry{{ID: "1", ReceiptHandle: ms[0].ReceiptHandle}}})
		if err != nil || res[0] != nil {
			t.Fatalf("%s: delete on the other node: %v %v", q, err, res)
		}
	}
	all, err := n2.ListQueues(ctx, tidemq.ListQueuesParams{})
	if err != nil || strings.Join(all.Names, ",") != strings.Join(names, ",") {
		t.Fatalf("ListQueues over both: %v %v", all, err)
	}

	// A dead-letter queue on the second cluster, its source placed with it.
	if _, err := n1.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "dlq"}); err != nil {
		t.Fatal(err)
	}
	dlqCluster, _, _ := h1.Placements().Lookup(ctx, "dlq")
	if _, err := n2.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "src", Attributes: map[string]string{
		tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn("dlq") + `","maxReceiveCount":1}`, tidemq.AttrVisibilityTimeout: "1"}}); err != nil {
		t.Fatal(err)
	}
	if c, _, _ := h1.Placements().Lookup(ctx, "src"); c != dlqCluster {
		t.Fatalf("src on %s, its dead-letter queue on %s", c, dlqCluster)
	}
	send(t, n1, "src", "poison")
	if _, err := n2.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src", VisibilityTimeout: intp(1)}); err != nil {
		t.Fatal(err)
	}
	var moved []*tidemq.Message
	for deadline := time.Now().Add(10 * time.Second); len(moved) == 0 && time.Now().Before(deadline); {
		// past maxReceiveCount the next receive moves it to the dead-letter queue
		_, _ = n1.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "src", WaitTimeSeconds: intp(1)})
		moved, _ = n2.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "dlq"})
	}
	if len(moved) != 1 || moved[0].Body != "poison" {
		t.Fatalf("the dead-letter queue holds %v", moved)
	}
	if _, err := n1.StartMessageMoveTask(ctx, tidemq.StartMoveTaskParams{SourceARN: arn("dlq")}); err != nil {
		t.Fatal(err)
	}
	var back []*tidemq.Message
	for deadline := time.Now().Add(10 * time.Second); len(back) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		back, _ = n2.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "src"})
	}
	if len(back) != 1 || back[0].Body != "poison" {
		t.Fatalf("redriven back: %v", back)
	}

	// A queue on the other cluster as a dead-letter queue: refused, clearly.
	var far string
	for _, q := range names {
		if c, _, _ := h1.Placements().Lookup(ctx, q); c != dlqCluster {
			far = q
			break
		}
	}
	err = n2.SetQueueAttributes(ctx, tidemq.SetQueueAttributesParams{Queue: "src", Attributes: map[string]string{
		tidemq.AttrRedrivePolicy: `{"deadLetterTargetArn":"` + arn(far) + `","maxReceiveCount":3}`}})
	if !tidemq.HasCode(err, tidemq.ErrInvalidParameterValue) || !strings.Contains(err.Error(), "another PostgreSQL cluster") {
		t.Fatalf("a dead-letter queue on the other cluster: %v", err)
	}
}

// A leader's fenced write on a queue of the second cluster is checked
// against the leases of the home database: accepted while the leader
// holds its token, refused once another node took the lease over, and
// then nothing on the second cluster changes.
func TestFenceOnTheSecondPostgreSQLCluster(t *testing.T) {
	ctx := context.Background()
	home, _ := pgtest.Schema(t)
	other := pgtest.Separate(t)
	pool, err := pgxpool.New(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	leases := func(holder string) *postgres.Leases {
		l, err := postgres.NewLeases(pool, postgres.LeaseOptions{Holder: holder, TTL: 3 * time.Second, Clock: clk, Logger: quietLog()})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := leases("a"), leases("b")
	r, h, _ := pgNode(t, home, other, a.Check)
	hid, _ := h.ClusterID(ctx)
	for _, q := range []string{"near", "far", "near2", "waited"} {
		if _, err := r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"far", "waited"} {
		if c, _, _ := h.Placements().Lookup(ctx, q); c == hid {
			t.Fatalf("%s is on the home cluster", q)
		}
	}
	la, ok, err := a.Acquire(ctx, "leader")
	if err != nil || !ok {
		t.Fatalf("a takes the lease: %v %v", ok, err)
	}
	actx := tidemq.WithFence(ctx, tidemq.Fence{Lease: "leader", Holder: "a", Token: la.Generation})
	if _, err := r.SendMessages(actx, tidemq.SendMessagesParams{Queue: "far", Entries: []tidemq.SendEntry{{ID: "1", Body: "x"}}}); err != nil {
		t.Fatalf("the leader's fenced send on the second cluster: %v", err)
	}
	// The leader long-polls an empty queue of the second cluster; while it
	// waits, b takes the lease over and a message comes: the poll, woken,
	// checks its fence again and takes nothing.
	type polled struct {
		ms  []*tidemq.Message
		err error
	}
	poll := make(chan polled, 1)
	go func() {
		ms, err := r.ReceiveMessages(actx, tidemq.ReceiveMessagesParams{Queue: "waited", WaitTimeSeconds: intp(20)})
		poll <- polled{ms, err}
	}()
	time.Sleep(500 * time.Millisecond) // (the broker's real clock) let the poll start waiting
	clk.Advance(4 * time.Second)       // a's lease passes, b takes it
	if _, ok, err := b.Acquire(ctx, "leader"); err != nil || !ok {
		t.Fatalf("b takes the lease: %v %v", ok, err)
	}
	send(t, r, "waited", "for b")
	select {
	case p := <-poll:
		if len(p.ms) > 0 || !errors.Is(p.err, tidemq.ErrFenced) {
			t.Fatalf("the stale leader's long poll, fenced off while it waited: %d messages, %v", len(p.ms), p.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the fenced-off long poll was not woken by the send")
	}
	if ms := receive(t, r, "waited"); len(ms) != 1 || ms[0].ApproximateReceiveCount != 1 {
		t.Fatalf("waited holds %v after the fenced poll, want the message never received", ms)
	}
	_, err = r.ReceiveMessages(actx, tidemq.ReceiveMessagesParams{Queue: "far", WaitTimeSeconds: intp(0)})
	if !errors.Is(err, tidemq.ErrFenced) {
		t.Fatalf("the stale leader's receive on the second cluster: %v, want ErrFenced", err)
	}
	_, err = r.SendMessages(actx, tidemq.SendMessagesParams{Queue: "near", Entries: []tidemq.SendEntry{{ID: "1", Body: "y"}}})
	if !errors.Is(err, tidemq.ErrFenced) {
		t.Fatalf("the stale leader's send on the home cluster: %v, want ErrFenced", err)
	}
	if ms, err := r.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "far", WaitTimeSeconds: intp(0)}); err != nil || len(ms) != 1 || ms[0].ApproximateReceiveCount != 1 {
		t.Fatalf("after the refused receive, far holds %v (%v), want the message never received", ms, err)
	}
}

// The second cluster down: its queues fail (retryably), the home
// cluster's serve on, /health names the cluster; back up, its queues
// serve again without a restart of the node.
func TestOneClusterDown(t *testing.T) {
	ctx := context.Background()
	home, _ := pgtest.Schema(t)
	srv, err := pgtest.Start()
	if err != nil {
		t.Skipf("no second PostgreSQL cluster: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	r, h, o := pgNode(t, home, srv.DSN)
	oid, _ := o.ClusterID(ctx)
	for _, q := range []string{"near", "far"} {
		if _, err := r.CreateQueue(ctx, tidemq.CreateQueueParams{Name: q}); err != nil {
			t.Fatal(err)
		}
		send(t, r, q, "before")
	}
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	sendTo := func(q string) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := r.SendMessages(ctx, tidemq.SendMessagesParams{Queue: q, Entries: []tidemq.SendEntry{{ID: "1", Body: "during"}}})
		return err
	}
	err = sendTo("far")
	if err == nil {
		t.Fatal("a send to a queue of the stopped cluster succeeded")
	}
	t.Logf("a send to the stopped cluster's queue: %v", err)
	if !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) {
		t.Errorf("the stopped cluster's error is not ServiceUnavailable (retryable): %v", err)
	}
	if err := sendTo("near"); err != nil {
		t.Fatalf("a send to the home cluster's queue while the other is down: %v", err)
	}
	var health error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if health = r.Healthy(); health != nil {
			break
		}
	}
	if health == nil || !strings.Contains(health.Error(), oid) {
		t.Fatalf("Healthy with the second cluster down: %v, want an error naming %s", health, oid)
	}
	// A name placed nowhere may be on the stopped cluster (made there
	// before placement): it is neither placed nor created on the home one.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = r.CreateQueue(cctx, tidemq.CreateQueueParams{Name: "new"})
	cancel()
	if err == nil {
		t.Fatal("CreateQueue of an unplaced name with a cluster down succeeded")
	}
	if c, ok, _ := h.Placements().Lookup(ctx, "new"); ok {
		t.Fatalf("new placed on %s with a cluster down", c)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	var last error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = sendTo("far"); last == nil {
			break
		}
	}
	if last != nil {
		t.Fatalf("the second cluster back: a send still fails: %v", last)
	}
	if ms := receive(t, r, "far"); len(ms) != 2 {
		t.Fatalf("far holds %d messages after the outage, want 2 (before, after)", len(ms))
	}
}
