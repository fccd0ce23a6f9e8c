package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// ReceiveMessages receives messages, long-polling up to the wait time.
//
// A long poll registers as a waiter of its queue before each look, so that
// no wake between the look and the wait is lost, and then sleeps on the
// Clock until a wake, the end of its wait or the queue's next deadline (a
// delay or a visibility timeout ending), whichever is first (wake.go).
func (b *Broker) ReceiveMessages(ctx context.Context, p tidemq.ReceiveMessagesParams) ([]*tidemq.Message, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p.Queue = b.canonical(p.Queue) // the name its wakes come by
	max := p.Limit()
	var deadline time.Time
	for first := true; ; first = false {
		if err := b.refusal(); err != nil {
			if !first {
				return nil, nil
			}
			return nil, err
		}
		if !first {
			if err := tidemq.CheckFence(ctx); err != nil {
				return nil, err // a leader fenced off while it waited takes nothing
			}
		}
		w := b.waiters.add(p.Queue)
		r, err := b.receiveOnce(ctx, p, max)
		if err != nil {
			b.waiters.remove(p.Queue, w)
			if ctx.Err() != nil {
				return nil, nil // the client is gone, as the engine answers it
			}
			if !first && !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
				// The wait ends empty (cancelled, or the database went
				// away meanwhile); the next request gets the error.
				return nil, nil
			}
			return nil, err
		}
		now := r.now
		if first {
			deadline = r.q.PollDeadline(p, now)
		}
		b.wake(r.wake...)
		if r.deadLettered > 0 {
			b.stat(r.q.id, func(s *tidemq.QueueStats) { s.DeadLettered += uint64(r.deadLettered) })
		}
		if len(r.msgs) > 0 || !now.Before(deadline) || b.draining.Draining() {
			b.waiters.remove(p.Queue, w)
			b.stat(r.q.id, func(s *tidemq.QueueStats) {
				s.Received += uint64(len(r.msgs))
				if len(r.msgs) == 0 {
					s.EmptyReceives++
				}
			})
			return r.msgs, nil
		}
		next := timeOf(r.next)
		if r.contended && (next.IsZero() || now.Add(contendedRetry).Before(next)) {
			next = now.Add(contendedRetry)
		}
		ok := tidemq.PollWait(ctx, b.clock, now, deadline, next, w.ch, b.draining.Done(), nil)
		b.waiters.remove(p.Queue, w)
		if !ok {
			return nil, nil
		}
	}
}

// received is the outcome of one look at a queue.
type received struct {
	q *queue
	// now is when it looked (read once it held a connection).
	now  time.Time
	msgs []*tidemq.Message
	// next is the queue's next deadline after now (0: none), when nothing
	// was received.
	next int64
	// contended is set when a FIFO receive got nothing while the queue had
	// ready groups: other receives held their locks (or took them since).
	// A long poll looks again soon (contendedRetry) rather than waiting
	// for a wake: a receive's commit wakes nobody, and a receive may hold
	// groups it does not serve (fifoLockSQL goes on through the heads of
	// its last head's instant).
	contended bool
	// wake are queues that got messages (dead-letter moves).
	wake []string
	// deadLettered counts the dead-letter moves.
	deadLettered int
}

// attemptEntry remembers one message of a FIFO receive attempt.
type attemptEntry struct {
	Seq       int64        `json:"s"`
	Count     int          `json:"c"`
	VisibleAt tidemq.Stamp `json:"v"`
	Handle    string       `json:"h"`
}

// receiveOnce takes up to max messages from the queue: with
// receiveGathered, or for a FIFO receive with a ReceiveRequestAttemptId in
// one transaction (receiveFIFO).
func (b *Broker) receiveOnce(ctx context.Context, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	h := &heldConn{pool: b.pool}
	defer h.release()
	conn, err := h.get(ctx)
	if err != nil {
		return nil, err
	}
	q, err := b.queueFor(ctx, conn, p.Queue)
	if err != nil {
		return nil, err
	}
	if q.fifo && p.ReceiveRequestAttemptID != "" {
		return b.receiveFIFO(ctx, conn, p, max)
	}
	r, err := b.receiveGathered(ctx, h, q, p, max)
	return r, b.failure(ctx, err)
}

// fifoTakeRound receives from FIFO queue q (read by the caller) for the
// calls of batch, at now, in one pipeline, which PostgreSQL runs as one
// transaction: it reads the queue's row (a queue deleted since q was read
// is not found), locks the groups it will serve (fifoLockSQL, which
// skips the groups other receives hold), then receives from them with
// fifoTakeReceiveSQL (which sees what every receive that held those groups
// before committed), handing each call its runs. So the groups' locks are
// held for the database's work alone, never across a round trip to this
// node, and receives of different groups never wait for each other. The
// queue's visibility timeout, retention and redrive policy are q's: a
// change of them made meanwhile applies from the next receive.
//
// A group whose head was received maxRC times already gives nothing: its
// head comes back in batch[0].over, for the caller to move to the
// dead-letter queue (settleOver), and every call learns that there was
// one (overSeen), as takeRound does.
func (b *Broker) fifoTakeRound(ctx context.Context, conn *pgxpool.Conn, q *queue, now time.Time, batch []*take, maxRC int) error {
	calls := make([]*take, 0, len(batch))
	var asks []int32
	total, most := 0, 0
	for _, t := range batch {
		if t.max > 0 { // a call that is gone takes nothing
			calls = append(calls, t)
			asks = append(asks, int32(t.max))
			total, most = total+t.max, max(most, t.max)
		}
	}
	if len(calls) == 0 {
		return nil
	}
	vts, clients, vtTexts := callParams(calls)
	return b.lockedPipeline(ctx, conn, func(pb *pgx.Batch) {
		pb.Queue(`SELECT `+queueCols+` FROM queues WHERE name = $1`, q.name)
		pb.Queue(fifoLockSQL, q.id, stampOf(now), asks, q.cutoff(now), total+fifoLockExtra, most, maxRC)
		pb.Queue(fifoTakeReceiveSQL, q.id, stampOf(now), total, q.cutoff(now), vts, q.name,
			clients, vtTexts, maxRC, expiredDetail, tidemq.MaxHistoryEvents, asks, most)
	}, func(br pgx.BatchResults) error {
		if _, err := b.scanQueue(br.QueryRow()); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		return handOut(rows, calls, batch[0]) // batch[0] runs the statement, and moves
	})
}

// receiveFIFO takes up to max messages from a FIFO queue in one
// transaction, for a receive with a ReceiveRequestAttemptId: it locks
// the queue's row (such receives take turns, so that an attempt is
// recorded once) and the groups it serves (candidates), so that the
// group rules are decided on what their previous holders committed, and
// moves what is over maxReceiveCount under those locks.
func (b *Broker) receiveFIFO(ctx context.Context, conn *pgxpool.Conn, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	var r *received
	release := func() {} // the share of fifoRoom, held until the commit
	defer func() { release() }()
	want := max
	err := b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
		release() // a retry: the attempt rolled back took nothing
		release = func() {}
		now := b.clock.Now()
		r = &received{now: now}
		q, err := b.getQueue(ctx, tx, p.Queue, true)
		if err != nil {
			return err
		}
		r.q = q
		b.noteReceive(q.id, now)
		vt := p.Visibility(q.Visibility)
		if q.fifo && p.ReceiveRequestAttemptID != "" {
			out, err := b.retryAttempt(ctx, tx, q, p.ReceiveRequestAttemptID, vt, now)
			if err != nil || out != nil {
				r.msgs = out
				return err
			}
		}
		max, held, err := b.fifoRoom(ctx, tx, q, now, want)
		release = held
		if err != nil {
			return err
		}
		var taken []*message
		var dlq *queue
		dlqLooked := false
		// A message due to move whose group in the dead-letter queue
		// another transaction holds (move) stays, and neither it nor the
		// rest of its group (busy) is received: it is not delivered again
		// while it waits to move, and its group keeps its order. A receive
		// that got nothing else finds the group ready and looks again soon
		// (received.contended). stay counts the messages so left; the
		// next round's candidates leave them out (x: their groups, of a
		// FIFO queue; themselves, of a standard one).
		busy := map[string]bool{}
		stay := map[int64]bool{}
		var x except
		for round := 0; len(taken) < max && round < 10; round++ {
			cands, err := b.candidates(ctx, tx, q, now, max-len(taken), x)
			if err != nil {
				return err
			}
			if len(cands) == 0 {
				break
			}
			batch := &pgx.Batch{}
			moved, stayed := 0, len(stay)
			var recv []*message
			for _, m := range cands {
				if busy[m.Group] {
					stay[m.seq] = true
					continue
				}
				m.settle(stampOf(now), q.name)
				if q.DeadLetterDue(m.ReceiveCount) {
					if !dlqLooked {
						dlqLooked = true
						if dlq, err = b.queueByARN(ctx, tx, q.Redrive.DeadLetterTargetARN); err != nil {
							return err
						}
					}
					if dlq != nil && dlq.id != q.id {
						ok, err := b.move(ctx, tx, batch, q, m, dlq, now, tidemq.DeadLetterEvent(q.name, q.Redrive.MaxReceiveCount, m.ReceiveCount, now))
						if err != nil {
							return err
						}
						if !ok {
							busy[m.Group] = true
							stay[m.seq] = true
							continue
						}
						moved++
						continue
					}
				}
				m.Received(q.name, p.Client, vt, now)
				m.held = true
				recv = append(recv, m)
			}
			if len(recv) > 0 {
				batch.Queue(receivedManySQL, receivedManyArgs(q.id, recv)...)
			}
			if moved > 0 {
				r.wake = append(r.wake, dlq.name)
			}
			br := tx.SendBatch(ctx, batch)
			// A row another node's retention sweep deleted since it was
			// read is neither moved nor received.
			for i := 0; i < moved; i++ {
				tag, err := br.Exec()
				if err != nil {
					br.Close()
					return err
				}
				if tag.RowsAffected() > 0 {
					r.deadLettered++
				}
			}
			if len(recv) > 0 {
				rows, err := br.Query()
				if err != nil {
					br.Close()
					return err
				}
				got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
				if err != nil {
					br.Close()
					return err
				}
				written := map[int64]bool{}
				for _, s := range got {
					written[s] = true
				}
				for _, m := range recv {
					if written[m.seq] {
						taken = append(taken, m)
					}
				}
			}
			if err := br.Close(); err != nil {
				return err
			}
			if moved == 0 && len(stay) == stayed {
				break
			}
			x = except{}
			for g := range busy {
				if q.fifo {
					x.groups = append(x.groups, g)
				}
			}
			for seq := range stay {
				if !q.fifo {
					x.seqs = append(x.seqs, seq)
				}
			}
		}
		if len(taken) == 0 {
			var next *int64
			var err error
			if q.fifo {
				err = tx.QueryRow(ctx, fifoEmptySQL, q.id, stampOf(now), 1, q.cutoff(now)).Scan(&next, &r.contended)
			} else {
				err = tx.QueryRow(ctx, nextDeadlineSQL, q.id, stampOf(now)).Scan(&next)
			}
			if err != nil {
				return err
			}
			if next != nil {
				r.next = *next
			}
			return nil
		}
		r.msgs = make([]*tidemq.Message, len(taken))
		entries := make([]attemptEntry, len(taken))
		for i, m := range taken {
			handle := b.handle(q, m)
			r.msgs[i] = m.snapshot(q, handle)
			entries[i] = attemptEntry{Seq: m.seq, Count: m.ReceiveCount, VisibleAt: m.VisibleAt, Handle: handle}
		}
		if q.fifo && p.ReceiveRequestAttemptID != "" {
			js, _ := json.Marshal(entries)
			if _, err := tx.Exec(ctx, `INSERT INTO receive_attempts (queue_id, attempt_id, expires, entries) VALUES ($1, $2, $3, $4)
				ON CONFLICT (queue_id, attempt_id) DO UPDATE SET expires = $3, entries = $4`,
				q.id, p.ReceiveRequestAttemptID, stampOf(now.Add(tidemq.ReceiveAttemptTTL)), js); err != nil {
				return err
			}
		}
		return nil
	})
	return r, err
}

// A FIFO queue's receivable messages are those that are ready, with no
// message of their group before them that is not (AWS's group rule, as
// the engine keeps it, engine/fifo.go: a message waits while an EARLIER
// message of its group is in flight or delayed, not while a later one
// is). So a receive takes a group's messages in order from its head (its
// first live message) and stops at the first one not ready, and a group
// has receivable messages exactly when its head is ready.
//
// Groups are served in the line tidemq.GroupHead describes: by when their
// head became receivable (its visible_at), one that came back behind one
// that did not at the same instant, then by sequence. That is the order
// of the two receive indexes (migrations/0005_receive_order.sql:
// messages never received, and messages back from in flight, each by
// visible_at and seq), so fifoPick walks each from its start, keeps the
// rows that are their group's head (one probe of messages_group each),
// merges the two walks and expands the first heads into their groups'
// ready runs, stopping as soon as it has $3 messages: its cost follows
// what it returns, not the queue's depth. (The query it replaces read the
// first 1,000 ready messages in sequence order, sorted them by their
// group's keys and joined them back to their rows: 12 ms a receive at
// 2,000 queued, all of it under the queue's lock, as receives then took
// turns on the queue's row.)
//
// Each walk looks at no more than fifoScanBound rows (1,000). When they
// found fewer heads than asked for and one of them stopped at its bound
// (one busy group with thousands queued behind its message in flight),
// the groups are walked instead (g), from each group's head to the next
// group's with one index probe (a loose index scan), and the ready heads
// it finds that the walks did not follow theirs in the line: the cost
// follows the number of groups, not the depth of the locked one (0.2 ms
// past a locked group of 200,000 where a scan in sequence order took
// 130 ms). That walk is read only once the heads the walks found are used
// up and more messages are wanted.
const fifoScanBound = 1000

// fifoHeadWalk is one walk over a receive index: the receive count's
// condition picks the index, returned says which; limit is how many heads
// it finds at most.
func fifoHeadWalk(received, returned, limit string) string {
	return `(SELECT seq, group_id, visible_at, ` + returned + ` AS returned FROM (
			SELECT seq, group_id, visible_at FROM messages
			WHERE queue_id = $1 AND ` + received + ` AND visible_at <= $2 AND enqueued_at > $4 AND group_id <> ''
			ORDER BY visible_at, seq LIMIT 1000) f
		WHERE f.seq = (SELECT o.seq FROM messages o WHERE o.queue_id = $1 AND o.group_id <> ''
			AND o.group_id >= f.group_id AND o.group_id <= f.group_id AND o.enqueued_at > $4
			ORDER BY o.group_id, o.seq LIMIT 1)
		ORDER BY visible_at, seq LIMIT ` + limit + `)`
}

// fifoReadyAtBound is true when a receive index holds fifoScanBound ready
// messages or more (a walk may have stopped at its bound).
func fifoReadyAtBound(received string) string {
	return `(SELECT count(*) FROM (SELECT 1 FROM messages WHERE queue_id = $1 AND ` + received + `
			AND visible_at <= $2 AND enqueued_at > $4 LIMIT 1000) x) >= 1000`
}

// fifoPick returns the common table expressions that find the ready
// heads to serve, in the line but for its ties: hh, at most limit of them
// (an SQL expression), in the order of their visible_at and seq, each
// walk's heads as its index gives them, merged (a receive index read
// only as far as it is used: ordering by whether they came back too would
// sort, and read, 32 heads at least where one is enough). Heads that
// became receivable at the same instant are in the line's order only
// once they are sorted as fifoLockedHeads sorts them. h holds the walks' first heads, g the loose walk over the
// groups; hh is read as far as the caller's LIMIT needs (a head gives one
// message at least). (The range on group_id, rather than an equality,
// keeps the planner on the group index: with an equality it may walk the
// queue in sequence order instead.)
func fifoPick(limit string) string {
	return `WITH RECURSIVE g AS (
		(SELECT group_id, seq, visible_at, receive_count FROM messages WHERE queue_id = $1 AND group_id <> '' AND enqueued_at > $4
		 ORDER BY group_id, seq LIMIT 1)
		UNION ALL
		SELECT n.group_id, n.seq, n.visible_at, n.receive_count FROM g CROSS JOIN LATERAL (
			SELECT group_id, seq, visible_at, receive_count FROM messages WHERE queue_id = $1 AND group_id <> '' AND group_id > g.group_id
			  AND enqueued_at > $4
			ORDER BY group_id, seq LIMIT 1) n),
	h AS MATERIALIZED (
		SELECT * FROM (` + fifoHeadWalk("receive_count = 0", "false", limit) + `
			UNION ALL ` + fifoHeadWalk("receive_count > 0", "true", limit) + `) u
		ORDER BY visible_at, seq LIMIT ` + limit + `),
	hh AS (
		SELECT seq, group_id, visible_at FROM h
		UNION ALL
		SELECT seq, group_id, visible_at FROM (
			SELECT seq, group_id, visible_at FROM g
			WHERE visible_at <= $2 AND group_id NOT IN (SELECT group_id FROM h)
			  AND (SELECT count(*) FROM h) < ` + limit + `
			  AND (` + fifoReadyAtBound("receive_count = 0") + ` OR ` + fifoReadyAtBound("receive_count > 0") + `)
			ORDER BY visible_at, receive_count > 0, seq LIMIT ` + limit + `) l)`
}

// fifoEmptySQL is what a FIFO receive that got nothing asks, after its
// own locks, in one statement: queue $1's next deadline after $2
// (nextDeadlineSQL) and whether it has a group ready at $2 (a ready head,
// fifoPick's hh; $3 is 1, $4 the retention cutoff). A ready group it did
// not get is one another receive holds.
var fifoEmptySQL = fifoPick("$3") + ` SELECT (` + nextDeadlineSQL + `), EXISTS (SELECT 1 FROM hh)`

// contendedRetry is how soon a long poll that found a FIFO queue's ready
// groups held by other receives looks again (received.contended): a
// receive holds its groups' locks for a round trip and a commit.
const contendedRetry = 20 * time.Millisecond

// fifoRunSQL is the ready run of head h's group: its first $3 messages
// from the head on, up to the first one not ready.
var fifoRunSQL = fifoRun("$3")

// fifoRun is fifoRunSQL's run of at most limit messages (an SQL
// expression).
func fifoRun(limit string) string {
	return `SELECT * FROM (
		SELECT r.*, bool_and(r.visible_at <= $2) OVER (ORDER BY r.seq) AS run FROM (
			SELECT * FROM messages m
			WHERE m.queue_id = $1 AND m.group_id <> '' AND m.group_id >= h.group_id AND m.group_id <= h.group_id
			  AND m.seq >= h.seq AND m.enqueued_at > $4
			ORDER BY m.group_id, m.seq LIMIT ` + limit + `) r) w
	WHERE w.run`
}

// The groups' locks. A FIFO receive serves a group only while it holds
// the group's lock, a transaction-scoped advisory lock keyed by the queue
// and a hash of the group id (fifoGroupKey; two groups that share a hash
// share a lock, which only makes them take turns), and it decides what
// the group has to give on a snapshot taken after it got the lock. It
// runs as two statements of one transaction (one pipeline):
//
//   - fifoLockSQL walks the line of ready heads on its own snapshot and
//     tries the groups' locks in the line's order, never waiting
//     (pg_try_advisory_xact_lock): a group another receive holds is
//     skipped, as SKIP LOCKED skips a row, so two receives never wait for
//     each other, and it stops once the groups it holds have (by that
//     snapshot) the messages asked for (by every call it serves). It
//     names them, in the line's order, in a transaction-local setting
//     (fifoGroupsSetting).
//   - fifoTakeReceiveSQL (fifoLockedLineSQL, to read without
//     receiving) then takes each named group's ready run on a new
//     snapshot, the statement's own. PostgreSQL releases a transaction's
//     locks only after its commit is visible to every new snapshot, so
//     that snapshot sees whatever the group's previous holder wrote: the
//     messages it received are in flight there, and its run is empty. A
//     group is never served twice at once, nor past an earlier message of
//     its own in flight (the group rule is decided per group, on what the
//     previous holder of that group committed).
//
// Nothing else a receive reads needs the lock. A FIFO send takes its
// groups' locks too, waiting for them (fifoSendLockSQL, send.go), so
// within a group its messages' sequence numbers follow commit order: any
// snapshot sees a prefix of each group. A delete only takes a message in flight away, and a visibility change
// only makes one in flight ready: a receive that saw either before it
// happened serves less than it could, never out of turn. Retention only
// leaves out what the receive leaves out too (enqueued_at > $4). The
// queue's other writers that take messages out of a group (a redrive or
// MoveMessages from it, the dead-letter moves of receiveFIFO) pick their
// messages through candidates, under the same locks; the dead-letter move
// of a gathered receive (settleOver, deadLetterSeqs) takes only groups'
// heads, without their locks, as every receive leaves such a head where
// it is until it has moved (fifoTakeReceiveSQL), and skips a head whose
// row another transaction holds rather than wait for it; those that bring
// messages into a group (a dead-letter move, a redrive, a capture of
// expired messages) take its lock too, never waiting for it, and leave the
// message where it was while another transaction holds it (move.go).
//
// The pick is the line's as before when nothing competes: the groups
// named are the line's first, in its order, until their runs make up
// what was asked for.
// Under competition a receive takes the next free groups, as AWS serves
// different groups to concurrent consumers.
const fifoGroupsSetting = "tidemq.fifo_groups"

// fifoLockExtra is how many heads past $3 the lock statement looks at, for
// the groups other receives hold.
const fifoLockExtra = 32

// fifoGroupKey is the advisory lock of the queue $1 and the group id
// expr: the two-key form, apart from the one-key locks of KV and the
// migrations. An advisory lock is the database's, so the queue's key
// names the schema too (fifoQueueKey): deployments in schemas of one
// database number their queues alike.
func fifoGroupKey(expr string) string {
	return fifoQueueKey + `, hashtext(` + expr + `)`
}

// fifoQueueKey is the first key of the locks of queue $1's groups.
const fifoQueueKey = `hashtext(current_schema() || ':' || $1::bigint::text)`

// fifoLockSQL locks groups of the queue for one or more receive calls
// and names them in fifoGroupsSetting (see above): $3 holds what each
// call asks for (an int array), $5 is how many heads it looks at, $6 how
// many messages of a run one call takes at most. A group's run is counted
// only once its lock is held, and handed to the calls as
// fifoTakeReceiveSQL will: run by run, at most $6 messages of a run and at
// most the room its call has left. It stops once every call is full; as
// it reads the heads by visible_at and seq, it then goes on through the
// heads of the same instant as its last (the line puts one that came
// back behind one that did not), and fifoLockedHeads puts them in the
// line's order. A run counts up to its first message received $7
// (maxReceiveCount) times already, as fifoTakeReceiveSQL cuts it there: a
// group whose head is due for the dead-letter queue is locked (its head
// comes back for the move) but fills no call. So calls of one message lock
// a group each, and a small call that a big run fills does not leave the
// next call without a group. A caller that reads without receiving
// (candidates) is one call of n, runs of n, and $7 past any count. The
// heads are read lazily, only as far as the walk goes (aggregating them
// into arrays first read all $5 of them, and made a receive of 16 calls
// take 12 ms where it took 1.2).
var fifoLockSQL = fifoLockWith(``)

// fifoLockExceptSQL is fifoLockSQL leaving out the groups named in $8 (a
// text array) as if other transactions held them: the groups a move or a
// receive already knows to stay (moveSome, receiveFIFO). So a round of
// theirs reads only what it has not seen: the run of a group left out is
// not read again round after round (issue 21: a redrive into a busy group
// read its run once a round, inside one transaction). The caller counts
// the left-out heads into $5.
var fifoLockExceptSQL = fifoLockWith(`h.group_id <> ALL($8::text[]) AND `)

// fifoLockWith is fifoLockSQL where a group's lock is tried only when the
// condition cond (empty, or a condition followed by AND) holds.
func fifoLockWith(cond string) string {
	return fifoPick("$5") + `,
	c AS MATERIALIZED (SELECT seq, group_id, visible_at, row_number() OVER () AS i FROM hh),
	r AS (
		SELECT 0::bigint AS i, 1 AS call, ($3::int[])[1]::bigint AS room, '{}'::text[] AS locked, 0::bigint AS last
		UNION ALL
		SELECT h.i, s.call, s.room,
			CASE WHEN k.ok THEN r.locked || h.group_id ELSE r.locked END,
			CASE WHEN k.ok THEN h.visible_at ELSE r.last END
		FROM r CROSS JOIN LATERAL (SELECT * FROM c WHERE c.i = r.i + 1 LIMIT 1) h
			CROSS JOIN LATERAL (SELECT ` + cond + `pg_try_advisory_xact_lock(` + fifoGroupKey("h.group_id") + `) AS ok) k
			CROSS JOIN LATERAL (SELECT least(CASE WHEN k.ok THEN (SELECT count(*) FROM (
				SELECT bool_or(x.receive_count >= $7) OVER (ORDER BY x.seq) AS over FROM (` + fifoRun("$6") + `) x) y
				WHERE NOT y.over) ELSE 0 END, r.room) AS took) g
			CROSS JOIN LATERAL (SELECT CASE WHEN g.took > 0 AND g.took = r.room THEN r.call + 1 ELSE r.call END AS call,
				CASE WHEN g.took > 0 AND g.took = r.room THEN coalesce(($3::int[])[r.call + 1], 0) ELSE r.room - g.took END AS room) s
		WHERE r.call <= cardinality($3::int[]) OR h.visible_at <= r.last)
	SELECT set_config('` + fifoGroupsSetting + `', (SELECT locked FROM r ORDER BY i DESC LIMIT 1)::text, true)`
}

// fifoLockedHeads are the common table expressions of fifoLockedLineSQL
// and fifoTakeReceiveSQL: hh, the heads of the groups fifoLockSQL
// locked, in the line (tidemq.GroupHead).
const fifoLockedHeads = `WITH RECURSIVE l AS (
		SELECT grp, i FROM unnest(coalesce(nullif(current_setting('` + fifoGroupsSetting + `', true), ''), '{}')::text[])
			WITH ORDINALITY AS l(grp, i)),
	hh AS MATERIALIZED (
		SELECT hd.seq, l.grp AS group_id, row_number() OVER (ORDER BY hd.visible_at, hd.receive_count > 0, hd.seq) AS j FROM l CROSS JOIN LATERAL (
			SELECT seq, visible_at, receive_count FROM messages WHERE queue_id = $1 AND group_id <> '' AND group_id >= l.grp AND group_id <= l.grp
			  AND enqueued_at > $4
			ORDER BY group_id, seq LIMIT 1) hd
		ORDER BY hd.visible_at, hd.receive_count > 0, hd.seq)`

// fifoLockedLineSQL picks up to $3 receivable messages of the groups
// fifoLockSQL locked, group by group in the line, each group's ready run
// in sequence order.
var fifoLockedLineSQL = fifoLockedHeads + `
	SELECT ` + qualified("r", messageCols) + ` FROM hh h CROSS JOIN LATERAL (` + fifoRunSQL + `) r
	LIMIT $3`

// fifoTakeReceiveSQL receives, for one or more calls, the ready runs of
// the groups fifoLockSQL locked, in one statement (the write and the
// parameters are receiveSQL's, receiveWriteSQL; $12 holds what each call
// asks for, every one at least 1, and $13 the most of them). The runs
// go to the calls group by group in the line, each run whole to one call
// (at most $13 messages of it): a call takes runs while it has room, and
// the run that fills it gives it only the messages it has room for; the
// rest of that run stays in its group, for a later receive, as the
// group's next messages are never handed to another call while earlier
// ones are in flight. So each call gets what it would have got alone,
// one after the other; with one call, the line's first $12[1] messages,
// group by group.
//
// A run ends before its first message received $9 times already (over):
// nothing of its group behind such a message is received before it has
// moved to the dead-letter queue. An over message that heads its group
// comes back with over set, read, not written (u writes only what the
// calls receive, so the statement never waits for the row lock of a
// message it does not receive, under its groups' locks), for the caller
// to move (settleOver); one further on waits until it heads its group.
//
// ok are the runs so cut; n numbers their groups in the line, as arrays
// read by index (a walk of n runs costs n steps, not n²), and a walks
// them (i), carrying the call they go to and the room it has left; ord is
// the line's order.
// (The calls take $3 in all at most: the LIMIT only tells the planner so,
// and gives $3 its type.)
var fifoTakeReceiveSQL = fifoLockedHeads + `,
	runs AS MATERIALIZED (
		SELECT h.j, r.seq, r.visible_at, row_number() OVER w AS k, count(*) FILTER (WHERE r.receive_count >= $9) OVER w AS overs
		FROM hh h CROSS JOIN LATERAL (` + fifoRunSQLMost + `) r
		WINDOW w AS (PARTITION BY h.j ORDER BY r.seq)),
	ok AS (SELECT * FROM runs WHERE overs = 0),
	n AS MATERIALIZED (SELECT array_agg(j ORDER BY j) AS js, array_agg(len ORDER BY j) AS lens FROM (
			SELECT j, count(*) AS len FROM ok GROUP BY j) x),
	a AS (
		SELECT 0 AS i, 0::bigint AS j, 1 AS call, ($12::int[])[1]::bigint AS room, 0::bigint AS took
		UNION ALL
		SELECT a.i + 1, n.js[a.i + 1], s.call, s.room - least(n.lens[a.i + 1], s.room), least(n.lens[a.i + 1], s.room)
		FROM a CROSS JOIN n CROSS JOIN LATERAL (
				SELECT CASE WHEN a.room = 0 THEN a.call + 1 ELSE a.call END AS call,
					CASE WHEN a.room = 0 THEN ($12::int[])[a.call + 1]::bigint ELSE a.room END AS room) s
		WHERE a.i < coalesce(cardinality(n.js), 0) AND s.call <= cardinality($12::int[])),
	c AS MATERIALIZED (
		SELECT * FROM (
			SELECT r.seq AS c_seq, r.visible_at AS old_visible, row_number() OVER (ORDER BY r.j, r.k) AS ord, false AS over, a.call AS slot
			FROM ok r JOIN a ON a.j = r.j AND r.k <= a.took
			LIMIT $3) t
		UNION ALL
		SELECT seq, visible_at, 0, true, 0 FROM runs WHERE k = 1 AND overs = 1),
	u AS (` + strings.Replace(receiveWriteSQL, `FROM c WHERE`, `FROM c WHERE NOT c.over AND`, 1) + `)
	SELECT * FROM u
	UNION ALL
	SELECT ` + qualified("m", messageCols) + `, c.ord, c.old_visible, c.over, c.slot
	FROM c JOIN messages m ON m.queue_id = $1 AND m.seq = c.c_seq WHERE c.over`

// fifoRunSQLMost is fifoRunSQL's run of $13 messages at most.
var fifoRunSQLMost = fifoRun("$13")

// standardSQL takes up to $3 receivable messages of a standard queue,
// locked, skipping rows other receives hold (SKIP LOCKED): first those
// that came back from in flight, then those never received, each in the
// order they became receivable (migrations/0005_receive_order.sql). The
// second branch runs only when the first gave fewer than $3.
const standardSQL = `SELECT * FROM (
		SELECT ` + messageCols + ` FROM messages WHERE queue_id = $1 AND receive_count > 0 AND visible_at <= $2 AND enqueued_at > $4
		ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) r
	UNION ALL
	SELECT * FROM (
		SELECT ` + messageCols + ` FROM messages WHERE queue_id = $1 AND receive_count = 0 AND visible_at <= $2 AND enqueued_at > $4
		ORDER BY visible_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED) f
	LIMIT $3`

// standardExceptSQL is standardSQL leaving out the messages whose
// dlq_source is in $5 (a text array) and those whose seq is in $6 (a
// bigint array): those a move leaves where they are (moveSome, except),
// so that its next round does not return them again.
var standardExceptSQL = strings.ReplaceAll(standardSQL, `AND enqueued_at > $4`,
	`AND enqueued_at > $4 AND dlq_source <> ALL($5::text[]) AND seq <> ALL($6::bigint[])`)

// except is what a caller that takes candidates round after round in one
// transaction already decided to leave where it is, for the next rounds
// to leave out: groups, FIFO groups to leave out whole (of a FIFO
// queue); sources, dlq_source values and seqs, sequence numbers whose
// messages to leave out (of a standard queue).
type except struct {
	groups  []string
	sources []string
	seqs    []int64
}

// nextDeadlineSQL is a queue's next deadline after $2 (a delay or a
// visibility timeout ending), from the two receive indexes.
const nextDeadlineSQL = `SELECT least(
		(SELECT min(visible_at) FROM messages WHERE queue_id = $1 AND receive_count > 0 AND visible_at > $2),
		(SELECT min(visible_at) FROM messages WHERE queue_id = $1 AND receive_count = 0 AND visible_at > $2))`

// candidates returns up to n receivable messages of q, locked. A standard
// queue's come as standardSQL takes them; a FIFO queue's from the groups
// whose locks it takes first (fifoLockSQL: the caller's transaction
// holds them to its end), group by group, in the line of groups
// (tidemq.GroupHead), each group's in order (AWS returns a group's
// messages together).
//
// A caller that takes candidates round after round in one transaction
// names in x what it already decided to leave where it is, so that each
// round returns only messages it has not seen.
//
// Messages past the queue's retention are left out (retention.go): the
// sweep deletes them.
func (b *Broker) candidates(ctx context.Context, tx pgx.Tx, q *queue, now time.Time, n int, x except) ([]*message, error) {
	cutoff := q.cutoff(now)
	if !q.fifo {
		sql, args := standardSQL, []any{q.id, stampOf(now), n, cutoff}
		if len(x.sources) > 0 || len(x.seqs) > 0 {
			sql, args = standardExceptSQL, append(args, x.sources, x.seqs)
		}
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return nil, err
		}
		ms, err := collectMessages(rows)
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].ReceiveCount > 0 && ms[j].ReceiveCount == 0 })
		b.candidatesRead.Add(int64(len(ms)))
		return ms, err
	}
	var err error
	if len(x.groups) > 0 {
		_, err = tx.Exec(ctx, fifoLockExceptSQL, q.id, stampOf(now), []int32{int32(n)}, cutoff, n+fifoLockExtra+len(x.groups), n, math.MaxInt32, x.groups)
	} else {
		_, err = tx.Exec(ctx, fifoLockSQL, q.id, stampOf(now), []int32{int32(n)}, cutoff, n+fifoLockExtra, n, math.MaxInt32)
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, fifoLockedLineSQL, q.id, stampOf(now), n, cutoff)
	if err != nil {
		return nil, err
	}
	ms, err := collectMessages(rows)
	b.candidatesRead.Add(int64(len(ms)))
	return ms, err
}

// retryAttempt answers a retried FIFO receive from its attempt, if the
// attempt is known and none of its messages was deleted, received again or
// had its visibility changed since. Their visibility timeouts start again.
func (b *Broker) retryAttempt(ctx context.Context, tx pgx.Tx, q *queue, id string, vt time.Duration, now time.Time) ([]*tidemq.Message, error) {
	var js []byte
	err := tx.QueryRow(ctx, `SELECT entries FROM receive_attempts WHERE queue_id = $1 AND attempt_id = $2 AND expires > $3`,
		q.id, id, stampOf(now)).Scan(&js)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var entries []attemptEntry
	if err := json.Unmarshal(js, &entries); err != nil {
		return nil, err
	}
	msgs := make([]*message, len(entries))
	for i, a := range entries {
		m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+messageCols+` FROM messages WHERE queue_id = $1 AND seq = $2 FOR UPDATE`, q.id, a.Seq))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if m.ReceiveCount != a.Count || m.VisibleAt != a.VisibleAt || !m.inflight(stampOf(now)) {
			return nil, nil
		}
		msgs[i] = m
	}
	out := make([]*tidemq.Message, len(msgs))
	batch := &pgx.Batch{}
	for i, m := range msgs {
		m.VisibleAt = tidemq.StampOf(now.Add(vt))
		entries[i].VisibleAt = m.VisibleAt
		batch.Queue(updateStateSQL, m.stateArgs()...)
		out[i] = m.snapshot(q, entries[i].Handle)
	}
	js, _ = json.Marshal(entries)
	batch.Queue(`UPDATE receive_attempts SET entries = $3 WHERE queue_id = $1 AND attempt_id = $2`, q.id, id, js)
	return out, tx.SendBatch(ctx, batch).Close()
}
