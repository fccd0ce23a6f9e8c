package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
)

// TestPlanStatsRefreshedWhenMessagesGrow: a session's cached generic plan
// of the group commit's delete, made while messages was empty, still
// scans the whole table after 12,000 messages arrived; the sweep analyzes
// the table, and the same session's next plan probes by key. Then: no
// second ANALYZE within planStatsEvery however the table grows, one after
// it when the table grew past planStatsGrowth times the estimate, and
// none when it did not.
//
// The test has a database of its own: a CREATE or DROP SCHEMA by any other
// test in the same database would discard the cached plan it watches.
func TestPlanStatsRefreshedWhenMessagesGrow(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	b, err := Open(ctx, Options{DSN: pgtest.Database(t), Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
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
	// insert adds n messages sent now (the sweep would drop older ones),
	// their statistics flushed at the commit.
	insert := func(n int) {
		t.Helper()
		tx, err := b.pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
			SELECT $1, nextval('message_seq'), 'm' || i, 'body', 's', $2, $2, $2 FROM generate_series(1, $3) i`,
			q.id, stampOf(clk.Now()), n); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	refresh := func(want bool, when string) {
		t.Helper()
		if did, err := b.refreshPlanStats(ctx); err != nil || did != want {
			t.Fatalf("%s: analyzed %v (%v), want %v", when, did, err, want)
		}
	}

	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	stale := prepareGeneric(t, conn, "stale", commitDeletesSQL)
	plan := func() string { return explain(t, conn, stale) }
	const scan = "Seq Scan on messages"
	if p := plan(); !strings.Contains(p, scan) {
		t.Fatalf("on an empty table the delete's generic plan has no %s; the test shows nothing:\n%s", scan, p)
	}
	refresh(false, "an empty table")

	insert(12000)
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
	if estimate < 11000 {
		t.Fatalf("after the sweep the planner estimates %v rows in messages, want about 12,000 (not analyzed)", estimate)
	}
	if p := plan(); strings.Contains(p, scan) || !strings.Contains(p, "messages_pkey") {
		t.Fatalf("after the sweep's ANALYZE the delete's plan still does not probe messages_pkey:\n%s", p)
	}

	insert(40000) // 52,000: past four times the estimate
	refresh(false, "right after an ANALYZE")
	clk.Advance(planStatsEvery + time.Second)
	refresh(true, "52,000 rows against an estimate of 12,000, once the wait passed")
	clk.Advance(planStatsEvery + time.Second)
	refresh(false, "rows as many as the estimate")
}
