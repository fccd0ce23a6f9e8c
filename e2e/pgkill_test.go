package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// This file holds a load harness for several `tidemq serve --store
// postgres://` processes on one database: producers and consumers (the
// AWS SDK, MD5 checks on) spread over the nodes, each moving to the next
// node when its own fails, and a ledger of what was acknowledged, received
// and deleted, checked at the end.

// cluster is a set of tidemq nodes on one PostgreSQL.
type cluster struct {
	t     *testing.T
	dsn   string
	dir   string
	mu    sync.Mutex
	nodes []*server
	sdk   []*sqs.Client
}

func newCluster(t *testing.T, dsn string, n int) *cluster {
	c := &cluster{t: t, dsn: dsn, dir: t.TempDir()}
	c.nodes = make([]*server, n)
	c.sdk = make([]*sqs.Client, n)
	for i := 0; i < n; i++ {
		c.start(i) // one after another: the first applies the migrations
	}
	return c
}

// start starts (or restarts) node i.
func (c *cluster) start(i int) {
	c.t.Helper()
	s := startServer(c.t, "--store", c.dsn, "--data-dir", filepath.Join(c.dir, strconv.Itoa(i)), "--no-alarms")
	c.mu.Lock()
	c.nodes[i], c.sdk[i] = s, sdkClient(s)
	c.mu.Unlock()
}

// client returns node i's SDK client.
func (c *cluster) client(i int) *sqs.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sdk[i%len(c.sdk)]
}

// kill9 kills node i with SIGKILL: no drain, no clean close.
func (c *cluster) kill9(i int) {
	c.mu.Lock()
	s := c.nodes[i]
	c.mu.Unlock()
	s.stopOnce.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
}

// health returns the status code of node i's /health (0 when it does not
// answer).
func (c *cluster) health(i int) int {
	c.mu.Lock()
	u := c.nodes[i].url
	c.mu.Unlock()
	hc := &http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(u + "/health")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// ledger is what the clients saw.
type ledger struct {
	mu sync.Mutex
	// acked: bodies whose send was acknowledged.
	acked map[string]bool
	// deletedAt: when the delete of a body was acknowledged.
	deletedAt map[string]time.Time
	// received: how often each body was received.
	received map[string]int
	// order: per FIFO group, the indexes of its messages in the order the
	// receives returned them (a receive's batch in its order).
	order map[string][]int
	// reappeared: bodies received after their delete was acknowledged.
	reappeared []string
	// md5: bodies whose MD5 did not match (the SDK checks it; this
	// counts the receives it refused).
	errs []string
	// unanswered: bodies whose delete was sent and failed (no answer,
	// or an error): it may have been done.
	unanswered map[string]bool
}

func newLedger() *ledger {
	return &ledger{acked: map[string]bool{}, deletedAt: map[string]time.Time{}, received: map[string]int{}, order: map[string][]int{},
		unanswered: map[string]bool{}}
}

func (l *ledger) ack(body string) {
	l.mu.Lock()
	l.acked[body] = true
	l.mu.Unlock()
}

// got records a receive's messages, in order.
func (l *ledger) got(msgs []types.Message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range msgs {
		body := aws.ToString(m.Body)
		if at, ok := l.deletedAt[body]; ok {
			l.reappeared = append(l.reappeared, fmt.Sprintf("%s (deleted %v ago)", body, time.Since(at).Round(time.Millisecond)))
		}
		l.received[body]++
		if group, idx, ok := fifoBody(body); ok {
			l.order[group] = append(l.order[group], idx)
		}
	}
}

func (l *ledger) deleted(body string) {
	l.mu.Lock()
	if _, ok := l.deletedAt[body]; !ok {
		l.deletedAt[body] = time.Now()
	}
	l.mu.Unlock()
}

// redelivered counts the messages received more than once.
func (l *ledger) redelivered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.received {
		if c > 1 {
			n++
		}
	}
	return n
}

// undeleted counts the acknowledged messages whose delete was not.
func (l *ledger) undeleted() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for b := range l.acked {
		if _, ok := l.deletedAt[b]; !ok {
			n++
		}
	}
	return n
}

// check fails t for every acknowledged message never deleted, every
// message received after its delete was acknowledged, and every FIFO
// message delivered before an acknowledged earlier message of its group.
func (l *ledger) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for b := range l.acked {
		if _, ok := l.deletedAt[b]; !ok {
			lost = append(lost, fmt.Sprintf("%s (received %d times)", b, l.received[b]))
		}
	}
	if len(lost) > 0 {
		if len(lost) > 10 {
			lost = append(lost[:10], "...")
		}
		t.Errorf("%d acknowledged messages never deleted: %v", len(lost), lost)
	}
	if len(l.reappeared) > 0 {
		t.Errorf("%d messages received after their delete was acknowledged: %v", len(l.reappeared), l.reappeared[:min(10, len(l.reappeared))])
	}
	for group, order := range l.order {
		seen := map[int]bool{}
		for _, idx := range order {
			for j := 0; j < idx; j++ {
				if !seen[j] && l.acked[fifoName(group, j)] {
					t.Errorf("FIFO group %s: message %d delivered before message %d (acknowledged) ever was; deliveries %v", group, idx, j, order)
					return
				}
			}
			seen[idx] = true
		}
	}
	for _, e := range l.errs {
		t.Error(e)
	}
}

// settleUnanswered looks up, in the database, every acknowledged message
// the ledger never saw deleted. One whose delete failed without an answer
// (the node or the database went away mid-call) and that is no longer
// stored was deleted, rightly: the ledger counts it so. One still stored
// after the sweep fails t: it was never received again.
func (l *ledger) settleUnanswered(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	t.Helper()
	l.mu.Lock()
	var undeleted []string
	for b := range l.acked {
		if _, ok := l.deletedAt[b]; !ok {
			undeleted = append(undeleted, b)
		}
	}
	l.mu.Unlock()
	for _, b := range undeleted {
		var stored int
		var visibleAt int64
		err := conn.QueryRow(ctx, `SELECT count(*), coalesce(max(visible_at), 0) FROM messages WHERE body = $1`, b).Scan(&stored, &visibleAt)
		if err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		unanswered := l.unanswered[b]
		l.mu.Unlock()
		switch {
		case stored == 0 && unanswered:
			t.Logf("%s: its delete failed without an answer and was done (the message is gone)", b)
			l.deleted(b)
		case stored > 0:
			t.Errorf("%s: still stored (visible at %v) but never received again", b, time.Unix(0, visibleAt))
		}
	}
}

func fifoName(group string, idx int) string { return "f|" + group + "|" + strconv.Itoa(idx) }

func fifoBody(body string) (group string, idx int, ok bool) {
	parts := strings.Split(body, "|")
	if len(parts) != 3 || parts[0] != "f" {
		return "", 0, false
	}
	idx, err := strconv.Atoi(parts[2])
	return parts[1], idx, err == nil
}

// load runs producers and consumers against a cluster.
type load struct {
	c        *cluster
	l        *ledger
	std, fq  string        // queue names
	pause    time.Duration // between a producer's sends
	work     time.Duration // between a consumer's receive and its delete
	stopSend atomic.Bool
	stopRecv atomic.Bool
	sendWG   sync.WaitGroup
	recvWG   sync.WaitGroup
	// sent, deletes count acknowledged sends and deletes.
	sent, deletes atomic.Int64
	// consumers[i] counts the messages consumer i received, by where:
	// received[i] before the failover mark and after it.
	consumers []*consumerStats
	down      sync.Map // node index -> true while it is known to be down
}

type consumerStats struct {
	home int
	// afterMark counts what it received through another node than its
	// own after markFailover.
	afterMark  atomic.Int64
	total      atomic.Int64
	failovers  atomic.Int64
	markPassed atomic.Bool
}

// createQueues creates a standard and a FIFO queue with a visibility
// timeout of vt seconds.
func createQueues(ctx context.Context, t *testing.T, cl *sqs.Client, prefix string, vt int) (std, fq string) {
	t.Helper()
	for _, name := range []string{prefix, prefix + ".fifo"} {
		attrs := map[string]string{"VisibilityTimeout": strconv.Itoa(vt)}
		if strings.HasSuffix(name, ".fifo") {
			attrs["FifoQueue"] = "true"
		}
		if _, err := cl.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}); err != nil {
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
	}
	return prefix, prefix + ".fifo"
}

// queueURL is the URL of queue name on node i.
func (ld *load) queueURL(i int, name string) *string {
	ld.c.mu.Lock()
	defer ld.c.mu.Unlock()
	return aws.String(ld.c.nodes[i%len(ld.c.nodes)].url + "/000000000000/" + name)
}

// startProducers starts, per node, one standard producer and one FIFO
// producer owning groups of its own. A send that fails moves the producer
// to the next node; a FIFO send is retried (same deduplication ID) until
// acknowledged, so a group's acknowledged messages are 0, 1, 2, ...
func (ld *load) startProducers(ctx context.Context, n int) {
	for p := 0; p < n; p++ {
		p := p
		ld.sendWG.Add(2)
		go func() {
			defer ld.sendWG.Done()
			node := p
			for i := 0; !ld.stopSend.Load() && ctx.Err() == nil; i++ {
				body := fmt.Sprintf("s|%d|%d", p, i)
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := ld.c.client(node).SendMessage(cctx, &sqs.SendMessageInput{QueueUrl: ld.queueURL(node, ld.std), MessageBody: aws.String(body)})
				cancel()
				if err != nil {
					node++ // not acknowledged: it may or may not be stored
					time.Sleep(50 * time.Millisecond)
					continue
				}
				ld.l.ack(body)
				ld.sent.Add(1)
				time.Sleep(ld.pause)
			}
		}()
		go func() {
			defer ld.sendWG.Done()
			node := p
			const groups = 3
			next := make([]int, groups)
			for k := 0; !ld.stopSend.Load() && ctx.Err() == nil; k++ {
				g := k % groups
				group := fmt.Sprintf("p%dg%d", p, g)
				body := fifoName(group, next[g])
				for !ld.stopSend.Load() && ctx.Err() == nil {
					cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
					_, err := ld.c.client(node).SendMessage(cctx, &sqs.SendMessageInput{
						QueueUrl: ld.queueURL(node, ld.fq), MessageBody: aws.String(body),
						MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(strings.ReplaceAll(body, "|", "-")),
					})
					cancel()
					if err == nil {
						ld.l.ack(body)
						ld.sent.Add(1)
						next[g]++
						break
					}
					node++
					time.Sleep(50 * time.Millisecond)
				}
				time.Sleep(ld.pause)
			}
		}()
	}
}

// startConsumers starts, per node, one consumer of each queue. A consumer
// whose request fails moves to the next node.
func (ld *load) startConsumers(ctx context.Context, n int) {
	for p := 0; p < n; p++ {
		for _, q := range []string{ld.std, ld.fq} {
			st := &consumerStats{home: p}
			ld.consumers = append(ld.consumers, st)
			ld.recvWG.Add(1)
			go ld.consume(ctx, q, st)
		}
	}
}

func (ld *load) consume(ctx context.Context, q string, st *consumerStats) {
	defer ld.recvWG.Done()
	node := st.home
	for !ld.stopRecv.Load() && ctx.Err() == nil {
		cl := ld.c.client(node)
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		out, err := cl.ReceiveMessage(cctx, &sqs.ReceiveMessageInput{QueueUrl: ld.queueURL(node, q), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		cancel()
		if err != nil {
			if strings.Contains(err.Error(), "checksum") || strings.Contains(err.Error(), "MD5") {
				ld.l.mu.Lock()
				ld.l.errs = append(ld.l.errs, "receive: "+err.Error())
				ld.l.mu.Unlock()
			}
			node++
			st.failovers.Add(1)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ld.l.got(out.Messages)
		st.total.Add(int64(len(out.Messages)))
		if st.markPassed.Load() && node%len(ld.c.nodes) != st.home {
			st.afterMark.Add(int64(len(out.Messages)))
		}
		time.Sleep(ld.work) // processing: a kill now leaves the messages in flight
		entries := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
		bodies := map[string]string{}
		for i, m := range out.Messages {
			id := strconv.Itoa(i)
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(id), ReceiptHandle: m.ReceiptHandle}
			bodies[id] = aws.ToString(m.Body)
		}
		cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		del, err := cl.DeleteMessageBatch(cctx, &sqs.DeleteMessageBatchInput{QueueUrl: ld.queueURL(node, q), Entries: entries})
		cancel()
		if err != nil {
			// Not acknowledged: the messages come back after their
			// visibility timeout, unless the delete was done and its
			// answer lost.
			ld.l.mu.Lock()
			for _, b := range bodies {
				ld.l.unanswered[b] = true
			}
			ld.l.mu.Unlock()
			node++
			st.failovers.Add(1)
			continue
		}
		for _, ok := range del.Successful {
			ld.l.deleted(bodies[aws.ToString(ok.Id)])
			ld.deletes.Add(1)
		}
	}
}

// markFailover starts counting, per consumer, what it receives from now.
func (ld *load) markFailover() {
	for _, st := range ld.consumers {
		st.markPassed.Store(true)
	}
}

// drain stops the producers, then waits until every acknowledged message
// was deleted (or limit passes), then stops the consumers.
func (ld *load) drain(t *testing.T, limit time.Duration) {
	t.Helper()
	ld.stopSend.Store(true)
	ld.sendWG.Wait()
	deadline := time.Now().Add(limit)
	for ld.l.undeleted() > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	ld.stopRecv.Store(true)
	ld.recvWG.Wait()
}

// sweep receives from every queue on every live node until they are
// empty, recording what it gets (after the visibility timeout, anything
// received is a redelivery: it must not be a message deleted before).
func (ld *load) sweep(ctx context.Context, t *testing.T, nodes []int) {
	t.Helper()
	for _, q := range []string{ld.std, ld.fq} {
		for _, i := range nodes {
			for round := 0; round < 50; round++ {
				out, err := ld.c.client(i).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: ld.queueURL(i, q), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
				if err != nil {
					t.Errorf("sweep: receive on node %d: %v", i, err)
					break
				}
				if len(out.Messages) == 0 {
					break
				}
				ld.l.got(out.Messages)
				for _, m := range out.Messages {
					if _, err := ld.c.client(i).DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: ld.queueURL(i, q), ReceiptHandle: m.ReceiptHandle}); err == nil {
						ld.l.deleted(aws.ToString(m.Body))
					}
				}
			}
		}
	}
}

// Three nodes on one PostgreSQL under load from producers and consumers
// spread over them; one node is killed with SIGKILL mid-load and started
// again later. Every message whose send was acknowledged is received and
// deleted; none deleted comes back after its visibility timeout; FIFO
// order holds within each group; the consumers of the killed node carry
// on through the others; the other nodes stay healthy throughout.
func TestPostgresClusterKillNode(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	c := newCluster(t, dsn, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const vt = 5
	std, fq := createQueues(ctx, t, c.client(0), "cluster", vt)
	ld := &load{c: c, l: newLedger(), std: std, fq: fq, pause: 5 * time.Millisecond, work: 20 * time.Millisecond}
	ld.startConsumers(ctx, 3)
	ld.startProducers(ctx, 3)

	time.Sleep(4 * time.Second)
	const victim = 1
	before := ld.sent.Load()
	c.kill9(victim)
	killedAt := time.Now()
	ld.markFailover()
	t.Logf("killed node %d after %d acknowledged sends", victim, before)
	for _, i := range []int{0, 2} {
		if code := c.health(i); code != http.StatusOK {
			t.Errorf("node %d /health = %d after node %d was killed", i, code, victim)
		}
	}
	time.Sleep(4 * time.Second)
	c.start(victim)
	t.Logf("node %d started again %v after the kill; %d acknowledged sends so far", victim, time.Since(killedAt).Round(time.Millisecond), ld.sent.Load())
	time.Sleep(3 * time.Second)
	ld.drain(t, 30*time.Second)
	t.Logf("sent %d, deleted %d, undeleted %d; load ran %v", ld.sent.Load(), ld.deletes.Load(), ld.l.undeleted(), time.Since(killedAt))

	for _, st := range ld.consumers {
		if st.home == victim && st.afterMark.Load() == 0 {
			t.Errorf("a consumer of the killed node %d received nothing through another node after the kill (failovers %d, total %d)", victim, st.failovers.Load(), st.total.Load())
		}
	}
	var fo []string
	for _, st := range ld.consumers {
		fo = append(fo, fmt.Sprintf("node %d: %d received, %d after the kill through another node, %d failovers", st.home, st.total.Load(), st.afterMark.Load(), st.failovers.Load()))
	}
	t.Logf("consumers: %v; %d messages received more than once", fo, ld.l.redelivered())
	// After the visibility timeout, nothing deleted may come back.
	time.Sleep((vt + 1) * time.Second)
	ld.sweep(ctx, t, []int{0, 1, 2})
	// A delete under way when the node was killed may have committed
	// without its answer reaching the client.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	ld.l.settleUnanswered(ctx, t, conn)
	ld.l.check(t)
	if ld.sent.Load() < 200 {
		t.Errorf("only %d sends acknowledged: the load was too light to show anything", ld.sent.Load())
	}
}
