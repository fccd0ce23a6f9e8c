package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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
	// the client.
	ld.l.settleUnanswered(ctx, t, conn)
	ld.l.check(t)
	if before < 100 {
		t.Errorf("only %d sends acknowledged before the kill: the load was too light to show anything", before)
	}
}

// gate is a TCP forwarder that can be cut: while cut, it moves no byte
// (what it has read waits, the rest stays in the kernel's buffers), as a
// link that stopped carrying packets; mended, it carries them again.
type gate struct {
	addr string
	mu   sync.Mutex
	cut  bool
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	pipe := func(dst, src net.Conn) {
		defer dst.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			for g.isCut() {
				time.Sleep(10 * time.Millisecond)
			}
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go pipe(s, c)
			go pipe(c, s)
		}
	}()
	return g
}

func (g *gate) isCut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cut
}

func (g *gate) set(cut bool) {
	g.mu.Lock()
	g.cut = cut
	g.mu.Unlock()
}

// The primary cut off from its synchronous standby acknowledges nothing
// that changes a queue: a send waits for the standby (the client gives up
// on it: not acknowledged), and is acknowledged again once the link is
// mended. Every message acknowledged, before and after, is on the standby
// (read there directly): a failover at any moment would lose none.
func TestPostgresPrimaryCutOffFromItsStandby(t *testing.T) {
	t.Parallel()
	pair, err := pgtest.StartPair()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("PostgreSQL with a standby is required under CI=true: %v", err)
		}
		t.Skipf("no PostgreSQL primary and standby: %v", err)
	}
	t.Cleanup(pair.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pu, err := url.Parse(pair.Primary.DSN)
	if err != nil {
		t.Fatal(err)
	}
	// The standby streams through a gate.
	g := newGate(t, pu.Host)
	standby, err := pgx.Connect(ctx, pair.Standby.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close(context.Background())
	primary, err := pgx.Connect(ctx, pair.Primary.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close(context.Background())
	var oldPID int
	if err := primary.QueryRow(ctx, `SELECT pid FROM pg_stat_replication WHERE application_name = $1`, pgtest.StandbyName).Scan(&oldPID); err != nil {
		t.Fatal(err)
	}
	_, gport, _ := net.SplitHostPort(g.addr)
	if _, err := standby.Exec(ctx, fmt.Sprintf(`ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=%s user=postgres application_name=%s'`, gport, pgtest.StandbyName)); err != nil {
		t.Fatal(err)
	}
	if _, err := standby.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}
	eventuallyE2E(t, "the standby streams synchronously through the gate", func() bool {
		var pid int
		var state string
		err := primary.QueryRow(ctx, `SELECT pid, sync_state FROM pg_stat_replication WHERE application_name = $1`, pgtest.StandbyName).Scan(&pid, &state)
		return err == nil && pid != oldPID && state == "sync"
	})

	s := startServer(t, "--store", pair.DSN, "--data-dir", t.TempDir(), "--no-alarms", "--lease-ttl", "3s")
	cl := sdkClient(s)
	qURL := s.createQueue(t, "sync", nil)
	var acked []string
	send := func(body string, timeout time.Duration) error {
		sctx, scancel := context.WithTimeout(ctx, timeout)
		defer scancel()
		_, err := cl.SendMessage(sctx, &sqs.SendMessageInput{QueueUrl: aws.String(qURL), MessageBody: aws.String(body)})
		if err == nil {
			acked = append(acked, body)
		}
		return err
	}
	for i := range 5 {
		if err := send(fmt.Sprintf("before-%d", i), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	g.set(true)
	cut := time.Now()
	for i := range 3 {
		if err := send(fmt.Sprintf("during-%d", i), 2*time.Second); err == nil {
			t.Errorf("a send was acknowledged %v after the primary was cut off from its synchronous standby", time.Since(cut).Round(time.Millisecond))
		}
	}
	g.set(false)
	mended := time.Now()
	for i := 0; ; i++ {
		if err := send(fmt.Sprintf("after-%d", i), 5*time.Second); err == nil {
			t.Logf("sends acknowledged again %v after the link was mended", time.Since(mended).Round(time.Millisecond))
			break
		}
		if time.Since(mended) > 30*time.Second {
			t.Fatalf("no send acknowledged 30 s after the link was mended")
		}
	}
	// Every acknowledged send is on the standby (it replays what it
	// acknowledged; wait for the replay, not for the acknowledgement).
	for _, body := range acked {
		eventuallyE2E(t, body+" on the standby", func() bool {
			var n int
			return standby.QueryRow(ctx, `SELECT count(*) FROM messages WHERE body = $1`, body).Scan(&n) == nil && n == 1
		})
	}
	t.Logf("%d acknowledged sends, all on the standby", len(acked))
}
