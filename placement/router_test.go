package placement_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/brokertest"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/placement"
	"github.com/tidemq/tidemq/storage/mem"
)

// memTable is a Table in memory.
type memTable struct {
	mu   sync.Mutex
	rows map[string]string
}

func newMemTable() *memTable { return &memTable{rows: map[string]string{}} }

func (m *memTable) Lookup(_ context.Context, q string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.rows[q]
	return c, ok, nil
}

func (m *memTable) Place(_ context.Context, q, c string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.rows[q]; ok {
		return old, nil
	}
	m.rows[q] = c
	return c, nil
}

func (m *memTable) Counts(context.Context) (map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for _, c := range m.rows {
		out[c]++
	}
	return out, nil
}

func (m *memTable) where(q string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rows[q]
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func engineOn(t *testing.T, clk tidemq.Clock) tidemq.Broker {
	t.Helper()
	e, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, Region: brokertest.Region, AccountID: brokertest.AccountID,
		SweepInterval: -1, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// newRouter opens a Router over two in-memory engines, "a" (home) and "b".
func newRouter(t *testing.T, clk tidemq.Clock, tab placement.Table, check func(context.Context) error) *placement.Router {
	t.Helper()
	r, err := placement.New(placement.Options{
		Clusters: []placement.Cluster{{ID: "a", Broker: engineOn(t, clk)}, {ID: "b", Broker: engineOn(t, clk)}},
		Table:    tab, Region: brokertest.Region, AccountID: brokertest.AccountID, CheckFence: check,
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// secondOnly is a Table whose home cluster "a" looks full: every new
// name goes to "b".
type secondOnly struct{ *memTable }

func (s secondOnly) Counts(ctx context.Context) (map[string]int, error) {
	c, err := s.memTable.Counts(ctx)
	c["a"] = 1 << 30
	return c, err
}

// The Router passes the conformance suite with every queue on a cluster
// other than the home one: every call is routed, none falls through to
// the home broker. (With queues spread by the default rule, the suite's
// checks that join two queues created apart are refused, as
// TestJoiningTwoClustersIsRefused shows.)
func TestConformanceOnTheSecondCluster(t *testing.T) {
	brokertest.Run(t, brokertest.Harness{
		Open: func(t *testing.T, clk *clocktest.Clock) tidemq.Broker {
			tab := newMemTable()
			t.Cleanup(func() {
				for q, c := range tab.rows {
					if c != "b" {
						t.Errorf("queue %s placed on %s", q, c)
					}
				}
			})
			return newRouter(t, clk, secondOnly{tab}, nil)
		},
	})
}
