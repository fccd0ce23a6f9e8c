package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// receiveSQL receives up to $3 messages of a standard queue in one
// statement (one round trip, its own transaction) for one or more
// ReceiveMessage calls (takes.go): it picks them as standardSQL does
// (messages back from in flight first, then the others, each in the order
// they became receivable, skipping rows other receives hold), and writes
// only what a receive changes: the receive count, the times, the new
// deadline, held, and the received event (after a visibility-expired one
// when the previous receive's end is not in the story yet) appended to
// events. Messages past the queue's retention ($4) are left for the
// sweep.
//
// The k-th message received, in the pick's order, goes to the call
// $12[k] (1-based), whose visibility timeout ($5[call], nanoseconds),
// client ($7[call], JSON) and timeout text ($8[call]) it is written with:
// so the calls a node gathers get what each would have got alone, one
// after the other.
//
// A message already received maxReceiveCount ($9) times is picked but not
// received: it comes back with over set (and slot 0) and its row
// unchanged, and the caller moves it to the dead-letter queue
// (deadLetterSeqs).
//
// The rows come back in no particular order; ord and old_visible put them
// in the pick's order, slot names their call.
const receiveSQL = `WITH p AS (
		SELECT * FROM (
			SELECT seq AS c_seq, visible_at AS old_visible, 0 AS ord, receive_count >= $9 AS over FROM messages
			WHERE queue_id = $1 AND receive_count > 0 AND visible_at <= $2 AND enqueued_at > $4
			ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) r
		UNION ALL
		SELECT * FROM (
			SELECT seq, visible_at, 1, false FROM messages
			WHERE queue_id = $1 AND receive_count = 0 AND visible_at <= $2 AND enqueued_at > $4
			ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) f
		LIMIT $3),
	c AS (
		SELECT p.*, CASE WHEN over THEN 0
			ELSE ($12::int[])[row_number() OVER (PARTITION BY over ORDER BY ord, old_visible, c_seq)] END AS slot
		FROM p)
	` + receiveWriteSQL

// receiveWriteSQL is the write of receiveSQL and fifoTakeReceiveSQL: it
// receives the messages of c (c_seq; over: picked but left as they are,
// for the caller to dead-letter; slot: the call whose parameters to
// write it with, see receiveSQL) and returns them with c's ord,
// old_visible, over and slot.
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
		visible_at = CASE WHEN c.over THEN m.visible_at ELSE $2 + ($5::bigint[])[c.slot] END,
		held = m.held OR NOT c.over,
		events = CASE WHEN c.over THEN m.events ELSE tidemq_append_events(m.events,
			CASE WHEN m.held THEN jsonb_build_array(jsonb_build_object('t', m.visible_at, 'k', 'visibility-expired', 'q', $6::text, 'd', $10::text))
				ELSE '[]'::jsonb END
			|| jsonb_build_array(jsonb_build_object('t', $2::bigint, 'k', 'received', 'q', $6::text, 'c', (($7::text[])[c.slot])::jsonb,
				'd', 'receive ' || (m.receive_count + 1) || ', visibility timeout ' || ($8::text[])[c.slot])),
			$11) END
	FROM c WHERE m.queue_id = $1 AND m.seq = ANY(ARRAY(SELECT c_seq FROM c)) AND m.seq = c.c_seq
	RETURNING ` + messageCols + `, c.ord, c.old_visible, c.over, c.slot`

// withExtra is a row whose last columns go to extra after a scanner's.
type withExtra struct {
	pgx.Row
	extra []any
}

func (r withExtra) Scan(dest ...any) error { return r.Row.Scan(append(dest, r.extra...)...) }

// receiveGathered is receiveOnce for a standard queue, and for a FIFO
// queue without a ReceiveRequestAttemptId, on h's connection: the queue's
// row was read, now is read only now that the connection is ours (the
// wait for a connection does not count against the visibility timeout).
// The first round is one statement (receiveSQL; for a FIFO queue the
// pipeline of fifoTakeRound), which carries the other receives of this
// queue that arrived meanwhile too (takes.go); a round that meets
// messages over maxReceiveCount moves them (one transaction, settleOver),
// and a call that got fewer than it asked for then looks again alone.
func (b *Broker) receiveGathered(ctx context.Context, h *heldConn, q *queue, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	r := &received{q: q, now: b.clock.Now()}
	b.noteReceive(q.id, r.now)
	vt := p.Visibility(q.Visibility)
	conn, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	// receive runs one statement for the calls of batch on conn, at now.
	receive := func(ctx context.Context, conn *pgxpool.Conn, now time.Time, batch []*take, maxRC int) error {
		return b.onConn(ctx, conn, func(db querier) error {
			return b.takeRound(ctx, db, q, now, batch, maxRC)
		})
	}
	if q.fifo {
		// As AWS and the engine do, at the in-flight cap a FIFO receive
		// gets none, without an error, and near it no more than the room.
		var release func()
		max, release, err = b.fifoRoom(ctx, conn, q, r.now, max)
		defer release() // once this call's statements committed, or failed
		if err != nil {
			return nil, err
		}
		receive = func(ctx context.Context, conn *pgxpool.Conn, now time.Time, batch []*take, maxRC int) error {
			return b.fifoTakeRound(ctx, conn, q, now, batch, maxRC) // lockedPipeline checks a fence itself
		}
	} else if err := b.checkInflight(ctx, conn, q, r.now); err != nil {
		return nil, err
	}
	maxRC := math.MaxInt32
	if q.Redrive != nil {
		maxRC = q.Redrive.MaxReceiveCount
	}
	client, _ := json.Marshal(p.Client)
	t := &take{max: max, vt: vt, client: string(client), ctx: ctx}
	// alone is a round of t's own, then the move of what it met over
	// maxReceiveCount.
	alone := func() error {
		conn, err := h.get(ctx) // a call carried by another's statement gave it back
		if err != nil {
			return err
		}
		if err := receive(ctx, conn, t.now, []*take{t}, maxRC); err != nil {
			return err
		}
		return b.settleOver(ctx, conn, q, t, r)
	}
	switch _, fenced := tidemq.FenceOf(ctx); {
	case max == 0:
		t.now = r.now
	case fenced:
		// A fenced leader's receive checks its fence in the statement's
		// transaction: it goes alone.
		t.now = r.now
		if err := alone(); err != nil {
			return nil, err
		}
	default:
		// The statement's runner holds a connection again (takes.run).
		stmt := func(ctx context.Context, now time.Time, batch []*take) error {
			return receive(ctx, h.conn, now, batch, maxRC)
		}
		after := func(ctx context.Context) error { return b.settleOver(ctx, h.conn, q, t, r) }
		if err := b.takes.run(ctx, b, h, q, t, stmt, after); err != nil {
			return nil, err
		}
	}
	r.now = t.now
	taken := t.got
	for rounds := 1; t.overSeen && !t.stuck && len(taken) < max && rounds < 10; rounds++ {
		if t.noTarget {
			maxRC = math.MaxInt32 // no dead-letter queue to move to: receive them
		}
		t.got, t.over, t.overSeen = nil, nil, false
		t.max = max - len(taken)
		if err := alone(); err != nil {
			return nil, err
		}
		taken = append(taken, t.got...)
	}
	if len(taken) == 0 {
		if conn, err = h.get(ctx); err != nil {
			return nil, err
		}
		var next *int64
		if q.fifo {
			// After the groups' locks: when the long poll looks again,
			// and whether other receives held ready groups.
			err = conn.QueryRow(ctx, fifoEmptySQL, q.id, stampOf(r.now), 1, q.cutoff(r.now)).Scan(&next, &r.contended)
		} else {
			err = conn.QueryRow(ctx, nextDeadlineSQL, q.id, stampOf(r.now)).Scan(&next)
		}
		if err != nil {
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

// settleOver moves the messages t's round left over maxReceiveCount
// (t.over) to q's dead-letter queue, counting them in r, and notes in t
// when q has no dead-letter queue to move them to (noTarget), or when
// none moved and some stayed (stuck: their group in a FIFO dead-letter
// queue was held by another transaction, move.go), so that t does not
// look again for what is still there.
func (b *Broker) settleOver(ctx context.Context, conn *pgxpool.Conn, q *queue, t *take, r *received) error {
	if len(t.over) == 0 {
		return nil
	}
	moved, busy, wake, err := b.deadLetterSeqs(ctx, conn, q, t.over, t.now)
	if err != nil {
		return err
	}
	r.deadLettered += moved
	r.wake = append(r.wake, wake...)
	t.noTarget = wake == nil
	t.stuck = busy > 0 && moved == 0 // nothing moved: looking again finds the same
	return nil
}

// collectReceived reads receiveWriteSQL's rows for calls calls: the
// messages each call received (by slot), in the pick's order (ord, then
// when they became receivable, then seq), and the seqs of those it left
// over maxReceiveCount.
func collectReceived(rows pgx.Rows, calls int) ([][]*message, []int64, error) {
	type pick struct {
		m          *message
		ord        int64
		oldVisible int64
		slot       int32
	}
	defer rows.Close()
	var picks []pick
	var over []int64
	for rows.Next() {
		var pk pick
		var isOver bool
		m, err := scanMessage(withExtra{rows, []any{&pk.ord, &pk.oldVisible, &isOver, &pk.slot}})
		if err != nil {
			return nil, nil, err
		}
		if isOver {
			over = append(over, m.seq)
			continue
		}
		if pk.slot < 1 || int(pk.slot) > calls {
			return nil, nil, fmt.Errorf("postgres: a received message for call %d of %d", pk.slot, calls)
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
	got := make([][]*message, calls)
	for _, pk := range picks {
		got[pk.slot-1] = append(got[pk.slot-1], pk.m)
	}
	return got, over, nil
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
// one transaction. It returns how many it moved, how many stayed because
// their group in a FIFO dead-letter queue was held (busy), and the
// dead-letter queue's name to wake, or nil when q has no dead-letter
// queue to move to.
//
// It never waits for a row: one another transaction holds (a delete, a
// redrive, another node's move of the same message) is left where it is
// (SKIP LOCKED), for a later receive to meet again. Waiting for them, in
// seq order, could close a circle with a writer that locks rows in
// another order, and PostgreSQL would abort one of the two.
func (b *Broker) deadLetterSeqs(ctx context.Context, conn *pgxpool.Conn, q *queue, seqs []int64, now time.Time) (moved, busy int, wake []string, err error) {
	err = b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
		moved, busy, wake = 0, 0, nil
		dlq, err := b.queueByARN(ctx, tx, q.Redrive.DeadLetterTargetARN)
		if err != nil || dlq == nil || dlq.id == q.id {
			return err
		}
		wake = []string{dlq.name}
		rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND seq = ANY($2)
			AND visible_at <= $3 AND receive_count >= $4 ORDER BY seq FOR UPDATE SKIP LOCKED`, q.id, seqs, stampOf(now), q.Redrive.MaxReceiveCount)
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
			// (tidemq.CheckRedriveTarget): move never finds it busy. A
			// FIFO queue's is FIFO: while another transaction holds the
			// message's group there, the message stays, at the head of
			// its own group, which gives nothing until it has moved
			// (fifoTakeReceiveSQL).
			ok, err := b.move(ctx, tx, batch, q, m, dlq, now, tidemq.DeadLetterEvent(q.name, q.Redrive.MaxReceiveCount, m.ReceiveCount, now))
			if err != nil {
				return err
			}
			if ok {
				queued++
			} else {
				busy++
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
	return moved, busy, wake, err
}
