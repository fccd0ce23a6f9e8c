package postgres_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// The depth counters (migrations/0007_queue_depth.sql) and the bytes
// counters (0013_queue_bytes.sql) match the messages table after
// concurrent sends, receives and deletes through two nodes, a dead-letter
// move, a purge and a retention sweep: every write path keeps them.
func TestDepthCountersMatchTheTable(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	// The second node checks a --max-queue-bytes it never reaches: its
	// sends go through the statements that check it.
	b1, b2 := open(t, dsn, clk), openLimited(t, dsn, clk, brokertest.Limits{MaxQueueBytes: 1 << 40})
	t.Cleanup(func() { b1.Close(); b2.Close() })
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	check := func(when string) {
		t.Helper()
		rows, err := db.Query(ctx, `SELECT q.name, (SELECT count(*) FROM messages m WHERE m.queue_id = q.id),
			(SELECT count(*) FROM messages m WHERE m.queue_id = q.id AND m.dlq_source <> ''),
			coalesce((SELECT sum(messages) FROM queue_depth d WHERE d.queue_id = q.id), 0),
			coalesce((SELECT sum(dead_lettered) FROM queue_depth d WHERE d.queue_id = q.id), 0),
			coalesce((SELECT sum(size) FROM messages m WHERE m.queue_id = q.id), 0)::bigint,
			coalesce((SELECT sum(bytes) FROM queue_depth d WHERE d.queue_id = q.id), 0)::bigint
			FROM queues q ORDER BY q.name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var name string
			var n, dead, cn, cdead, size, cbytes int64
			if err := rows.Scan(&name, &n, &dead, &cn, &cdead, &size, &cbytes); err != nil {
				t.Fatal(err)
			}
			if n != cn || dead != cdead || size != cbytes {
				t.Errorf("%s: queue %s has %d messages (%d dead letters, %d bytes), its counters say %d (%d, %d)",
					when, name, n, dead, size, cn, cdead, cbytes)
			}
		}
	}
	for _, p := range []tidemq.CreateQueueParams{{Name: "dlq"}, {Name: "q", Attributes: map[string]string{
		tidemq.AttrRedrivePolicy:          `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":"1"}`,
		tidemq.AttrMessageRetentionPeriod: "600"}}} {
		if _, err := b1.CreateQueue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i, b := range []tidemq.Broker{b1, b2, b1, b2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 25; j++ {
				var entries []tidemq.SendEntry
				for k := 0; k < 1+j%10; k++ {
					entries = append(entries, tidemq.SendEntry{ID: strconv.Itoa(k), Body: strings.Repeat("x", 1+k*j),
						Attributes: map[string]tidemq.MessageAttributeValue{"k": {DataType: "Number", StringValue: strconv.Itoa(k)}}})
				}
				if _, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: entries, Batch: true}); err != nil {
					t.Error(err)
					return
				}
				ms, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: ptr(3), WaitTimeSeconds: ptr(0)})
				if err != nil {
					t.Error(err)
					return
				}
				if i%2 == 0 && len(ms) > 0 {
					if _, err := b.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: "q", Entries: []tidemq.DeleteEntry{{ID: "0", ReceiptHandle: ms[0].ReceiptHandle}}}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	check("after concurrent sends, receives and deletes")
	clk.Advance(time.Minute) // every receive's 30 s timeout ran out: the next receive dead-letters
	if _, err := b2.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: ptr(10), WaitTimeSeconds: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	check("after dead-letter moves")
	attrs, err := b1.GetQueueAttributes(ctx, tidemq.GetQueueAttributesParams{Queue: "dlq", Names: []string{tidemq.AttrAll}})
	if err != nil || attrs[tidemq.AttrApproximateNumberOfMessages] == "0" {
		t.Fatalf("the dead-letter queue's attributes: %v, %v", attrs, err)
	}
	if err := b1.PurgeQueue(ctx, tidemq.PurgeQueueParams{Queue: "dlq"}); err != nil {
		t.Fatal(err)
	}
	check("after a purge")
	clk.Advance(11 * time.Minute)
	if err := b2.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the retention sweep")
	if err := b1.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM queue_depth WHERE queue_id NOT IN (SELECT id FROM queues)`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d counter rows of deleted queues (%v)", left, err)
	}
}
