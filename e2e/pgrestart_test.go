package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// waitUntil polls cond every 100 ms until it holds or limit passes.
func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// PostgreSQL restarts while three nodes run under load. The nodes notice
// (/health answers 503) and recover by themselves once it is
// back: /health 200 again, sends succeed on every node, a send on one
// node wakes a long poll on another (each node's LISTEN connection is
// back), and every message whose send was acknowledged, before, during or
// after the restart, is received and deleted.
func TestPostgresClusterDatabaseRestart(t *testing.T) {
	t.Parallel()
	srv := ownPostgres(t)
	c := newCluster(t, srv.DSN, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	std, fq := createQueues(ctx, t, c.client(0), "restart", 5)
	ld := &load{c: c, l: newLedger(), std: std, fq: fq, pause: 5 * time.Millisecond, work: 5 * time.Millisecond}
	ld.startConsumers(ctx, 3)
	ld.startProducers(ctx, 3)
	time.Sleep(3 * time.Second)

	before := ld.sent.Load()
	if err := srv.Halt(); err != nil {
		t.Fatal(err)
	}
	halted := time.Now()
	for i := 0; i < 3; i++ {
		if !waitUntil(10*time.Second, func() bool { return c.health(i) == http.StatusServiceUnavailable }) {
			t.Errorf("node %d /health not 503 within 10 s of PostgreSQL stopping (now %d)", i, c.health(i))
		}
	}
	time.Sleep(time.Until(halted.Add(3 * time.Second)))
	during := ld.sent.Load()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	t.Logf("PostgreSQL down %v; %d sends acknowledged before, %d while it stopped", resumed.Sub(halted).Round(time.Millisecond), before, during-before)
	for i := 0; i < 3; i++ {
		if !waitUntil(30*time.Second, func() bool { return c.health(i) == http.StatusOK }) {
			t.Fatalf("node %d /health not 200 within 30 s of PostgreSQL coming back", i)
		}
	}
	t.Logf("every node healthy %v after PostgreSQL came back", time.Since(resumed).Round(time.Millisecond))
	for i := 0; i < 3; i++ {
		ok := waitUntil(20*time.Second, func() bool {
			_, err := c.client(i).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: ld.queueURL(i, "restart-probe"), MessageBody: aws.String("probe")})
			if err != nil {
				// The probe queue is created on first use, on any node.
				_, _ = c.client(i).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("restart-probe")})
			}
			return err == nil
		})
		if !ok {
			t.Errorf("no send succeeded on node %d within 20 s of PostgreSQL coming back", i)
		}
	}
	afterSends := ld.sent.Load()
	if !waitUntil(20*time.Second, func() bool { return ld.sent.Load() > afterSends+50 }) {
		t.Errorf("the producers did not get going again after PostgreSQL came back")
	}

	// Long polls across nodes: each node's poll woken by a send on the next.
	for i := 0; i < 3; i++ {
		wq := "restart-wake-" + string(rune('a'+i))
		if _, err := c.client(i).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(wq)}); err != nil {
			t.Fatal(err)
		}
		done := make(chan *sqs.ReceiveMessageOutput, 1)
		go func() {
			out, err := c.client(i).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: ld.queueURL(i, wq), WaitTimeSeconds: 20})
			if err != nil {
				t.Errorf("long poll on node %d: %v", i, err)
			}
			done <- out
		}()
		time.Sleep(time.Second)
		sent := time.Now()
		j := (i + 1) % 3
		if _, err := c.client(j).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: ld.queueURL(j, wq), MessageBody: aws.String("wake")}); err != nil {
			t.Fatalf("send on node %d: %v", j, err)
		}
		select {
		case out := <-done:
			if out == nil || len(out.Messages) != 1 {
				t.Errorf("long poll on node %d returned %v, want the message sent on node %d", i, out, j)
			} else if d := time.Since(sent); d > 5*time.Second {
				t.Errorf("long poll on node %d woken %v after the send on node %d", i, d, j)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("long poll on node %d not woken by a send on node %d within 15 s", i, j)
		}
	}

	ld.drain(t, 30*time.Second)
	t.Logf("sent %d, deleted %d, %d received more than once", ld.sent.Load(), ld.deletes.Load(), ld.l.redelivered())
	time.Sleep(6 * time.Second)
	ld.sweep(ctx, t, []int{0, 1, 2})
	ld.l.check(t)
}
