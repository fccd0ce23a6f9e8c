package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// Gathered receives. The ReceiveMessage calls on one queue that arrive
// while a receive statement of that queue is running on this node wait for
// it, and then go together in one statement, which picks as many messages
// as they asked for in all and hands each call its share: each gets what
// it would have got alone, in turn, with its own visibility timeout. On a
// standard queue that is one receiveSQL, whose slots hand the k-th message
// to a call; on a FIFO queue (a receive without a ReceiveRequestAttemptId:
// receiveGathered) one pipeline of fifoLockSQL and fifoTakeReceiveSQL
// (fifoTakeRound), which hands each group's ready run whole to one call.
// So sixteen consumers of one queue make a few statements of many rows
// instead of sixteen of ten that skip each other's locks: measured with
// pgbench on one database, the receive statement moved 9,700–11,900 rows/s
// as 16 clients of 10 rows and 36,000–40,800 as 2 clients of 80
// (docs/performance.md, stop 41).
//
// No goroutine of its own: the call that finds the queue idle runs the
// statement on its connection; when it is done, the first call that
// waited behind it runs the next one with everything waiting then (up to
// maxTakeCalls calls), and so on, so every call runs at most one
// gathered statement and a queue's receives never wait for more than the
// one running. Messages over maxReceiveCount that a statement meets are
// moved by the call that ran it before the others are answered, so a call
// that then looks again alone does not meet them.
//
// A call whose client goes away while it waits leaves the line, or, once a
// statement carries it, gets nothing from it if it is gone when the
// statement starts (after that, what the statement gives it is lost with
// it, until the visibility timeout ends, as for a call that runs alone);
// the statement runs to its end for the others whatever becomes of the
// call running it. The batch's runner uses its own reading of the queue's
// row (retention, redrive) for all of them: a change made meanwhile
// applies from the next statement.
//
// A fenced leader's receive (tidemq.FenceOf) goes alone, in the
// transaction that checks its fence.

// maxTakeCalls bounds the calls one statement carries (10 messages
// each at most).
const maxTakeCalls = 100

// take is one ReceiveMessage call's part of a receive statement.
type take struct {
	max    int             // messages it asks for
	vt     time.Duration   // its visibility timeout
	client string          // its client, as JSON, for the received event
	ctx    context.Context // its call's: once it ends, the call takes nothing

	// Set by the statement that carried it.
	now      time.Time  // when that statement looked
	got      []*message // the messages it received, in order
	over     []int64    // messages over maxReceiveCount, for its runner to move
	overSeen bool       // the statement met messages over maxReceiveCount
	noTarget bool       // ... and the queue had no dead-letter queue to move them to
	stuck    bool       // ... and some of them could not move yet (settleOver)
	err      error

	// lead, set by the call that ran the statement before, makes this
	// call run the next one for these calls (itself first).
	lead []*take
	done chan struct{}
}

// takeQueue is one queue's receive statements: running while one is
// under way, waiting the calls that arrived meanwhile.
type takeQueue struct {
	running bool
	waiting []*take
}

// takes gathers the receives of a node's queues, by queue id.
type takes struct {
	mu     sync.Mutex
	queues map[int64]*takeQueue

	statements atomic.Int64 // statements run, for tests
}

// round runs one receive statement for the calls of batch at now, and
// gives each its messages; an error answers them all.
type round func(ctx context.Context, now time.Time, batch []*take) error

// run receives for t from q (read by t's caller), in a statement of its
// own or of another call of this node: the call that runs one runs it
// with stmt, then after, for itself alone, before the others are
// answered (the move of what the statement left over maxReceiveCount).
// t.now is when the statement looked, read once its runner held a
// connection. A call whose ctx ends while it waits leaves the line, or,
// once a statement carries it, gets nothing from it. A call gives its
// connection (h) back to the pool while it waits; the one that runs a
// statement takes one again first.
func (g *takes) run(ctx context.Context, b *Broker, h *heldConn, q *queue, t *take, stmt round, after func(ctx context.Context) error) error {
	t.done = make(chan struct{})
	g.mu.Lock()
	if g.queues == nil {
		g.queues = map[int64]*takeQueue{}
	}
	tq := g.queues[q.id]
	if tq == nil {
		tq = &takeQueue{}
		g.queues[q.id] = tq
	}
	batch := []*take{t}
	if tq.running {
		tq.waiting = append(tq.waiting, t)
		g.mu.Unlock()
		h.release()
		if !g.await(ctx, tq, t) {
			return ctx.Err()
		}
		if t.lead == nil {
			return t.err // another call's statement carried it
		}
		batch = t.lead
	} else {
		tq.running = true
		g.mu.Unlock()
	}

	// Whatever happens here, a panic included, the queue's next
	// statement is handed on and the batch's other calls are answered.
	roundErr := errUnfinishedTake
	defer func() {
		g.handOff(q.id, tq)
		for _, o := range batch[1:] {
			o.noTarget, o.stuck = t.noTarget, t.stuck
			if o.err == nil {
				o.err = roundErr
			}
			close(o.done)
		}
	}()
	// The statement serves calls other than this one: the end of this
	// call's ctx does not cancel it. A call whose client is gone gets
	// nothing from it.
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.max, o.err = 0, err
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := h.get(sctx); err != nil {
		roundErr = err
		return err
	}
	g.statements.Add(1)
	now := b.clock.Now()
	for _, o := range batch {
		o.now = now
	}
	if roundErr = stmt(sctx, now, batch); roundErr != nil {
		return roundErr
	}
	if after != nil {
		if err := after(sctx); err != nil {
			return err
		}
	}
	return t.err
}

// errUnfinishedTake is what the calls of a statement that did not finish
// (its runner panicked) are answered.
var errUnfinishedTake = errors.New("postgres: a gathered receive statement did not finish")

// await waits until a statement carried t or t is to run the next one
// (true), or until ctx ends (false), when t leaves tq's line, unless a
// statement has taken it already: then it waits for that one, which
// gives it nothing.
func (g *takes) await(ctx context.Context, tq *takeQueue, t *take) bool {
	select {
	case <-t.done:
		return true
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(tq.waiting, t); i >= 0 {
		tq.waiting = slices.Delete(tq.waiting, i, i+1)
		g.mu.Unlock()
		return false
	}
	g.mu.Unlock()
	<-t.done
	return true
}

// handOff ends tq's running statement: the first call waiting runs the
// next one, for up to maxTakeCalls of the calls waiting; with none
// waiting, the queue is idle (and forgotten).
func (g *takes) handOff(qid int64, tq *takeQueue) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(tq.waiting) == 0 {
		tq.running = false
		delete(g.queues, qid)
		return
	}
	n := min(len(tq.waiting), maxTakeCalls)
	next := tq.waiting[:n:n]
	tq.waiting = append([]*take(nil), tq.waiting[n:]...)
	next[0].lead = next
	close(next[0].done)
}

// takeRound runs one receiveSQL on db for the calls of batch, at now,
// and gives each its messages. The messages over maxRC go to batch[0]'s
// over, and every call learns that there were some.
func (b *Broker) takeRound(ctx context.Context, db querier, q *queue, now time.Time, batch []*take, maxRC int) error {
	total := 0
	for _, t := range batch {
		total += t.max
	}
	if total == 0 {
		return nil // every call of the batch is gone
	}
	vts, clients, vtTexts := callParams(batch)
	slots := make([]int32, 0, total)
	for i, t := range batch {
		for range t.max {
			slots = append(slots, int32(i+1))
		}
	}
	rows, err := db.Query(ctx, receiveSQL, q.id, stampOf(now), total, q.cutoff(now), vts, q.name,
		clients, vtTexts, maxRC, expiredDetail, tidemq.MaxHistoryEvents, slots)
	if err != nil {
		return err
	}
	return handOut(rows, batch, batch[0])
}

// handOut reads a receive statement's rows (collectReceived) into the
// calls it ran for, in the order of the statement's slots: the messages
// over maxReceiveCount go to runner's over, for it to move, and every
// call learns that there were some.
func handOut(rows pgx.Rows, calls []*take, runner *take) error {
	got, over, err := collectReceived(rows, len(calls))
	if err != nil {
		return err
	}
	for i, t := range calls {
		t.got, t.overSeen = got[i], len(over) > 0
	}
	runner.over = over
	return nil
}

// callParams are the receive statement's arrays of the calls' own
// parameters (receiveSQL's $5, $7 and $8): their visibility timeouts,
// clients and timeout texts.
func callParams(calls []*take) (vts []int64, clients, vtTexts []string) {
	vts = make([]int64, len(calls))
	clients = make([]string, len(calls))
	vtTexts = make([]string, len(calls))
	for i, t := range calls {
		vts[i], clients[i], vtTexts[i] = int64(t.vt), t.client, t.vt.String()
	}
	return vts, clients, vtTexts
}

// heldConn is a receive's pool connection, which it gives back while it
// waits in its queue's line (takes.run), so that waiting receives hold
// none of the pool's connections: with a pool of 20, nineteen receives
// waiting would leave one for every other request of the node, and no
// statement could carry more than twenty calls.
type heldConn struct {
	pool *pgxpool.Pool
	conn *pgxpool.Conn
}

// get returns the connection, taking one from the pool if it was given
// back.
func (h *heldConn) get(ctx context.Context) (*pgxpool.Conn, error) {
	if h.conn == nil {
		c, err := h.pool.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		h.conn = c
	}
	return h.conn, nil
}

// release gives the connection back to the pool, if it is held.
func (h *heldConn) release() {
	if h.conn != nil {
		h.conn.Release()
		h.conn = nil
	}
}
