package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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
	max := 1
	if p.MaxNumberOfMessages != nil {
		max = *p.MaxNumberOfMessages
	}
	var deadline time.Time
	for first := true; ; first = false {
		if err := b.refusal(); err != nil {
			if !first {
				return nil, nil
			}
			return nil, err
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
			wait := r.q.WaitTime
			if p.WaitTimeSeconds != nil {
				wait = time.Duration(*p.WaitTimeSeconds) * time.Second
			}
			deadline = now.Add(wait)
		}
		for _, name := range r.wake {
			b.waiters.wake(name)
		}
		if r.deadLettered > 0 {
			b.stat(r.q.id, func(s *tidemq.QueueStats) { s.DeadLettered += uint64(r.deadLettered) })
		}
		if len(r.msgs) > 0 || !now.Before(deadline) || b.isDraining() {
			b.waiters.remove(p.Queue, w)
			b.stat(r.q.id, func(s *tidemq.QueueStats) {
				s.Received += uint64(len(r.msgs))
				if len(r.msgs) == 0 {
					s.EmptyReceives++
				}
			})
			return r.msgs, nil
		}
		wakeAt := deadline
		if r.next != 0 && timeOf(r.next).Before(wakeAt) {
			wakeAt = timeOf(r.next)
		}
		timer := b.clock.NewTimer(wakeAt.Sub(now))
		select {
		case <-w.ch:
		case <-timer.C():
		case <-ctx.Done():
			timer.Stop()
			b.waiters.remove(p.Queue, w)
			return nil, nil
		case <-b.draining:
		}
		timer.Stop()
		b.waiters.remove(p.Queue, w)
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
	// wake are queues that got messages (dead-letter moves).
	wake []string
	// deadLettered counts the dead-letter moves.
	deadLettered int
}

// attemptEntry remembers one message of a FIFO receive attempt.
type attemptEntry struct {
	Seq       int64  `json:"s"`
	Count     int    `json:"c"`
	VisibleAt int64  `json:"v"`
	Handle    string `json:"h"`
}

// receiveOnce takes up to max messages from the queue: a standard queue's
// with receiveStandard, a FIFO queue's in one transaction (receiveFIFO).
func (b *Broker) receiveOnce(ctx context.Context, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	if err := b.refusal(); err != nil {
		return nil, err
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	q, err := b.getQueue(ctx, conn, p.Queue, false)
	if err != nil {
		return nil, err
	}
	if q.fifo {
		return b.receiveFIFO(ctx, conn, p, max)
	}
	r, err := b.receiveStandard(ctx, conn, q, p, max)
	return r, b.failure(ctx, err)
}

// receiveFIFO takes up to max messages from a FIFO queue in one
// transaction, which locks the queue's row: FIFO receives of a queue take
// turns, so that the group rules are decided on what the previous one
// committed.
func (b *Broker) receiveFIFO(ctx context.Context, conn *pgxpool.Conn, p tidemq.ReceiveMessagesParams, max int) (*received, error) {
	var r *received
	err := b.inTxOn(ctx, conn, func(tx pgx.Tx) error {
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
		var taken []*message
		var dlq *queue
		dlqLooked := false
		for round := 0; len(taken) < max && round < 10; round++ {
			cands, err := b.candidates(ctx, tx, q, now, max-len(taken))
			if err != nil {
				return err
			}
			if len(cands) == 0 {
				break
			}
			batch := &pgx.Batch{}
			moved := 0
			var recv []*message
			for _, m := range cands {
				m.settle(stampOf(now), q.name)
				if q.Redrive != nil && m.receiveCount >= q.Redrive.MaxReceiveCount {
					if !dlqLooked {
						dlqLooked = true
						if dlq, err = b.queueByARN(ctx, tx, q.Redrive.DeadLetterTargetARN); err != nil {
							return err
						}
					}
					if dlq != nil && dlq.id != q.id {
						reason := fmt.Sprintf("maxReceiveCount %d reached: received %d times without being deleted", q.Redrive.MaxReceiveCount, m.receiveCount)
						if err := b.move(ctx, tx, batch, q, m, dlq, now, tidemq.HistoryEvent{Time: now, Kind: tidemq.HistoryDeadLetter, Queue: q.name, Detail: reason}); err != nil {
							return err
						}
						moved++
						continue
					}
				}
				m.receiveCount++
				if m.firstReceive == 0 {
					m.firstReceive = stampOf(now)
				}
				m.receivedAt = stampOf(now)
				m.held = true
				m.visibleAt = stampOf(now.Add(vt))
				m.addHistory(tidemq.HistoryEvent{Time: now, Kind: tidemq.HistoryReceived, Queue: q.name, Client: p.Client,
					Detail: fmt.Sprintf("receive %d, visibility timeout %s", m.receiveCount, vt)})
				recv = append(recv, m)
			}
			if len(recv) > 0 {
				batch.Queue(receivedManySQL, receivedManyArgs(q.id, recv)...)
			}
			if moved > 0 {
				batch.Queue(`SELECT pg_notify($1, $2)`, b.channel, dlq.name)
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
			if moved == 0 {
				break
			}
		}
		if len(taken) == 0 {
			var next *int64
			if err := tx.QueryRow(ctx, nextDeadlineSQL, q.id, stampOf(now)).Scan(&next); err != nil {
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
			handle := receipt{qid: q.id, seq: m.seq, count: m.receiveCount}.encode(b.handleKey)
			r.msgs[i] = m.snapshot(q, handle)
			entries[i] = attemptEntry{Seq: m.seq, Count: m.receiveCount, VisibleAt: m.visibleAt, Handle: handle}
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
// is). So a receive takes a group's messages in order from its first
// live message and stops at the first one not ready, and a group has
// receivable messages exactly when its first message is ready.
// fifoNearSQL looks for them among the first fifoScanBound ready messages
// in sequence order, which finds them at once in the usual case. When
// those are all held up behind locked groups (one busy group with
// thousands queued behind its message in flight), fifoHeadsSQL walks the
// groups instead, from each group's head to the next group's with one
// index probe (a loose index scan), and takes the groups whose head is
// ready, oldest first: the cost follows the number of groups, not the
// depth of the locked one (0.2 ms past a locked group of 200,000 where the
// scan in sequence order took 130 ms).
const fifoScanBound = 1000

// Groups are served in the line tidemq.GroupHead describes: by when their
// head became receivable (its visible_at, whether it was sent or came
// back), one that came back behind one that did not at the same instant,
// then by sequence. fifoNearSQL sorts its candidates by their group head's
// keys (the first candidate of a group is its head) and then by sequence.
var fifoNearSQL = `WITH r AS (
		SELECT seq, group_id, visible_at, receive_count FROM messages
		WHERE queue_id = $1 AND group_id <> '' AND visible_at <= $2 AND enqueued_at > $4
		ORDER BY seq LIMIT 1000),
	c AS (
		SELECT r.seq, first_value(r.visible_at) OVER w AS h_since, first_value(r.receive_count > 0) OVER w AS h_returned,
			first_value(r.seq) OVER w AS h_seq
		FROM r WHERE NOT EXISTS (SELECT 1 FROM messages o
			WHERE o.queue_id = $1 AND o.group_id = r.group_id AND o.group_id <> '' AND o.visible_at > $2
			  AND o.enqueued_at > $4 AND o.seq < r.seq)
		WINDOW w AS (PARTITION BY r.group_id ORDER BY r.seq)
		ORDER BY h_since, h_returned, h_seq, seq LIMIT $3)
	SELECT ` + qualified("m", messageCols) + ` FROM messages m JOIN c ON m.queue_id = $1 AND m.seq = c.seq
	ORDER BY c.h_since, c.h_returned, c.h_seq, c.seq`

const fifoNearCountSQL = `SELECT count(*) FROM (
		SELECT 1 FROM messages WHERE queue_id = $1 AND group_id <> '' AND visible_at <= $2 AND enqueued_at > $3
		ORDER BY seq LIMIT 1000) m`

const fifoHeadsSQL = `WITH RECURSIVE g AS (
		(SELECT group_id, seq, visible_at, receive_count FROM messages WHERE queue_id = $1 AND group_id <> '' AND enqueued_at > $4
		 ORDER BY group_id, seq LIMIT 1)
		UNION ALL
		SELECT n.group_id, n.seq, n.visible_at, n.receive_count FROM g CROSS JOIN LATERAL (
			SELECT group_id, seq, visible_at, receive_count FROM messages WHERE queue_id = $1 AND group_id <> '' AND group_id > g.group_id
			  AND enqueued_at > $4
			ORDER BY group_id, seq LIMIT 1) n
	)
	SELECT group_id FROM g WHERE visible_at <= $2 ORDER BY visible_at, receive_count > 0, seq LIMIT $3`

// fifoGroupSQL reads a group's first messages. (The range on group_id,
// rather than an equality, keeps the planner on the group index: with an
// equality it may walk the queue in sequence order instead.)
const fifoGroupSQL = `SELECT ` + messageCols + ` FROM messages
	WHERE queue_id = $1 AND group_id <> '' AND group_id >= $2 AND group_id <= $2 AND enqueued_at > $4
	ORDER BY group_id, seq LIMIT $3`

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

// nextDeadlineSQL is a queue's next deadline after $2 (a delay or a
// visibility timeout ending), from the two receive indexes.
const nextDeadlineSQL = `SELECT least(
		(SELECT min(visible_at) FROM messages WHERE queue_id = $1 AND receive_count > 0 AND visible_at > $2),
		(SELECT min(visible_at) FROM messages WHERE queue_id = $1 AND receive_count = 0 AND visible_at > $2))`

// candidates returns up to n receivable messages of q, locked. A standard
// queue's come as standardSQL takes them; a FIFO queue's (its receives
// take turns on the queue's row) group by group, in the line of groups
// (tidemq.GroupHead), each group's in order (AWS returns a group's
// messages together).
//
// Messages past the queue's retention are left out (retention.go): the
// sweep deletes them.
func (b *Broker) candidates(ctx context.Context, tx pgx.Tx, q *queue, now time.Time, n int) ([]*message, error) {
	cutoff := q.cutoff(now)
	if !q.fifo {
		rows, err := tx.Query(ctx, standardSQL, q.id, stampOf(now), n, cutoff)
		if err != nil {
			return nil, err
		}
		ms, err := collectMessages(rows)
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].receiveCount > 0 && ms[j].receiveCount == 0 })
		return ms, err
	}
	rows, err := tx.Query(ctx, fifoNearSQL, q.id, stampOf(now), max(n, 100), cutoff)
	if err != nil {
		return nil, err
	}
	ms, err := collectMessages(rows)
	if err != nil {
		return nil, err
	}
	if len(ms) >= n {
		return groupOrder(ms, n), nil
	}
	var scanned int
	if err := tx.QueryRow(ctx, fifoNearCountSQL, q.id, stampOf(now), cutoff).Scan(&scanned); err != nil {
		return nil, err
	}
	if scanned < fifoScanBound {
		return groupOrder(ms, n), nil // every ready message was looked at
	}
	rows, err = tx.Query(ctx, fifoHeadsSQL, q.id, stampOf(now), n, cutoff)
	if err != nil {
		return nil, err
	}
	groups, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	ms = ms[:0]
	for _, g := range groups {
		if len(ms) >= n {
			break
		}
		rows, err := tx.Query(ctx, fifoGroupSQL, q.id, g, n-len(ms), cutoff)
		if err != nil {
			return nil, err
		}
		gm, err := collectMessages(rows)
		if err != nil {
			return nil, err
		}
		for _, m := range gm {
			if !m.ready(stampOf(now)) {
				break
			}
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// groupOrder arranges messages group by group, groups in the line of
// groups (tidemq.GroupHead: a group's first message here is its head),
// each group's in sequence order, and keeps the first n.
func groupOrder(ms []*message, n int) []*message {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].seq < ms[j].seq })
	heads := map[string]tidemq.GroupHead{}
	for _, m := range ms {
		if _, ok := heads[m.group]; !ok {
			heads[m.group] = tidemq.GroupHead{Since: m.visibleAt, Returned: m.receiveCount > 0, Seq: uint64(m.seq)}
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		hi, hj := heads[ms[i].group], heads[ms[j].group]
		if hi != hj {
			return hi.ServedBefore(hj)
		}
		return ms[i].seq < ms[j].seq
	})
	if len(ms) > n {
		ms = ms[:n]
	}
	return ms
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
		if m.receiveCount != a.Count || m.visibleAt != a.VisibleAt || !m.inflight(stampOf(now)) {
			return nil, nil
		}
		msgs[i] = m
	}
	out := make([]*tidemq.Message, len(msgs))
	batch := &pgx.Batch{}
	for i, m := range msgs {
		m.visibleAt = stampOf(now.Add(vt))
		entries[i].VisibleAt = m.visibleAt
		batch.Queue(updateStateSQL, m.stateArgs()...)
		out[i] = m.snapshot(q, entries[i].Handle)
	}
	js, _ = json.Marshal(entries)
	batch.Queue(`UPDATE receive_attempts SET entries = $3 WHERE queue_id = $1 AND attempt_id = $2`, q.id, id, js)
	return out, tx.SendBatch(ctx, batch).Close()
}

// inflightCheck is when this node last counted a standard queue's
// messages in flight.
type inflightCheck struct {
	count    int // what it found
	receives int // receives since
}

// Counting the messages in flight costs a read of each (up to the limit),
// so a node counts a queue's on its first receive, then every
// inflightRecount receives, and on every receive once the count is within
// inflightNear of the limit: the limit holds exactly where it matters and
// costs next to nothing elsewhere. (AWS's limit is approximate too.)
const (
	inflightRecount = 1000
	inflightNear    = 10000
)

// checkInflight refuses a receive from a standard queue with
// MaxInflightStandard messages in flight (OverLimit), as the engine does.
func (b *Broker) checkInflight(ctx context.Context, tx querier, q *queue, now time.Time) error {
	b.statsMu.Lock()
	c, ok := b.inflight[q.id]
	c.receives++
	due := !ok || c.receives >= inflightRecount || c.count >= tidemq.MaxInflightStandard-inflightNear
	b.inflight[q.id] = c
	b.statsMu.Unlock()
	if !due {
		return nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages
		WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0 LIMIT $3) x`,
		q.id, stampOf(now), tidemq.MaxInflightStandard).Scan(&n); err != nil {
		return err
	}
	b.statsMu.Lock()
	b.inflight[q.id] = inflightCheck{count: n}
	b.statsMu.Unlock()
	if n >= tidemq.MaxInflightStandard {
		return tidemq.MsgTooManyInflight.New(q.name, tidemq.MaxInflightStandard)
	}
	return nil
}
