package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// failoverBound is the longest the test accepts between the standby's
// promotion and both nodes acknowledging sends again. Measured here: well
// under a second on an idle machine, a few on a loaded one (2 cores shared
// with other builds); the bound leaves room for that.
const failoverBound = 10 * time.Second

// Two `tidemq serve` nodes on a PostgreSQL primary with a synchronous
// streaming standby, given both hosts (target_session_attrs=read-write),
// under load from SDK producers and consumers. The primary is killed
// (SIGKILL to it and its backends) and the standby promoted, as an HA
// manager would; the nodes find the new primary by themselves. Every
// acknowledged send is received and deleted, no acknowledged delete comes
// back, FIFO order holds per group, both nodes serve again within
// failoverBound of the promotion, their LISTEN connections are restored
// and the leader lease is held again on the new primary.
func TestPostgresFailoverToASynchronousStandby(t *testing.T) {
	t.Parallel()
	pair, err := pgtest.StartPair()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL with a standby is required under CI=true: %v", err)
		}
		t.Skipf("no PostgreSQL primary and standby: %v", err)
	}
	t.Cleanup(pair.Stop)
	dir := t.TempDir()
	c := &cluster{t: t, dsn: pair.DSN, dir: dir, nodes: make([]*server, 2), sdk: make([]*sqs.Client, 2)}
	for i := range c.nodes {
		s := startServer(t, "--store", pair.DSN, "--data-dir", filepath.Join(dir, strconv.Itoa(i)), "--no-alarms", "--lease-ttl", "3s")
		c.nodes[i], c.sdk[i] = s, sdkClient(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const vt = 3
	std, fq := createQueues(ctx, t, c.client(0), "failover", vt)
	ld := &load{c: c, l: newLedger(), std: std, fq: fq, pause: 5 * time.Millisecond, work: 10 * time.Millisecond}
	ld.startConsumers(ctx, 2)
	ld.startProducers(ctx, 2)
	time.Sleep(3 * time.Second)

	before := ld.sent.Load()
	if err := pair.KillPrimary(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := pair.Promote(); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	t.Logf("primary killed after %d acknowledged sends; standby promoted in %v", before, promoted.Sub(killed).Round(time.Millisecond))

	// Service back: a send acknowledged by each node (the probes join the
	// ledger: they too must be received and deleted).
	for i := range c.nodes {
		for n := 0; ; n++ {
			body := fmt.Sprintf("s|probe%d|%d", i, n)
			pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := c.client(i).SendMessage(pctx, &sqs.SendMessageInput{QueueUrl: ld.queueURL(i, std), MessageBody: aws.String(body)})
			pcancel()
			if err == nil {
				ld.l.ack(body)
				t.Logf("node %d acknowledges sends again %v after the promotion (%v after the kill)", i,
					time.Since(promoted).Round(time.Millisecond), time.Since(killed).Round(time.Millisecond))
				break
			}
			if time.Since(promoted) > failoverBound {
				t.Fatalf("node %d still fails %v after the promotion: %v", i, failoverBound, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sentAtRecovery := ld.sent.Load()
	time.Sleep(3 * time.Second)
	if ld.sent.Load() <= sentAtRecovery {
		t.Errorf("no send acknowledged in the 3 s after both nodes recovered")
	}
	// Messages whose delete failed at the failover come back after vt;
	// the few whose delete was done without an answer never do.
	ld.drain(t, 3*vt*time.Second)
	t.Logf("sent %d (%d before the kill), deleted %d, undeleted %d, %d received more than once",
		ld.sent.Load(), before, ld.deletes.Load(), ld.l.undeleted(), ld.l.redelivered())
	for i := range c.nodes {
		if code := c.health(i); code != http.StatusOK {
			t.Errorf("node %d /health = %d after the failover", i, code)
		}
		if logs := c.nodes[i].logs.String(); !strings.Contains(logs, "LISTEN connection restored") {
			t.Errorf("node %d did not log its LISTEN connection restored", i)
		}
	}
	// The leader lease, on the new primary, is held again.
	conn, err := pgx.Connect(ctx, pair.Standby.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var holder string
	var expires int64
	if err := conn.QueryRow(ctx, `SELECT holder, expires FROM leases WHERE name = 'leader'`).Scan(&holder, &expires); err != nil {
		t.Fatalf("the leader lease on the new primary: %v", err)
	}
	if holder == "" || time.Unix(0, expires).Before(time.Now()) {
		t.Errorf("the leader lease on the new primary is not held: holder %q, expires %v", holder, time.Unix(0, expires))
	}

	// After the visibility timeout, nothing deleted may come back.
	time.Sleep((vt + 1) * time.Second)
	ld.sweep(ctx, t, []int{0, 1})
	// A delete under way when the primary died may have committed (on
	// both servers: synchronous replication) without its answer reaching
	// the client: such a message is gone, rightly. Any other acknowledged
	// message missing, or still stored and never received again, fails.
	ld.l.mu.Lock()
	var undeleted []string
	for b := range ld.l.acked {
		if _, ok := ld.l.deletedAt[b]; !ok {
			undeleted = append(undeleted, b)
		}
	}
	ld.l.mu.Unlock()
	for _, b := range undeleted {
		var stored int
		var visibleAt int64
		err := conn.QueryRow(ctx, `SELECT count(*), coalesce(max(visible_at), 0) FROM messages WHERE body = $1`, b).Scan(&stored, &visibleAt)
		if err != nil {
			t.Fatal(err)
		}
		ld.l.mu.Lock()
		unanswered := ld.l.unanswered[b]
		ld.l.mu.Unlock()
		switch {
		case stored == 0 && unanswered:
			t.Logf("%s: its delete failed at the failover and was done (the message is gone)", b)
			ld.l.deleted(b)
		case stored > 0:
			t.Errorf("%s: still stored (visible at %v) but never received again", b, time.Unix(0, visibleAt))
		}
	}
	ld.l.check(t)
	if before < 100 {
		t.Errorf("only %d sends acknowledged before the kill: the load was too light to show anything", before)
	}
}
