package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// explain returns EXPLAIN's text of query (an EXECUTE of a prepared
// statement) on db.
func explain(t *testing.T, db querier, query string) string {
	t.Helper()
	rows, err := db.Query(context.Background(), `EXPLAIN `+query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

// genericPlan returns the generic plan of sql (EXPLAIN's text) on a fresh
// schema: tables empty and never analyzed, as on a new install or in the
// first minutes of a new database. pgx caches its statements, and after
// five executions PostgreSQL may settle on a generic plan made for the
// tables as they were then, and keep it while they grow: such a plan must
// already read by key.
func genericPlan(t *testing.T, sql string) string {
	t.Helper()
	ctx := context.Background()
	_, pool := pgtest.SchemaPool(t)
	if err := migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	return explain(t, conn, prepareGeneric(t, conn, "p", sql))
}

// prepareGeneric prepares sql as name on conn, whose plans are generic
// from then on, and returns an EXECUTE of it with NULL arguments.
func prepareGeneric(t *testing.T, conn *pgxpool.Conn, name, sql string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `PREPARE `+name+` AS `+sql); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT cardinality(parameter_types) FROM pg_prepared_statements WHERE name = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	return `EXECUTE ` + name + `(` + strings.TrimSuffix(strings.Repeat("NULL, ", n), ", ") + `)`
}

// TestFIFOSentReadsTheWindowByKey: the answer of a FIFO send reads each
// key's message from the deduplication window by its primary key, in the
// plan that a fresh database gives it, and never hashes against the
// queue's whole window (which grows with every send for five minutes).
func TestFIFOSentReadsTheWindowByKey(t *testing.T) {
	plan := genericPlan(t, fifoSentSQL)
	if !strings.Contains(plan, "Index Scan using dedup_pkey on dedup") || !strings.Contains(plan, "(key = e.k)") {
		t.Errorf("fifoSentSQL's generic plan does not probe dedup_pkey by key:\n%s", plan)
	}
	for _, bad := range []string{"Hash", "Seq Scan on dedup", "Bitmap Heap Scan on dedup"} {
		if strings.Contains(plan, bad) {
			t.Errorf("fifoSentSQL's generic plan has a %s, a read of the queue's whole window:\n%s", bad, plan)
		}
	}
}
