package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// TestPlanStatsRefreshedWhenMessagesGrow: a session's cached generic plan
// of the group commit's delete, made while messages was empty, still
// scans the whole table after 20,000 messages arrived; the sweep analyzes
// the table, and the same session's next plan probes by key. A second
// sweep does not analyze again.
func TestPlanStatsRefreshedWhenMessagesGrow(t *testing.T) {
	ctx := context.Background()
	b := openInternal(t)
	// Autovacuum must not analyze the table on its own during the test.
	if _, err := b.pool.Exec(ctx, `ALTER TABLE messages SET (autovacuum_enabled = false)`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	q, err := b.queueFor(ctx, nil, "q")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, s := range []string{`PREPARE stale AS ` + commitDeletesSQL, `SET plan_cache_mode = force_generic_plan`} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	plan := func() string { return explain(t, conn, `EXECUTE stale(`+nulls(14)+`)`) }
	const scan = "Seq Scan on messages"
	if p := plan(); !strings.Contains(p, scan) {
		t.Fatalf("on an empty table the delete's generic plan has no %s; the test shows nothing:\n%s", scan, p)
	}
	if did, err := b.refreshPlanStats(ctx); err != nil || did {
		t.Fatalf("an empty table analyzed: %v, %v", did, err)
	}

	// 20,000 messages sent now (the sweep would drop older ones), their
	// statistics flushed at the commit.
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
		SELECT $1, nextval('message_seq'), 'm' || i, 'body', 's', $2, $2, $2 FROM generate_series(1, 20000) i`, q.id, stampOf(b.clock.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if p := plan(); !strings.Contains(p, scan) {
		t.Fatalf("the cached plan changed before any ANALYZE:\n%s", p)
	}

	if err := b.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	var estimate float64
	if err := b.pool.QueryRow(ctx, `SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass`).Scan(&estimate); err != nil {
		t.Fatal(err)
	}
	if estimate < 15000 {
		t.Fatalf("after the sweep the planner estimates %v rows in messages, want about 20,000 (not analyzed)", estimate)
	}
	if p := plan(); strings.Contains(p, scan) || !strings.Contains(p, "messages_pkey") {
		t.Fatalf("after the sweep's ANALYZE the delete's plan still does not probe messages_pkey:\n%s", p)
	}
	if did, err := b.refreshPlanStats(ctx); err != nil || did {
		t.Fatalf("a second look analyzed again: %v, %v", did, err)
	}
}
