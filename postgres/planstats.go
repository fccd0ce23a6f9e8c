package postgres

import (
	"context"
	"sync"
	"time"
)

// Plans made for an empty table. pgx caches every statement on its
// connection, and after five executions PostgreSQL may settle on a generic
// plan, made for the tables as the planner's statistics describe them
// then, and keep it until the table's statistics change. The group
// commit's delete and the receive's write are joins of a few keys against
// messages: made while messages is empty or small (a new database, or
// one whose queues all drained since autovacuum's last look), their
// generic plans read the queue's rows instead of probing by key (a hash
// join over a sequential scan; TestPlanStatsRefreshedWhenMessagesGrow
// shows one), and a burst of sends that fills the table in less time than
// autovacuum takes to ANALYZE it (a minute or more) makes every delete and
// receive of every node scan it meanwhile.
//
// So each sweep compares the live rows PostgreSQL's statistics count in
// messages with the planner's estimate (pg_class.reltuples), and when the
// table holds at least planStatsMinRows and planStatsGrowth times the
// estimate, analyzes it (SKIP_LOCKED: never waiting for autovacuum, which
// would do the same): the new statistics invalidate the cached plans of
// every session, whose next execution plans for the table as it is. At
// most one ANALYZE per planStatsEvery on this node (on the Clock: real
// time in a server). Only the table's owner (or the database's, or a
// superuser) may analyze it; a node whose role may not says so once and
// leaves it to autovacuum.
const (
	planStatsMinRows = 10_000
	planStatsGrowth  = 4
	planStatsEvery   = 30 * time.Second
)

// planStats is the node's record of its last ANALYZE.
type planStats struct {
	mu        sync.Mutex
	last      time.Time
	warnedNot bool // the role may not analyze messages, and the log said so
}

// refreshPlanStats analyzes messages when it outgrew the planner's
// statistics (see above), and reports whether it did.
func (b *Broker) refreshPlanStats(ctx context.Context) (bool, error) {
	b.planStats.mu.Lock()
	defer b.planStats.mu.Unlock()
	now := b.clock.Now()
	if !b.planStats.last.IsZero() && now.Sub(b.planStats.last) < planStatsEvery {
		return false, nil
	}
	var live, analyzed int64
	var estimate float64
	var may bool
	if err := b.pool.QueryRow(ctx, `SELECT pg_stat_get_live_tuples(c.oid), c.reltuples, pg_stat_get_analyze_count(c.oid),
			pg_has_role(c.relowner, 'USAGE') OR pg_has_role((SELECT datdba FROM pg_database WHERE datname = current_database()), 'USAGE')
		FROM pg_class c WHERE c.oid = 'messages'::regclass`).Scan(&live, &estimate, &analyzed, &may); err != nil {
		return false, err
	}
	if live < planStatsMinRows || float64(live) <= planStatsGrowth*max(estimate, 0) {
		return false, nil
	}
	b.planStats.last = now
	if !may {
		if !b.planStats.warnedNot {
			b.planStats.warnedNot = true
			b.log.Warn("postgres: messages outgrew the planner's statistics, and this node's role may not ANALYZE it (it does not own the table): cached plans wait for autovacuum",
				"rows", live, "estimate", int64(estimate))
		}
		return false, nil
	}
	if _, err := b.pool.Exec(ctx, `ANALYZE (SKIP_LOCKED) messages`); err != nil {
		return false, err
	}
	var after int64
	if err := b.pool.QueryRow(ctx, `SELECT pg_stat_get_analyze_count('messages'::regclass)`).Scan(&after); err != nil {
		return false, err
	}
	if after == analyzed {
		// Skipped: autovacuum or another node held the table.
		b.log.Debug("postgres: ANALYZE of messages skipped (the table was locked)", "rows", live)
		return false, nil
	}
	b.log.Info("postgres: analyzed messages, which outgrew the planner's statistics", "rows", live, "estimate", int64(estimate))
	return true, nil
}
