package sns_test

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"testing"

	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// TestOnPostgres runs the checks whose behaviour goes through the broker or
// the topic service's store (storeChecks) with both on PostgreSQL, as
// `tidemq serve --store postgres://…` runs them: the two stores are one
// product.
func TestOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	dsn, _ := pgtest.Isolated(t)
	names := make([]string, 0, len(storeChecks))
	for name := range storeChecks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			b, err := postgres.Open(ctx, postgres.Options{DSN: dsn, Region: "us-east-1", AccountID: account, SweepInterval: -1, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			kv, err := postgres.OpenKV(ctx, postgres.Options{DSN: dsn})
			if err != nil {
				b.Close()
				t.Fatal(err)
			}
			storeChecks[name](t, newEnvOn(t, b, kv, nil))
		})
	}
}
