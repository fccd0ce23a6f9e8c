package postgres

import (
	"context"
	"encoding/json"
	"math"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// receiveSQL receives up to $3 messages of a standard queue in one
// statement (one round trip, its own transaction): it picks them as
// standardSQL does (messages back from in flight first, then the others,
// each in the order they became receivable, skipping rows other receives
// hold), and writes only what a receive changes: the receive count, the
// times, the new deadline ($2 + $5), held, and the received event (after a
// visibility-expired one when the previous receive's end is not in the
// story yet) appended to events. Messages past the queue's retention ($4)
// are left for the sweep.
//
// A message already received maxReceiveCount ($9) times is picked but not
// received: it comes back with over set and its row unchanged, and the
// caller moves it to the dead-letter queue (deadLetterSeqs).
//
// The rows come back in no particular order; ord and old_visible put them
// in the pick's order.
const receiveSQL = `WITH c AS (
		SELECT * FROM (
			SELECT seq AS c_seq, visible_at AS old_visible, 0 AS ord, receive_count >= $9 AS over FROM messages
			WHERE queue_id = $1 AND receive_count > 0 AND visible_at <= $2 AND enqueued_at > $4
			ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) r
		UNION ALL
		SELECT * FROM (
			SELECT seq, visible_at, 1, false FROM messages
			WHERE queue_id = $1 AND receive_count = 0 AND visible_at <= $2 AND enqueued_at > $4
			ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) f
		LIMIT $3)
	` + receiveWriteSQL

// receiveWriteSQL is the write of receiveSQL and fifoReceiveSQL: it
// receives the messages of c (c_seq; over: picked but left as they are,
// for the caller to dead-letter) and returns them with c's ord and
// old_visible and over.
//
// The rows to write are found by their keys as an array (seq = ANY),
// besides the join: the planner estimates a queue's rows from the
// table's statistics, which know nothing of a queue created since the
// last ANALYZE (1 row), and with the join alone it could hash c against
// a scan of the whole queue: auto_explain showed FIFO receives that read
// 2,530 rows and 778 buffers to write 10 (15 ms, under the queue's
// lock), once earlier queues of the database had been analyzed.
const receiveWriteSQL = `UPDATE messages m SET
		receive_count = CASE WHEN c.over THEN m.receive_count ELSE m.receive_count + 1 END,
		first_receive = CASE WHEN c.over OR m.first_receive <> 0 THEN m.first_receive ELSE $2 END,
		received_at = CASE WHEN c.over THEN m.received_at ELSE $2 END,
		visible_at = CASE WHEN c.over THEN m.visible_at ELSE $2 + $5 END,
		held = m.held OR NOT c.over,
		events = CASE WHEN c.over THEN m.events ELSE tidemq_append_events(m.events,
			CASE WHEN m.held THEN jsonb_build_array(jsonb_build_object('t', m.visible_at, 'k', 'visibility-expired', 'q', $6::text, 'd', $10::text))
				ELSE '[]'::jsonb END
			|| jsonb_build_array(jsonb_build_object('t', $2::bigint, 'k', 'received', 'q', $6::text, 'c', $7::jsonb,
				'd', 'receive ' || (m.receive_count + 1) || ', visibility timeout ' || $8::text)),
			$11) END
	FROM c WHERE m.queue_id = $1 AND m.seq = ANY(ARRAY(SELECT c_seq FROM c)) AND m.seq = c.c_seq
	RETURNING ` + messageCols + `, c.ord, c.old_visible, c.over`

// withExtra is a row whose last columns go to extra after a scanner's.
type withExtra struct {
	pgx.Row
	extra []any
}

func (r withExtra) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// receiveStandard is receiveOnce for a standard queue, on conn: the
// queue's row was read, now is read only now that the connection is ours
// (the wait for a connection does not count against the visibility
// timeout), and each round is one receiveSQL. A round that meets messages
// over maxReceiveCount moves them (one transaction) and looks again.
func (b *Broker) receiveStandard(ctx context.Context, conn *pgxpool.Conn, q *queue, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	r := &received{q: q, now: b.clock.Now()}
	now := r.now
	b.noteReceive(q.id, now)
	vt := p.Visibility(q.Visibility)
	if err := b.checkInflight(ctx, conn, q, now); err != nil {
		return nil, err
	}
	maxRC := math.MaxInt32
	if q.Redrive != nil {
		maxRC = q.Redrive.MaxReceiveCount
	}
	client, _ := json.Marshal(p.Client)
	var taken []*message
	for round := 0; len(taken) < max && round < 10; round++ {
		var got []*message
		var over []int64
		err := b.onConn(ctx, conn, func(db querier) error {
			rows, err := db.Query(ctx, receiveSQL, q.id, stampOf(now), max-len(taken), q.cutoff(now), int64(vt), q.name,
				client, vt.String(), maxRC, expiredDetail, tidemq.MaxHistoryEvents)
			if err != nil {
				return err
			}
			got, over, err = collectReceived(rows)
			return err
		})
		if err != nil {
			return nil, err
		}
		taken = append(taken, got...)
		if len(over) == 0 {
			break
		}
		moved, wake, err := b.deadLetterSeqs(ctx, conn, q, over, now)
		if err != nil {
			return nil, err
		}
		r.deadLettered += moved
		r.wake = append(r.wake, wake...)
		if wake == nil {
			maxRC = math.MaxInt32 // no dead-letter queue to move to: receive them
		}
	}
	if len(taken) == 0 {
		var next *int64
		if err := conn.QueryRow(ctx, nextDeadlineSQL, q.id, stampOf(now)).Scan(&next); err != nil {
			return nil, err
		}
		if next != nil {
			r.next = *next
		}
		return r, nil
	}
	r.msgs = make([]*tidemq.Message, len(taken))
	for i, m := range taken {
		r.msgs[i] = m.snapshot(q, b.handle(q, m))
	}
	return r, nil
}

// collectReceived reads receiveWriteSQL's rows: the messages received, in
// the pick's order (ord, then when they became receivable, then seq), and
// the seqs of those it left over maxReceiveCount.
func collectReceived(rows pgx.Rows) ([]*message, []int64, error) {
	type pick struct {
		m          *message
		ord        int64
		oldVisible int64
	}
	defer rows.Close()
	var picks []pick
	var over []int64
	for rows.Next() {
		var pk pick
		var isOver bool
		m, err := scanMessage(withExtra{rows, []any{&pk.ord, &pk.oldVisible, &isOver}})
		if err != nil {
			return nil, nil, err
		}
		if isOver {
			over = append(over, m.seq)
			continue
		}
		pk.m = m
		picks = append(picks, pk)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	sort.Slice(picks, func(i, j int) bool {
		a, c := picks[i], picks[j]
		if a.ord != c.ord {
			return a.ord < c.ord
		}
		if a.oldVisible != c.oldVisible {
			return a.oldVisible < c.oldVisible
		}
		return a.m.seq < c.m.seq
	})
	ms := make([]*message, len(picks))
	for i, pk := range picks {
		ms[i] = pk.m
	}
	return ms, over, nil
}

// onConn runs fn on conn; when ctx carries a leader's fence, inside a
// transaction that checks the fence first (fence.go), so that a stale
// leader's receive takes nothing.
func (b *Broker) onConn(ctx context.Context, conn *pgxpool.Conn, fn func(db querier) error) error {
	if _, ok := tidemq.FenceOf(ctx); !ok {
		return fn(conn)
	}
	return b.inTxOn(ctx, conn, func(tx pgx.Tx) error { return fn(tx) })
}

// deadLetterSeqs moves the messages of q named by seqs that are still
// receivable and over q's maxReceiveCount to its dead-letter queue, in
// one transaction. It returns how many it moved and the dead-letter
// queue's name to wake, or nil when q has no dead-letter queue to move to.
func (b *Broker) deadLetterSeqs(ctx context.Context, conn *pgxpool.Conn, q *queue, seqs []int64, now time.Time) (int, []string, error) {
	var moved int
	var wake []string
	err := b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
		moved, wake = 0, nil
		dlq, err := b.queueByARN(ctx, tx, q.Redrive.DeadLetterTargetARN)
		if err != nil || dlq == nil || dlq.id == q.id {
			return err
		}
		wake = []string{dlq.name}
		rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND seq = ANY($2)
			AND visible_at <= $3 AND receive_count >= $4 ORDER BY seq FOR UPDATE`, q.id, seqs, stampOf(now), q.Redrive.MaxReceiveCount)
		if err != nil {
			return err
		}
		ms, err := collectMessages(rows)
		if err != nil {
			return err
		}
		batch := &pgx.Batch{}
		queued := 0
		for _, m := range ms {
			m.settle(stampOf(now), q.name)
			// A standard queue's dead-letter queue is standard
			// (tidemq.CheckRedriveTarget): move never finds it busy.
			ok, err := b.move(ctx, tx, batch, q, m, dlq, now, tidemq.DeadLetterEvent(q.name, q.Redrive.MaxReceiveCount, m.ReceiveCount, now))
			if err != nil {
				return err
			}
			if ok {
				queued++
			}
		}
		br := tx.SendBatch(ctx, batch)
		for range queued {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return err
			}
			if tag.RowsAffected() > 0 {
				moved++
			}
		}
		return br.Close()
	})
	return moved, wake, err
}
