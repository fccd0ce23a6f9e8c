package postgres_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// leasePool opens a pool on a fresh, migrated schema.
func leasePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	_, pool := pgtest.SchemaPool(t)
	if _, err := postgres.OpenKV(context.Background(), postgres.Options{Pool: pool}); err != nil { // migrates
		t.Fatal(err)
	}
	return pool
}

func newLeases(t *testing.T, pool *pgxpool.Pool, holder string, clk *clocktest.Clock) *postgres.Leases {
	t.Helper()
	l, err := postgres.NewLeases(pool, postgres.LeaseOptions{Holder: holder, TTL: 15 * time.Second, Clock: clk, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// One holder at a time: the other takes the lease only once it expired on
// the clock, with a new generation, and the old holder's fenced write is
// refused from then on.
func TestLeaseOneHolderUntilExpiry(t *testing.T) {
	ctx := context.Background()
	pool := leasePool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	a, b := newLeases(t, pool, "a", clk), newLeases(t, pool, "b", clk)

	la, ok, err := a.Acquire(ctx, "job")
	if err != nil || !ok {
		t.Fatalf("a takes a free lease: %v %v", ok, err)
	}
	if _, ok, err := b.Acquire(ctx, "job"); err != nil || ok {
		t.Fatalf("b took a lease a holds: %v %v", ok, err)
	}
	clk.Advance(10 * time.Second)
	la2, ok, err := a.Acquire(ctx, "job") // renewal
	if err != nil || !ok || la2.Generation != la.Generation {
		t.Fatalf("a renews: ok %v err %v, generation %d then %d", ok, err, la.Generation, la2.Generation)
	}
	clk.Advance(14 * time.Second) // 24s after taking, 14s after renewing
	if _, ok, _ := b.Acquire(ctx, "job"); ok {
		t.Fatal("b took the lease before the renewal expired")
	}
	if alive, err := b.Alive(ctx, "job"); err != nil || !alive {
		t.Fatalf("Alive before expiry: %v %v", alive, err)
	}
	clk.Advance(time.Second) // expired
	if alive, _ := b.Alive(ctx, "job"); alive {
		t.Fatal("Alive after expiry")
	}
	lb, ok, err := b.Acquire(ctx, "job")
	if err != nil || !ok || lb.Generation != la.Generation+1 {
		t.Fatalf("b takes the expired lease: ok %v err %v generation %d (a had %d)", ok, err, lb.Generation, la.Generation)
	}
	if _, ok, _ := a.Acquire(ctx, "job"); ok {
		t.Fatal("a took back the lease b holds")
	}
	for _, c := range []struct {
		l     *postgres.Leases
		lease postgres.Lease
		want  bool
	}{{a, la2, false}, {b, lb, true}} {
		fctx := tidemq.WithFence(ctx, tidemq.Fence{Lease: "job", Holder: c.l.Holder(), Token: c.lease.Generation})
		if err := c.l.Check(fctx); (err == nil) != c.want || (err != nil && !errors.Is(err, tidemq.ErrFenced)) {
			t.Errorf("%s Check at token %d = %v; want current %v", c.l.Holder(), c.lease.Generation, err, c.want)
		}
	}
	// Released, it is free at once.
	if err := b.Release(ctx, "job"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Acquire(ctx, "job"); !ok {
		t.Fatal("a cannot take a released lease")
	}
}

// waitFor polls cond in real time (the goroutines under test run on
// their own).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Hold on two nodes runs the job on one; when that node stops, the other
// takes over (at its next try, as the lease is released); when a node's
// lease is taken from it (it could not renew in time), its job is
// cancelled at its next renewal, before the new holder could start.
func TestLeaseHoldFailsOver(t *testing.T) {
	pool := leasePool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	var running, started [2]atomic.Int32
	var ctxs [2]context.CancelFunc
	var done [2]chan struct{}
	hold := func(i int, name string) {
		l := newLeases(t, pool, []string{"a", "b"}[i], clk)
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[i], done[i] = cancel, make(chan struct{})
		go func() {
			defer close(done[i])
			l.Hold(ctx, name, func(ctx context.Context) {
				started[i].Add(1)
				running[i].Add(1)
				<-ctx.Done()
				running[i].Add(-1)
			})
		}()
	}
	t.Cleanup(func() {
		for i := range ctxs {
			if ctxs[i] != nil {
				ctxs[i]()
				<-done[i]
			}
		}
	})
	hold(0, "job")
	waitFor(t, "a runs the job", func() bool { return running[0].Load() == 1 })
	hold(1, "job")
	if !clk.WaitForTimers(2, 10*time.Second) { // a renews, b waits to retry
		t.Fatal("b did not wait")
	}
	for range 6 { // a renews, b keeps failing
		clk.Advance(5 * time.Second)
		clk.WaitForTimers(2, 10*time.Second)
	}
	if running[1].Load() != 0 || started[0].Load() != 1 {
		t.Fatalf("b runs %d, a started %d times", running[1].Load(), started[0].Load())
	}
	// a stops: it releases, b takes over at its next try.
	ctxs[0]()
	<-done[0]
	ctxs[0] = nil
	if running[0].Load() != 0 {
		t.Fatal("a's job still runs after Hold returned")
	}
	clk.Advance(5 * time.Second)
	waitFor(t, "b takes over", func() bool { return running[1].Load() == 1 })

	// The lease is taken from b behind its back (as if it had not renewed
	// for a TTL): b's job stops at its next renewal.
	if _, err := pool.Exec(context.Background(), `UPDATE leases SET holder = 'c', generation = generation + 1 WHERE name = 'job'`); err != nil {
		t.Fatal(err)
	}
	clk.WaitForTimers(1, 10*time.Second)
	clk.Advance(5 * time.Second)
	waitFor(t, "b stops a job whose lease it lost", func() bool { return running[1].Load() == 0 })
}

// A job that ends by itself gives the lease up: another node can take it
// at once rather than after the expiry.
func TestLeaseHoldReleasesWhenTheJobEnds(t *testing.T) {
	pool := leasePool(t)
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	a, b := newLeases(t, pool, "a", clk), newLeases(t, pool, "b", clk)
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var once atomic.Bool
		a.Hold(ctx, "job", func(context.Context) {
			if once.CompareAndSwap(false, true) {
				close(held)
			}
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	<-held
	waitFor(t, "b takes the lease a's ended job gave up", func() bool {
		_, ok, err := b.Acquire(context.Background(), "job")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
}
