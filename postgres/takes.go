package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tidemq/tidemq"
)

// Gathered receives. The ReceiveMessage calls on one standard queue that
// arrive while a receive statement of that queue is running on this node
// wait for it, and then go together in one receiveSQL, which picks as
// many messages as they asked for in all and hands the k-th to the call
// its slot names: each call gets what it would have got alone, in turn,
// with its own visibility timeout. So sixteen consumers of one queue make
// a few statements of many rows instead of sixteen of ten that skip each
// other's locks: measured with pgbench on one database, the receive
// statement moved 9,700–11,900 rows/s as 16 clients of 10 rows and
// 36,000–40,800 as 2 clients of 80 (docs/performance.md, stop 41).
//
// No goroutine of its own: the call that finds the queue idle runs the
// statement on its connection; when it is done, the first call that
// waited behind it runs the next one with everything waiting then (up to
// maxTakeCalls calls), and so on, so every call runs at most one
// statement and a queue's receives never wait for more than the one
// running. Messages over maxReceiveCount that a statement meets are
// moved by the call that ran it before the others are answered, so a call
// that then looks again alone does not meet them.
//
// A fenced leader's receive (tidemq.FenceOf) goes alone, in the
// transaction that checks its fence.

// maxTakeCalls bounds the calls one statement carries (10 messages
// each at most).
const maxTakeCalls = 100

// take is one ReceiveMessage call's part of a receive statement.
type take struct {
	max    int           // messages it asks for
	vt     time.Duration // its visibility timeout
	client string        // its client, as JSON, for the received event

	// Set by the statement that carried it.
	now      time.Time  // when that statement looked
	got      []*message // the messages it received, in order
	over     []int64    // messages over maxReceiveCount, for its runner to move
	overSeen bool       // the statement met messages over maxReceiveCount
	noTarget bool       // ... and the queue had no dead-letter queue to move them to
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

// takes gathers the receives of a node's standard queues, by queue id.
type takes struct {
	mu     sync.Mutex
	queues map[int64]*takeQueue

	statements atomic.Int64 // statements run, for tests
}

// run receives for t from q (read by t's caller) on conn, in a statement
// of its own or of another call of this node, and moves what the
// statement left over maxReceiveCount (counted in r, of the call that ran
// it). t.now is when the statement looked.
func (g *takes) run(ctx context.Context, b *Broker, conn *pgxpool.Conn, q *queue, t *take, maxRC int, r *received) error {
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
		<-t.done
		if t.lead == nil {
			return t.err // another call's statement carried it
		}
		batch = t.lead
	} else {
		tq.running = true
		g.mu.Unlock()
	}

	// The statement serves calls other than this one: a client that goes
	// away does not cancel it (what it received comes back after its
	// visibility timeout, as when an answer is lost).
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	g.statements.Add(1)
	now := b.clock.Now()
	for _, o := range batch {
		o.now = now
	}
	err := b.takeRound(sctx, conn, q, now, batch, maxRC)
	var settled error
	if err == nil {
		settled = b.settleOver(sctx, conn, q, t, r)
	}
	g.handOff(q.id, tq)
	for _, o := range batch {
		if o != t {
			o.noTarget, o.err = t.noTarget, err
			close(o.done)
		}
	}
	if err != nil {
		return err
	}
	return settled
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
	vts := make([]int64, len(batch))
	clients := make([]string, len(batch))
	vtTexts := make([]string, len(batch))
	for i, t := range batch {
		total += t.max
		vts[i], clients[i], vtTexts[i] = int64(t.vt), t.client, t.vt.String()
	}
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
	got, over, err := collectReceived(rows, len(batch))
	if err != nil {
		return err
	}
	for i, t := range batch {
		t.got, t.overSeen = got[i], len(over) > 0
	}
	batch[0].over = over
	return nil
}
