package pgtest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tidemq/tidemq/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func TestSchemaIsolated(t *testing.T) {
	start := time.Now()
	dsn, schema := pgtest.Schema(t)
	t.Logf("schema %s in %v", schema, time.Since(start))
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var got string
	if err := c.QueryRow(ctx, "SELECT current_schema()").Scan(&got); err != nil || got != schema {
		t.Fatalf("current_schema = %q, %v; want %q", got, err, schema)
	}
}
