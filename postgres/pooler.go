package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// A node needs PostgreSQL sessions of its own: its LISTEN connection
// listens for as long as it is open, and a few start-up and registry steps
// hold session advisory locks (cmd/tidemq's exclusively, KV.Lock). A
// connection pooler that pools by session (PgBouncer's pool_mode =
// session) keeps that true; one that pools by transaction does not, and
// then a node waits for ever on a lock another node's session left taken
// at start, and long polls miss the sends of other nodes. Nothing in the
// protocol says which mode a pooler runs, but a pooler shows itself: the
// backend's own pid is not the one the connection was given at start
// (PgBouncer makes that one up). So a node logs a warning when it finds
// one, once, at start.
//
// A pooler may also refuse the start-up parameters a node sets
// (PoolConfig: jit, idle_in_transaction_session_timeout), or drop them when
// told to ignore them; the second is what lets another node take over the
// locks of a node that froze. So a node also warns when the server runs
// without a setting it asked for, and says where to set it instead.

// checkSession reads what the session of c (the LISTEN connection, fresh)
// runs with, and logs what is missing.
func (b *Broker) checkSession(ctx context.Context, c *pgx.Conn) {
	var pid uint32
	var idle string
	var jit bool // on, and available (a server built without LLVM compiles nothing)
	if err := c.QueryRow(ctx, `SELECT pg_backend_pid(), current_setting('idle_in_transaction_session_timeout'),
		current_setting('jit')::boolean AND pg_jit_available()`).Scan(&pid, &idle, &jit); err != nil {
		b.log.Warn("postgres: could not read the session's settings", "err", err)
		return
	}
	if given := c.PgConn().PID(); pid != given {
		b.log.Warn("postgres: this node reaches PostgreSQL through a connection pooler; it needs session pooling (PgBouncer: pool_mode = session): "+
			"with transaction pooling its LISTEN connection and session locks break, nodes wait for ever at start and long polls miss other nodes' sends",
			"backend_pid", pid, "connection_pid", given)
	}
	asked := c.Config().RuntimeParams
	if want := asked["idle_in_transaction_session_timeout"]; want != "" && want != "0" && idle == "0" {
		b.log.Warn("postgres: the server runs without idle_in_transaction_session_timeout, which the node asked for (a pooler drops start-up parameters): "+
			"a node that freezes mid-transaction then holds its locks for ever; set it on the role, e.g. ALTER ROLE tidemq SET idle_in_transaction_session_timeout = '2s'",
			"asked", want)
	}
	if asked["jit"] == "off" && jit {
		b.log.Warn("postgres: the server runs with jit on, where the node asked for it off (a pooler drops start-up parameters): " +
			"at millions of queued messages PostgreSQL may spend 100-700 ms compiling statements that take a millisecond; set it on the role, e.g. ALTER ROLE tidemq SET jit = off")
	}
}
