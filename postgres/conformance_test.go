package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func open(t *testing.T, dsn string, clk tidemq.Clock) *postgres.Broker {
	t.Helper()
	return openLimited(t, dsn, clk, brokertest.Limits{})
}

func openLimited(t *testing.T, dsn string, clk tidemq.Clock, l brokertest.Limits) *postgres.Broker {
	t.Helper()
	b, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Clock: clk,
		Region: brokertest.Region, AccountID: brokertest.AccountID, SweepInterval: -1, Logger: quiet(),
		Inflight: l.Inflight, MaxQueueBytes: l.MaxQueueBytes})
	if err != nil {
		t.Fatalf("postgres.Open: %v", err)
	}
	return b
}

// The PostgreSQL broker must pass the conformance suite. Each check gets
// a fresh schema; Reopen closes the broker and opens the same schema.
func TestConformance(t *testing.T) {
	dsns := map[tidemq.Broker]string{}
	brokertest.Run(t, brokertest.Harness{
		Open: func(t *testing.T, clk *clocktest.Clock) tidemq.Broker {
			dsn, _ := pgtest.Schema(t)
			b := open(t, dsn, clk)
			dsns[b] = dsn
			return b
		},
		Reopen: func(t *testing.T, b tidemq.Broker, clk *clocktest.Clock) tidemq.Broker {
			dsn := dsns[b]
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			nb := open(t, dsn, clk)
			dsns[nb] = dsn
			return nb
		},
		OpenLimited: func(t *testing.T, clk *clocktest.Clock, l brokertest.Limits) tidemq.Broker {
			dsn, _ := pgtest.Schema(t)
			return openLimited(t, dsn, clk, l)
		},
	})
}
