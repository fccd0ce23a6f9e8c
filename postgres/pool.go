package postgres

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PoolConfig parses dsn into the configuration of a node's pool, with the
// settings a node sharing PostgreSQL needs unless dsn sets them itself:
//
//   - idle_in_transaction_session_timeout (DefaultIdleInTransaction): the
//     server ends the session of a node that stops in the middle of a
//     transaction (paused, frozen, cut off), which releases its locks: a
//     FIFO group's lock, or a lease row locked by a fence check, cannot be
//     held longer than that, so another node can take over. It is below
//     the shortest lease (--lease-ttl 3s), and far above the gaps between
//     the statements of a transaction of a running node (microseconds).
//   - connect_timeout (DefaultConnectTimeout): a host that does not answer
//     (a dead primary's address, a cut link) is given up on and the next
//     host of a multi-host DSN tried, instead of waiting for TCP's own
//     timeout of minutes.
//   - TCP keep-alives and, on Linux, TCP_USER_TIMEOUT (DefaultTCPTimeout):
//     a connection whose link is cut (the server neither answers nor
//     resets it) fails within that time instead of TCP's retransmissions'
//     quarter of an hour, so a request fails (ServiceUnavailable) rather
//     than hangs, the lease renewal fails, and the LISTEN connection is
//     re-established.
//   - jit off: every statement a node sends is short (an index probe and
//     a few rows), but PostgreSQL decides on JIT compilation from the
//     planner's estimates, which grow with the table: at ten million
//     queued messages the retention check that GetQueueAttributes and
//     /metrics run (a LIMIT 100,000 that finds nothing) is estimated
//     above jit_inline_above_cost, and compiling it took 100-700 ms
//     where running it takes 0.2 ms (docs/performance.md). JIT is for
//     long analytical queries, which a queue does not run.
//
// With several hosts and target_session_attrs=read-write (pgx's multi-host
// DSN, postgres://h1:5432,h2:5432/db?target_session_attrs=read-write), a
// new connection goes to whichever host is the primary now: after a
// failover the connections to the old primary fail, the pool drops them,
// and the next ones reach the promoted standby.
//
// A DSN's default_query_exec_mode of exec or simple_protocol is refused:
// in those modes pgx sends parameters typed from their Go types alone, and
// tidemq's statements pass JSON and binary data that only the server's
// description of the statement types right (every write failed with
// "invalid input syntax for type json"). cache_describe and describe_exec
// describe them, and work.
func PoolConfig(dsn string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	switch cfg.ConnConfig.DefaultQueryExecMode {
	case pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
		return nil, fmt.Errorf("postgres: default_query_exec_mode=%s is not supported: tidemq's statements need the server to type their parameters; "+
			"leave it out, or use cache_describe or describe_exec",
			strings.ReplaceAll(cfg.ConnConfig.DefaultQueryExecMode.String(), " ", "_"))
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["idle_in_transaction_session_timeout"]; !ok {
		rp["idle_in_transaction_session_timeout"] = fmt.Sprint(DefaultIdleInTransaction.Milliseconds())
	}
	if _, ok := rp["jit"]; !ok {
		rp["jit"] = "off"
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	d := &net.Dialer{
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: DefaultTCPTimeout / 2, Interval: time.Second, Count: 5},
		Control:         userTimeout(DefaultTCPTimeout),
	}
	cfg.ConnConfig.DialFunc = d.DialContext
	return cfg, nil
}

// DefaultTCPTimeout is how long a connection may wait for the server to
// acknowledge what it sent (or answer keep-alives) before it fails.
const DefaultTCPTimeout = 10 * time.Second

// unavailable reports whether err is a failure to reach a primary rather
// than an answer: the connection failed or broke, or the server is
// shutting down, starting, in recovery or read-only (a standby, before or
// during a failover). Such a request failed for now and may succeed when
// retried: the transports answer it ServiceUnavailable (503), which the
// AWS SDKs retry.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "25006",                     // read_only_sql_transaction: a standby
			pe.Code == "57P01", pe.Code == "57P02", // admin/crash shutdown
			pe.Code == "57P03": // cannot connect now (starting, in recovery)
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		pgconn.Timeout(err) || strings.Contains(err.Error(), "conn closed")
}

// DefaultIdleInTransaction is how long PostgreSQL lets a node's session
// sit idle inside a transaction before it ends it (PoolConfig).
const DefaultIdleInTransaction = 2 * time.Second

// DefaultConnectTimeout bounds each connection attempt to one host
// (PoolConfig).
const DefaultConnectTimeout = 5 * time.Second
