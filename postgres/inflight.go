package postgres

import (
	"context"
	"time"

	"github.com/tidemq/tidemq"
)

// The caps on a queue's messages in flight (tidemq.InflightLimits): how a
// node counts them, and how its concurrent FIFO receives share the room
// left under one.

// inflightCheck is when this node last counted a queue's messages in
// flight.
type inflightCheck struct {
	count    int // what it found
	receives int // receives since
}

// Counting the messages in flight costs a read of each (up to the cap),
// so a node counts a queue's on its first receive, then every
// inflightRecount receives, and on every receive once the count is within
// inflightNear of the cap: the cap holds exactly where it matters and
// costs next to nothing elsewhere (inflightRecount receives of 10 take at
// most inflightNear messages). (AWS's limit is approximate too; several
// nodes receiving at the same instant near the cap may each pass it, by
// one receive each.)
const (
	inflightRecount = 1000
	inflightNear    = 10000
)

// inflightRoom returns how many more messages q may have in flight under
// its cap (Options.Inflight; zero or less: none), as the engine counts
// them: exact near the cap, an estimate of at least inflightNear away
// from it.
func (b *Broker) inflightRoom(ctx context.Context, tx querier, q *queue, now time.Time) (int, error) {
	limit := b.inflightCaps.Cap(q.fifo)
	b.statsMu.Lock()
	c, ok := b.inflight[q.id]
	c.receives++
	due := !ok || c.receives >= inflightRecount || c.count >= limit-inflightNear
	if due {
		// This receive counts; those that come while it counts go on
		// with the estimate, rather than each counting too (16 clients
		// ran 16 counts of tens of milliseconds each at once).
		c.receives = 0
	}
	b.inflight[q.id] = c
	b.statsMu.Unlock()
	if !due {
		return limit - c.count, nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages
		WHERE queue_id = $1 AND visible_at > $2 AND receive_count > 0 LIMIT $3) x`,
		q.id, stampOf(now), limit).Scan(&n); err != nil {
		b.statsMu.Lock()
		c := b.inflight[q.id]
		c.receives = inflightRecount // the next receive counts again
		b.inflight[q.id] = c
		b.statsMu.Unlock()
		return 0, err
	}
	b.statsMu.Lock()
	b.inflight[q.id] = inflightCheck{count: n}
	b.statsMu.Unlock()
	return limit - n, nil
}

// checkInflight refuses a receive from a standard queue with its cap of
// messages in flight (OverLimit), as the engine does. A receive under the
// cap takes up to its MaxNumberOfMessages, as the engine's does.
func (b *Broker) checkInflight(ctx context.Context, tx querier, q *queue, now time.Time) error {
	room, err := b.inflightRoom(ctx, tx, q, now)
	if err != nil {
		return err
	}
	if room <= 0 {
		return tidemq.TooManyInflight(q.name, b.inflightCaps.Cap(false))
	}
	return nil
}

// fifoRoom is how many messages a receive from a FIFO queue may take
// (up to max): as AWS and the engine do, at the cap it gets none, without
// an error, and near it no more than the room left. Receives of this node
// that run at the same time share the room: each counts the room that
// the others were given and have not committed yet (the count cannot see
// them), and holds its own share until release, which it calls once what
// it took is committed (or nothing was). The share is what it may take,
// not what it took: a receive that finds fewer keeps the others from the
// rest of its share until it releases, which errs towards the cap.
// (Several nodes near the cap may still pass it, by a receive each, as
// inflightRoom says.)
func (b *Broker) fifoRoom(ctx context.Context, tx querier, q *queue, now time.Time, want int) (n int, release func(), err error) {
	b.statsMu.Lock()
	before := b.fifoHeld[q.id]
	b.statsMu.Unlock()
	room, err := b.inflightRoom(ctx, tx, q, now)
	if err != nil {
		return 0, func() {}, err
	}
	b.statsMu.Lock()
	defer b.statsMu.Unlock()
	h := b.fifoHeld[q.id]
	// Held before the count, or given while it ran: either may be
	// missing from it. (One released meanwhile may be in it too, and is
	// then counted twice: fewer, never more.)
	room -= before.out + int(h.given-before.given)
	n = min(max(room, 0), want)
	h.out += n
	h.given += uint64(n)
	b.fifoHeld[q.id] = h
	return n, func() {
		b.statsMu.Lock()
		defer b.statsMu.Unlock()
		h := b.fifoHeld[q.id]
		h.out -= n
		b.fifoHeld[q.id] = h
	}, nil
}

// heldRoom is what fifoRoom gave a queue's receives on this node: out,
// given and not yet released; given, all it ever gave (so that a count
// can tell what was given while it ran).
type heldRoom struct {
	out   int
	given uint64
}
