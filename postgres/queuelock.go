package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// The FIFO groups' locks. A FIFO queue's sends and receives take turns on
// the locks of the groups they touch (transaction-scoped advisory locks,
// fifoGroupKey: receive.go, send.go): a group's sequence numbers follow
// commit order and its group rules are decided on what the previous
// request of that group committed. (Until this was per group, they took
// turns on the queue's row, SELECT … FOR NO KEY UPDATE, and every request
// of a queue waited for the one before it; the figures below are from
// then.) A lock is held until its transaction ends, and a transaction that commits
// synchronously ends only once PostgreSQL has flushed its commit record
// to the WAL (a disk's fsync, milliseconds): so every request of a FIFO
// queue waited for the previous one's flush, one after the other, where
// standard requests flush side by side (PostgreSQL flushes concurrent
// commits together). pg_stat_statements showed it: under 16 clients the
// queue row's read, the lock's wait, took 208 ms on average, the work
// behind it 4–6 ms.
//
// So the transaction that holds the lock commits without waiting for its
// flush (synchronous_commit off for it alone), which releases the lock as
// soon as the work is done, and the same round trip then runs a second
// transaction that commits as the session is configured (on by default:
// it waits for the flush; with synchronous standbys, for them): its commit
// record comes after the first's in the WAL, so its flush covers the
// first. The request is answered only after that, so it is
// still durable before it is acknowledged. What changes is what other
// requests see: the next holder of the lock works on a commit that may not
// be on disk yet. That is safe because whatever it then writes comes after
// that commit in the WAL and is acknowledged only once flushed too (a
// crash keeps a prefix of the WAL), and what it only reads (an empty
// receive, a group found in flight) promises nothing that a crash could
// contradict.
//
// The second transaction writes no row: it writes one transactional
// logical-decoding message (prefix "tidemq", empty; decoders that do not
// ask for messages never see it). PostgreSQL does not wait for the flush
// of a transaction that wrote nothing to the WAL before its commit record
// (a transaction id alone, txid_current(), was tried: its commit returned
// before the flush), and the message is the smallest write that counts,
// allowed to every role.

// lockedPipeline runs the statements fill queues (they lock FIFO groups)
// on conn as one transaction that commits without
// waiting for the WAL, then the flush as above, in one round trip, and
// hands their results to read (one result per statement fill queued, in
// order). A leader's request, whose context carries a fence, runs them in
// a transaction of its own that checks the fence first (onConn) and
// commits as usual. On an error the connection is left out of any
// transaction.
func (b *Broker) lockedPipeline(ctx context.Context, conn *pgxpool.Conn, fill func(batch *pgx.Batch), read func(br pgx.BatchResults) error) error {
	_, err := b.lockedPipelineTo(ctx, conn, fill, read)
	return err
}

// lockedPipelineTo is lockedPipeline, and it returns the WAL position of
// the flush transaction's message ("" on the fenced path), which follows
// the locked transaction's commit record: once it returns, the WAL is
// flushed at least that far.
func (b *Broker) lockedPipelineTo(ctx context.Context, conn *pgxpool.Conn, fill func(batch *pgx.Batch), read func(br pgx.BatchResults) error) (flushedTo string, err error) {
	if _, ok := tidemq.FenceOf(ctx); ok {
		return "", b.onConn(ctx, conn, func(db querier) error {
			batch := &pgx.Batch{}
			fill(batch)
			br := db.(batcher).SendBatch(ctx, batch)
			defer br.Close()
			if err := read(br); err != nil {
				return err
			}
			return br.Close()
		})
	}
	batch := &pgx.Batch{}
	batch.Queue(`BEGIN`)
	batch.Queue(`SET LOCAL synchronous_commit = off`)
	fill(batch)
	batch.Queue(`COMMIT`)
	batch.Queue(`SELECT pg_logical_emit_message(true, 'tidemq', '')::text`) // the flush: see above
	br := conn.SendBatch(ctx, batch)
	err = func() error {
		for i := 0; i < 2; i++ {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		if err := read(br); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		return br.QueryRow().Scan(&flushedTo)
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil && conn.Conn().PgConn().TxStatus() != 'I' {
		// The error left the explicit transaction open (aborted): end it,
		// or the pool would drop the connection. A failed ROLLBACK leaves
		// it to the pool, which closes a connection in a transaction.
		_, _ = conn.Exec(context.WithoutCancel(ctx), `ROLLBACK`)
	}
	return flushedTo, err
}
