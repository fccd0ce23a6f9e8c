package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// Leases are tidemq.Leases on PostgreSQL: a row of the leases table per
// name (migrations/0004_leases.sql), with its holder, its expiry and a
// generation that grows at each change of holder. The row is never
// deleted (a release clears its holder), so the generation never goes
// back: it is the lease's fencing token (tidemq.Fence, fence.go).
//
// Times come from the injected Clock, like every deadline of the package:
// a lease is taken when it is free or expired on the taker's clock, so
// the nodes' clocks must agree to well within TTL/3.
//
// Fencing: a holder renews every TTL/3 and cancels its job when a renewal
// fails, or has not succeeded TTL·2/3 after the last one began (the
// renewal's own deadline). Another node can take the lease only TTL after
// that last successful renewal began, so the job has TTL/3 to stop before
// anybody else starts; jobs stop at their context's cancellation (a
// trigger's polls end at once). That is not enough for a holder that is
// paused (or cut off) past its lease: a paused process cannot be
// cancelled. So Hold's job also carries the lease's fence in its context
// (tidemq.WithFence), and the Broker and the KV refuse a write whose fence
// is stale in the write's own transaction (checkFence).
type Leases struct {
	pool   *pgxpool.Pool
	clock  tidemq.Clock
	holder string
	ttl    time.Duration
	log    *slog.Logger

	mu      sync.Mutex
	current map[string]int64 // lease name -> token of the job Hold runs now
}

var _ tidemq.Leases = (*Leases)(nil)

// DefaultLeaseTTL is how long a lease lasts without renewal: a node that
// dies is replaced within TTL + TTL/3 (the other nodes try every TTL/3).
const DefaultLeaseTTL = 15 * time.Second

// LeaseOptions configure Leases.
type LeaseOptions struct {
	// Holder names this node; it must differ from every other node's (a
	// random id per process, say). Required.
	Holder string
	// TTL is the lease duration; DefaultLeaseTTL when 0.
	TTL    time.Duration
	Clock  tidemq.Clock // default: the system clock
	Logger *slog.Logger
}

// NewLeases returns the leases of holder on pool, whose schema must be up
// to date (Open or OpenKV migrate it).
func NewLeases(pool *pgxpool.Pool, o LeaseOptions) (*Leases, error) {
	if o.Holder == "" {
		return nil, errors.New("postgres: LeaseOptions.Holder is required")
	}
	if o.TTL <= 0 {
		o.TTL = DefaultLeaseTTL
	}
	if o.Clock == nil {
		o.Clock = tidemq.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Leases{pool: pool, clock: o.Clock, holder: o.Holder, ttl: o.TTL, log: o.Logger, current: map[string]int64{}}, nil
}

// Holder is the name of this node.
func (l *Leases) Holder() string { return l.holder }

// TTL is the leases' duration.
func (l *Leases) TTL() time.Duration { return l.ttl }

// Lease is a lease held.
type Lease struct {
	Name       string
	Generation int64     // grows at each change of holder: a fencing token
	Expires    time.Time // on the holder's clock
}

// Fence is the lease's fence at this node: its token while Hold runs a
// job under it, else token 0 (which every check refuses).
func (l *Leases) Fence(name string) tidemq.Fence {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tidemq.Fence{Lease: name, Holder: l.holder, Token: l.current[name]}
}

// Acquire takes the lease name, or renews it when this node holds it, for
// TTL from now, and reports whether it holds it. Taking it from another
// holder (or after a release) bumps its generation; a renewal keeps it.
func (l *Leases) Acquire(ctx context.Context, name string) (Lease, bool, error) {
	now := l.clock.Now()
	exp := now.Add(l.ttl)
	var gen int64
	err := l.pool.QueryRow(ctx, `
		INSERT INTO leases (name, holder, expires, generation) VALUES ($1, $2, $3, 1)
		ON CONFLICT (name) DO UPDATE SET holder = $2, expires = $3,
			generation = leases.generation + CASE WHEN leases.holder = $2 THEN 0 ELSE 1 END
		WHERE leases.holder = $2 OR leases.expires <= $4
		RETURNING generation`, name, l.holder, exp.UnixNano(), now.UnixNano()).Scan(&gen)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("postgres: lease %s: %w", name, err)
	}
	return Lease{Name: name, Generation: gen, Expires: exp}, true, nil
}

// Release gives the lease up, if this node holds it: another node can
// take it at once. The row stays, holder cleared, so that the next taker
// (this node too) gets the next generation, never one already used (a
// node lease, NodeLease, thus leaves a row of a few dozen bytes per
// process started).
func (l *Leases) Release(ctx context.Context, name string) error {
	_, err := l.pool.Exec(ctx, `UPDATE leases SET holder = '', expires = 0 WHERE name = $1 AND holder = $2`, name, l.holder)
	if err != nil {
		return fmt.Errorf("postgres: release lease %s: %w", name, err)
	}
	return nil
}

// Alive reports whether holder holds the lease name now (any node may
// ask: NodeLease names the lease a node holds while it runs).
func (l *Leases) Alive(ctx context.Context, name string) (bool, error) {
	var n int
	err := l.pool.QueryRow(ctx, `SELECT count(*) FROM leases WHERE name = $1 AND expires > $2`, name, l.clock.Now().UnixNano()).Scan(&n)
	return n > 0, err
}

// NodeLease is the name of the lease that node holds while it runs
// (serve holds it with Hold), so that others can tell it is alive.
func NodeLease(node string) string { return "node/" + node }

// Hold runs job each time this node takes the lease name (see
// tidemq.Leases), trying every TTL/3, until ctx ends.
func (l *Leases) Hold(ctx context.Context, name string, job func(ctx context.Context)) {
	every := l.ttl / 3
	for {
		lease, ok, err := l.acquire(ctx, name)
		if err != nil && ctx.Err() == nil {
			l.log.Warn("lease: cannot reach the database", "lease", name, "err", err)
		}
		if ok {
			l.log.Debug("lease taken", "lease", name, "generation", lease.Generation)
			if l.run(ctx, lease, job) {
				l.log.Warn("lease lost: the job stopped", "lease", name)
			} else {
				// The job ended (ctx did, or it returned by itself):
				// released so that another node takes over at once.
				rctx, cancel := context.WithTimeout(context.Background(), every)
				if err := l.Release(rctx, name); err != nil {
					l.log.Warn("lease: release", "lease", name, "err", err)
				}
				cancel()
			}
			if ctx.Err() != nil {
				return
			}
		}
		if !l.sleep(ctx, every) {
			return
		}
	}
}

// acquire is Acquire bounded by TTL/3 (a renewal later than that may be
// too late).
func (l *Leases) acquire(ctx context.Context, name string) (Lease, bool, error) {
	actx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	return l.Acquire(actx, name)
}

// run runs job while the lease is renewed, and returns once job returned:
// lost when the lease may be lost, false when job returned by itself or
// ctx ended. The job's context carries the lease's fence.
func (l *Leases) run(ctx context.Context, lease Lease, job func(context.Context)) (lost bool) {
	name := lease.Name
	jctx, cancel := context.WithCancel(ctx)
	fence := tidemq.Fence{Lease: name, Holder: l.holder, Token: lease.Generation}
	l.mu.Lock()
	l.current[name] = lease.Generation
	l.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		job(tidemq.WithFence(jctx, fence))
	}()
	defer func() {
		cancel()
		<-done
		l.mu.Lock()
		delete(l.current, name)
		l.mu.Unlock()
	}()
	for {
		t := l.clock.NewTimer(l.ttl / 3)
		select {
		case <-done:
			t.Stop()
			return false
		case <-jctx.Done():
			t.Stop()
			return false
		case <-t.C():
		}
		renewed, ok, err := l.acquire(jctx, name)
		if !ok {
			if err != nil && jctx.Err() == nil {
				l.log.Warn("lease: renewal failed: stopping the job", "lease", name, "err", err)
			}
			return jctx.Err() == nil
		}
		if renewed.Generation != lease.Generation {
			// Released and taken again behind this job's back (never by
			// this code): the job's fence is stale, stop it.
			l.log.Warn("lease: taken again under a new token: stopping the job", "lease", name)
			return true
		}
	}
}

// sleep waits d on the clock, and reports false if ctx ended first.
func (l *Leases) sleep(ctx context.Context, d time.Duration) bool {
	t := l.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
