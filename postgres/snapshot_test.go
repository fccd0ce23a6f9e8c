package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/internal/pgtest"
	"github.com/tidemq/tidemq/postgres"
)

// fill inserts n messages into queue name directly (a send per message
// would take minutes): a third in flight, a third delayed, the rest
// visible, sent at the clock's now.
func fill(t testing.TB, dsn, name string, n int, now time.Time) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	ns := now.UnixNano()
	if _, err := c.Exec(ctx, `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at, receive_count)
		SELECT q.id, nextval('message_seq'), 'm' || i, repeat('x', 256), 'bench', $2::bigint, $2::bigint,
			CASE i % 3 WHEN 0 THEN $2::bigint - 1 ELSE $2::bigint + 60000000000 END, CASE i % 3 WHEN 1 THEN 1 ELSE 0 END
		FROM queues q, generate_series(1, $3) i WHERE q.name = $1`, name, ns, n); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, `VACUUM ANALYZE messages`); err != nil {
		t.Fatal(err)
	}
}

// Snapshot's counts over queues filled directly: each state counted in
// its queue, a dead-lettered message marks its queue, the oldest age.
func TestSnapshotCountsStates(t *testing.T) {
	dsn, _ := pgtest.Schema(t)
	clk := clocktest.New(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	b := open(t, dsn, clk)
	defer b.Close()
	ctx := context.Background()
	for _, name := range []string{"a", "b", "empty"} {
		if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	fill(t, dsn, "a", 30, clk.Now())
	clk.Advance(10 * time.Second)
	fill(t, dsn, "b", 6, clk.Now())
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// Dead-letter b's last message as a move does: deleted and inserted
	// again (the depth counters follow inserts and deletes).
	if _, err := c.Exec(ctx, `WITH gone AS (DELETE FROM messages WHERE seq = (SELECT max(seq) FROM messages) RETURNING *)
		INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at, receive_count, dlq_source)
		SELECT queue_id, nextval('message_seq'), message_id, body, sender, sent_at, enqueued_at, visible_at, receive_count,
			'arn:aws:sqs:us-east-1:000000000000:a' FROM gone`); err != nil {
		t.Fatal(err)
	}
	got := map[string]tidemq.QueueSnapshot{}
	for _, s := range b.Snapshot() {
		got[s.Name] = s
	}
	for name, want := range map[string][4]int{"a": {10, 10, 10, 0}, "b": {2, 2, 2, 1}, "empty": {0, 0, 0, 0}} {
		s := got[name]
		if s.Visible != want[0] || s.InFlight != want[1] || s.Delayed != want[2] || s.IsDeadLetterQueue != (want[3] == 1) {
			t.Errorf("queue %s: visible %d, in flight %d, delayed %d, dead-letter queue %v; want %v", name, s.Visible, s.InFlight, s.Delayed, s.IsDeadLetterQueue, want)
		}
	}
	if a := got["a"].OldestAgeSeconds; a != 10 {
		t.Errorf("queue a: oldest message %v s old, want 10", a)
	}
	if a := got["empty"].OldestAgeSeconds; a != 0 {
		t.Errorf("queue empty: oldest message %v s old, want 0", a)
	}
}

// BenchmarkSnapshot: Snapshot (what /metrics and the alarms call every few
// seconds) with 100,000 messages in one queue and nine small ones.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			dsn, _ := pgtest.Schema(b)
			clk := clocktest.New(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
			br, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Clock: clk, SweepInterval: -1, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			for i := 0; i < 10; i++ {
				if _, err := br.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: fmt.Sprint("q", i)}); err != nil {
					b.Fatal(err)
				}
			}
			fill(b, dsn, "q0", n, clk.Now())
			for i := 1; i < 10; i++ {
				fill(b, dsn, fmt.Sprint("q", i), 100, clk.Now())
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s := br.Snapshot(); len(s) != 10 || s[0].Visible+s[0].InFlight+s[0].Delayed != n {
					b.Fatalf("snapshot %+v", s)
				}
			}
		})
	}
}

// BenchmarkSnapshotBacklog: Snapshot with a backlog of visible messages
// (none in flight or delayed) in one queue and nine small ones: with the
// depth counters its cost does not follow the backlog.
func BenchmarkSnapshotBacklog(b *testing.B) {
	for _, n := range []int{1000, 1000000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			dsn, _ := pgtest.Schema(b)
			clk := clocktest.New(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
			br, err := postgres.Open(context.Background(), postgres.Options{DSN: dsn, Clock: clk, SweepInterval: -1, Logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			defer br.Close()
			for i := 0; i < 10; i++ {
				if _, err := br.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: fmt.Sprint("q", i)}); err != nil {
					b.Fatal(err)
				}
			}
			c, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(context.Background())
			ns := clk.Now().UnixNano()
			for i := 0; i < 10; i++ {
				m := 100
				if i == 0 {
					m = n
				}
				if _, err := c.Exec(context.Background(), `INSERT INTO messages (queue_id, seq, message_id, body, sender, sent_at, enqueued_at, visible_at)
					SELECT q.id, nextval('message_seq'), 'm' || i, repeat('x', 256), 'bench', $2::bigint, $2::bigint, $2::bigint
					FROM queues q, generate_series(1, $3) i WHERE q.name = $1`, fmt.Sprint("q", i), ns, m); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := c.Exec(context.Background(), `VACUUM ANALYZE messages`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if s := br.Snapshot(); len(s) != 10 || s[0].Visible != n {
					b.Fatalf("snapshot %+v", s[0])
				}
			}
		})
	}
}
