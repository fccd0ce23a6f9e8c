package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// PoolConfig parses dsn into the configuration of a node's pool, with the
// settings a node sharing PostgreSQL needs unless dsn sets them itself:
//
//   - idle_in_transaction_session_timeout (DefaultIdleInTransaction): the
//     server ends the session of a node that stops in the middle of a
//     transaction (paused, frozen, cut off), which releases its locks: a
//     FIFO queue's row, or a lease row locked by a fence check, cannot be
//     held longer than that, so another node can take over. It is below
//     the shortest lease (--lease-ttl 3s), and far above the gaps between
//     the statements of a transaction of a running node (microseconds).
//   - connect_timeout (DefaultConnectTimeout): a host that does not answer
//     (a dead primary's address, a cut link) is given up on and the next
//     host of a multi-host DSN tried, instead of waiting for TCP's own
//     timeout of minutes.
//
// With several hosts and target_session_attrs=read-write (pgx's multi-host
// DSN, postgres://h1:5432,h2:5432/db?target_session_attrs=read-write), a
// new connection goes to whichever host is the primary now: after a
// failover the connections to the old primary fail, the pool drops them,
// and the next ones reach the promoted standby.
func PoolConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["idle_in_transaction_session_timeout"]; !ok {
		rp["idle_in_transaction_session_timeout"] = fmt.Sprint(DefaultIdleInTransaction.Milliseconds())
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	return cfg, nil
}

// DefaultIdleInTransaction is how long PostgreSQL lets a node's session
// sit idle inside a transaction before it ends it (PoolConfig).
const DefaultIdleInTransaction = 2 * time.Second

// DefaultConnectTimeout bounds each connection attempt to one host
// (PoolConfig).
const DefaultConnectTimeout = 5 * time.Second
