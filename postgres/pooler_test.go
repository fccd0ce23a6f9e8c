package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/internal/testlog"
	"github.com/tidemq/tidemq/postgres"
)

// openLogged opens a broker on dsn, sends and receives one message through
// it, and returns what it logged.
func openLogged(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	var log testlog.Buffer
	b, err := postgres.Open(ctx, postgres.Options{DSN: dsn, Clock: clocktest.New(time.Unix(1_700_000_000, 0)),
		SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "0", Body: "b"}}}); err != nil || res[0].Err != nil {
		t.Fatalf("send: %v %v", err, res)
	}
	if msgs, err := b.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q"}); err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(msgs))
	}
	return log.String()
}

// A node that reaches PostgreSQL through a connection pooler says so, and
// says what the pooler took away: PgBouncer refuses a node's start-up
// parameters unless told to ignore them, and then the session runs without
// them. Once they are set on the database, only the pooler is reported.
// Directly, nothing is.
func TestPoolerIsReported(t *testing.T) {
	dsn := pgtest.Database(t)
	bounced := pgtest.Bouncer(t, dsn, "session")
	const pooler, idle, jit = "through a connection pooler", "without idle_in_transaction_session_timeout", "runs with jit on"
	// The warnings of the settings need a server whose own defaults lack
	// them (PostgreSQL's do).
	pool := pgtest.Pool(t, dsn)
	var idleDefault string
	var jitDefault bool
	if err := pool.QueryRow(context.Background(), `SELECT current_setting('idle_in_transaction_session_timeout'),
		current_setting('jit')::boolean AND pg_jit_available()`).Scan(&idleDefault, &jitDefault); err != nil {
		t.Fatal(err)
	}
	if idleDefault != "0" || !jitDefault {
		t.Skipf("the server's defaults already have idle_in_transaction_session_timeout %s, or JIT off or unavailable", idleDefault)
	}
	if log := openLogged(t, dsn); strings.Contains(log, pooler) || strings.Contains(log, idle) || strings.Contains(log, jit) {
		t.Fatalf("a direct connection was reported:\n%s", log)
	}
	log := openLogged(t, bounced)
	for _, want := range []string{pooler, idle, jit} {
		if !strings.Contains(log, want) {
			t.Errorf("through PgBouncer the log does not say %q:\n%s", want, log)
		}
	}
	db := dsn[strings.LastIndex(dsn, "/")+1:]
	if i := strings.IndexByte(db, '?'); i >= 0 {
		db = db[:i]
	}
	if _, err := pool.Exec(context.Background(), `ALTER DATABASE `+db+` SET jit = off`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `ALTER DATABASE `+db+` SET idle_in_transaction_session_timeout = '2s'`); err != nil {
		t.Fatal(err)
	}
	// A new PgBouncer: the first one's server connections started before
	// the settings, and keep what they started with.
	log = openLogged(t, pgtest.Bouncer(t, dsn, "session"))
	if !strings.Contains(log, pooler) || strings.Contains(log, idle) || strings.Contains(log, jit) {
		t.Fatalf("with the settings on the database, the log should name the pooler alone:\n%s", log)
	}
}

// Through a pooler that pools by session, two nodes work as they do
// directly: both start (neither waits on a lock the other's session left),
// and a send on one wakes a long poll on the other (its LISTEN connection
// keeps its server session).
func TestTwoNodesThroughASessionPooler(t *testing.T) {
	bounced := pgtest.Bouncer(t, pgtest.Database(t), "session")
	ctx := context.Background()
	a := open(t, bounced, tidemq.SystemClock{})
	b := open(t, bounced, tidemq.SystemClock{})
	t.Cleanup(func() { a.Close(); b.Close() })
	if _, err := a.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	wantWoken(t, b, a, "wake", "through the pooler")
}
