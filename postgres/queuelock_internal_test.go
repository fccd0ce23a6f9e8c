package postgres

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// The transaction that holds a FIFO queue's lock commits without waiting
// for the WAL, its lock is free once lockedPipeline returns, and by then
// the WAL is flushed past its commit; the session keeps its own
// synchronous_commit for what it runs next.
func TestLockedPipelineFlushesAfterTheLock(t *testing.T) {
	b, conn := fifoQueueConn(t)
	ctx := context.Background()
	// The test servers may run with synchronous_commit off (as CI does):
	// this session waits for its flushes, as a default server does.
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on`); err != nil {
		t.Fatal(err)
	}
	session := "on"
	var inside, written string
	var xid int64
	flushedTo, err := b.lockedPipelineTo(ctx, conn, func(batch *pgx.Batch) {
		batch.Queue(`SELECT id FROM queues WHERE name = 'q.fifo' FOR NO KEY UPDATE`)
		batch.Queue(`SELECT current_setting('synchronous_commit'), txid_current()`)
		batch.Queue(`UPDATE queues SET tags = tags WHERE name = 'q.fifo' RETURNING pg_current_wal_insert_lsn()::text`)
	}, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&inside, &xid); err != nil {
			return err
		}
		return br.QueryRow().Scan(&written)
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside != "off" {
		t.Errorf("synchronous_commit %q under the lock, want off", inside)
	}
	// The flush transaction's message comes after the locked one's commit
	// record (which follows its write), and the WAL is flushed past it:
	// so past that commit.
	var after, status string
	var ordered, flushed bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('synchronous_commit'), txid_status($1),
		$2::pg_lsn < $3::pg_lsn, pg_current_wal_flush_lsn() >= $3::pg_lsn`, xid, written, flushedTo).Scan(&after, &status, &ordered, &flushed); err != nil {
		t.Fatal(err)
	}
	if !ordered {
		t.Errorf("the flush's message at %s is not after the locked transaction's write at %s", flushedTo, written)
	}
	if after != session {
		t.Errorf("synchronous_commit %q after the pipeline, want the session's %q", after, session)
	}
	if status != "committed" {
		t.Errorf("the locked transaction is %q, want committed", status)
	}
	if !flushed {
		t.Errorf("the WAL is not flushed to the flush's message (%s, after the locked commit) when the pipeline returns", flushedTo)
	}
	if _, err := b.pool.Exec(ctx, `SELECT 1 FROM queues WHERE name = 'q.fifo' FOR NO KEY UPDATE NOWAIT`); err != nil {
		t.Errorf("the queue's row is still locked: %v", err)
	}
}

// A statement that fails leaves the connection out of any transaction,
// with nothing of the pipeline written and the queue's row free.
func TestLockedPipelineErrorEndsTheTransaction(t *testing.T) {
	b, conn := fifoQueueConn(t)
	ctx := context.Background()
	err := b.lockedPipeline(ctx, conn, func(batch *pgx.Batch) {
		batch.Queue(`SELECT id FROM queues WHERE name = 'q.fifo' FOR NO KEY UPDATE`)
		batch.Queue(`UPDATE queues SET tags = '{"x":"y"}' WHERE name = 'q.fifo'`)
		batch.Queue(`SELECT 1 / 0`)
	}, func(br pgx.BatchResults) error {
		for i := 0; i < 3; i++ {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.Fatal("a division by zero went through")
	}
	if s := conn.Conn().PgConn().TxStatus(); s != 'I' {
		t.Fatalf("connection in transaction state %q after the error, want idle", s)
	}
	var tags string
	if err := conn.QueryRow(ctx, `SELECT tags::text FROM queues WHERE name = 'q.fifo'`).Scan(&tags); err != nil {
		t.Fatal(err)
	}
	if tags == `{"x": "y"}` {
		t.Error("the failed pipeline's update was committed")
	}
	if _, err := b.pool.Exec(ctx, `SELECT 1 FROM queues WHERE name = 'q.fifo' FOR NO KEY UPDATE NOWAIT`); err != nil {
		t.Errorf("the queue's row is still locked: %v", err)
	}
}

// fifoQueueConn opens a broker with a FIFO queue q.fifo and holds one of
// its pool's connections until the test ends.
func fifoQueueConn(t *testing.T) (*Broker, *pgxpool.Conn) {
	t.Helper()
	b := openInternal(t)
	ctx := context.Background()
	if _, err := b.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Release)
	return b, conn
}
