package engine_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// The engine must pass the conformance suite on both of its stores, with
// every message in memory and with the backlog paged. The paged runs use
// pages of a few messages, so that the suite's small queues are paged out
// and in all the time (a page of DefaultPageSize would hold them all).

func openConformance(t *testing.T, store storage.Store, clk *clocktest.Clock, pageSize int) *engine.Engine {
	return openLimited(t, store, clk, pageSize, brokertest.Limits{})
}

func openLimited(t *testing.T, store storage.Store, clk *clocktest.Clock, pageSize int, l brokertest.Limits) *engine.Engine {
	t.Helper()
	e, err := engine.Open(engine.Options{Store: store, Clock: clk, Region: brokertest.Region, AccountID: brokertest.AccountID,
		SweepInterval: -1, PageSize: pageSize, Inflight: l.Inflight, MaxQueueBytes: l.MaxQueueBytes,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("engine.Open: %v", err)
	}
	return e
}

func TestConformanceMem(t *testing.T)      { conformanceMem(t, 0) }
func TestConformanceMemPaged(t *testing.T) { conformanceMem(t, 2) }

func conformanceMem(t *testing.T, pageSize int) {
	stores := map[tidemq.Broker]*mem.Store{} // mem.Store.Close keeps the data, so the same store reopens
	brokertest.Run(t, brokertest.Harness{
		Open: func(t *testing.T, clk *clocktest.Clock) tidemq.Broker {
			s := mem.New()
			e := openConformance(t, s, clk, pageSize)
			stores[e] = s
			return e
		},
		Reopen: func(t *testing.T, b tidemq.Broker, clk *clocktest.Clock) tidemq.Broker {
			s := stores[b]
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			e := openConformance(t, s, clk, pageSize)
			stores[e] = s
			return e
		},
		OpenLimited: func(t *testing.T, clk *clocktest.Clock, l brokertest.Limits) tidemq.Broker {
			return openLimited(t, mem.New(), clk, pageSize, l)
		},
	})
}

func TestConformancePebble(t *testing.T) {
	dirs := map[tidemq.Broker]string{}
	open := func(t *testing.T, dir string, clk *clocktest.Clock) tidemq.Broker {
		s, err := pebble.Open(dir, pebble.Options{})
		if err != nil {
			t.Fatalf("pebble.Open: %v", err)
		}
		e := openConformance(t, s, clk, 3)
		dirs[e] = dir
		return e
	}
	brokertest.Run(t, brokertest.Harness{
		Open: func(t *testing.T, clk *clocktest.Clock) tidemq.Broker { return open(t, t.TempDir(), clk) },
		OpenLimited: func(t *testing.T, clk *clocktest.Clock, l brokertest.Limits) tidemq.Broker {
			s, err := pebble.Open(t.TempDir(), pebble.Options{})
			if err != nil {
				t.Fatalf("pebble.Open: %v", err)
			}
			return openLimited(t, s, clk, 3, l)
		},
		Reopen: func(t *testing.T, b tidemq.Broker, clk *clocktest.Clock) tidemq.Broker {
			if err := b.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return open(t, dirs[b], clk)
		},
	})
}
