package postgres_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// Nodes that start at once on an empty schema apply each migration once.
func TestMigrationsUnderConcurrentStarts(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, SweepInterval: -1, Logger: quiet()})
			if err == nil {
				b.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("node %d: Open: %v", i, err)
		}
	}
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n, distinct int
	if err := c.QueryRow(ctx, `SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n < 2 || n != distinct {
		t.Fatalf("schema_migrations holds %d rows for %d versions", n, distinct)
	}
	// A database upgraded by a newer tidemq is refused, not misread.
	if _, err := c.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, postgres.Options{DSN: dsn, SweepInterval: -1, Clock: tidemq.SystemClock{}, Logger: quiet()})
	if err == nil || !strings.Contains(err.Error(), "newer than this tidemq") {
		t.Fatalf("Open on a schema from the future: %v", err)
	}
}
