package postgres

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/tidemq/tidemq"
)

// Group commit. The standard sends and the deletes of a node that arrive
// while earlier ones are being written are gathered into one statement
// (commitSQL), so one transaction and one WAL flush carry them all, as
// river's completer batches job completions and as the embedded store
// groups its fsyncs. committers writers each take the first waiting
// request, then every request already waiting behind it (up to
// maxGroupRows rows), and write them: under light load a request goes
// alone at once, under heavy load the requests that arrived during the
// previous write (about a millisecond) go together. A request is
// answered only after the statement that carries it committed.
//
// One request's failure must not fail the others of its group: when the
// group's statement fails (a queue deleted meanwhile breaks its foreign
// key), each request is written again on its own.
//
// One writer a node: once the announcements left the writes' transactions
// (announce.go), one writer whose groups gather everything that arrived
// during its previous commit moved more than four writing side by side,
// which split the same requests into smaller groups, more commits and
// more counter rows (queue_depth is sharded by backend). Side by side on
// fresh databases, 16 clients, quiet machine, one writer against four
// (medians of three rounds): SendMessage 1.84x, receive + DeleteMessage
// 1.53x, SendMessageBatch 1.55x, receive + DeleteMessageBatch 1.03x; two
// writers fell between.
const (
	committers   = 1
	maxGroupRows = 1000
)

// sendRows are a standard send's messages, as arrays.
type sendRows struct {
	qid     int64
	sender  string
	ids     []string
	bodies  []string
	attrs   [][]byte
	sys     [][]byte
	delays  []int64
	groups  []string // MessageGroupId, "" for none (a standard queue keeps and returns it)
	sizes   []int    // each message's size (tidemq.MessageSize), written with it
	notify  string   // the queue's name
	written int64    // how many were inserted
}

// deleteRows are a delete's handles, as arrays.
type deleteRows struct {
	qid    int64
	fifo   bool
	name   string
	seqs   []int64
	counts []int32
	gone   []int64 // the seqs deleted
}

// writeReq is one request for the group.
type writeReq struct {
	send *sendRows
	// more are the other queues' rows of a send to several queues
	// (SendToQueues): in the same statement as send, so all or none.
	more []*sendRows
	del  *deleteRows
	done chan error
	// full is set when the group's statement refused the request's send
	// (--max-queue-bytes, queuebytes.go): nothing of it was written.
	full error
}

// sends are the request's send rows, one per queue.
func (r *writeReq) sends() []*sendRows {
	if r.send == nil {
		return nil
	}
	return append([]*sendRows{r.send}, r.more...)
}

func (r *writeReq) rows() int {
	n := 0
	for _, s := range r.sends() {
		n += len(s.ids)
	}
	if r.del != nil {
		n += len(r.del.seqs)
	}
	return n
}

// commitSQL writes a group: the sends' messages ($1-$7, $14 and $15, each
// its queue's id, sender, message id, body, attributes, system attributes,
// delay, group id and size), and
// the deletes' handles ($9-$13: queue id, seq, receive count, FIFO, queue
// name; a FIFO queue's handle only of its latest receive while in flight
// at $8). It returns the number of messages inserted by queue and the
// deleted messages. The queues that got messages or had a FIFO message
// deleted (which may unlock a group) are announced after the commit
// (announce.go), not in it.
//
// With --max-queue-bytes (Options.MaxQueueBytes), commitLimitedSQL writes
// it instead (queueBytesSQL): the same statement, whose sends to a full
// queue are left out.
//
// A group of sends alone runs commitSendsSQL, and one of deletes alone
// commitDeletesSQL: the same statement without the other's write, whose
// statement trigger (queue_depth, migrations/0007_queue_depth.sql) would
// otherwise run for no row in every commit of such a group.
var (
	commitSQL        = commitStatement(false, true, true)
	commitSendsSQL   = commitStatement(false, true, false)
	commitDeletesSQL = commitStatement(false, false, true)
)

// commitLimitedSQL is commitSQL with the check of --max-queue-bytes:
// $16 is the place of each message's request in the group,
// $17 the limit. It returns, besides, the requests it refused with the
// queue and its bytes that refused each.
var commitLimitedSQL = commitStatement(true, true, true)

// commitStatement is commitSQL; with --max-queue-bytes when limited;
// without the insert unless sends, without the delete unless deletes (each
// then a CTE of no row; s and h stay, whose casts type the parameters
// but $8, which the write left types).
func commitStatement(limited, sends, deletes bool) string {
	// The limited statement reads each message's request too ($16, req).
	req, reqCol, from, full, refused := ``, ``, `s`, ``, ``
	if limited {
		req, reqCol = `, $16::integer[]`, `, req`
		from = `s WHERE s.req <> ALL (ARRAY(SELECT req FROM f))`
		full = `,
	` + queueBytesSQL
		refused = `, coalesce((SELECT array_agg(req) FROM f), '{}'), coalesce((SELECT array_agg(qid) FROM f), '{}'),
		coalesce((SELECT array_agg(bytes) FROM f), '{}')`
	}
	ins := `
		INSERT INTO messages (queue_id, seq, message_id, body, attrs, sys_attrs, group_id, sender, sent_at, enqueued_at, visible_at, size)
		SELECT qid, nextval('message_seq'), id, body, attrs, sys, grp, sender, $8, $8, $8 + delay, size FROM ` + from + ` ORDER BY n
		RETURNING queue_id`
	if !sends {
		ins = `SELECT NULL::bigint AS queue_id WHERE false`
	}
	del := `
		DELETE FROM messages m USING h WHERE m.queue_id = h.qid AND m.seq = h.seq AND m.receive_count >= h.count
			AND (NOT h.fifo OR (m.receive_count = h.count AND m.visible_at > $8))
		RETURNING m.queue_id, m.seq`
	if !deletes {
		del = `SELECT NULL::bigint AS queue_id, NULL::bigint AS seq WHERE false`
	}
	return `WITH s AS (
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bytea[], $6::bytea[], $7::bigint[], $14::text[],
				$15::bigint[]` + req + `)
			WITH ORDINALITY AS s(qid, sender, id, body, attrs, sys, delay, grp, size` + reqCol + `, n))` + full + `,
	ins AS (` + ins + `),
	h AS (SELECT * FROM unnest($9::bigint[], $10::bigint[], $11::integer[], $12::boolean[], $13::text[]) AS h(qid, seq, count, fifo, name)),
	d AS (` + del + `)
	SELECT coalesce((SELECT array_agg(queue_id) FROM ins), '{}'),
		coalesce((SELECT array_agg(queue_id) FROM d), '{}'), coalesce((SELECT array_agg(seq) FROM d), '{}')` + refused
}

// groupCommit runs the committers until the broker closes.
type groupCommit struct {
	reqs    chan *writeReq
	once    sync.Once
	running sync.WaitGroup
	stopped chan struct{} // closed once every committer returned
	// statements counts the group statements run (tests).
	statements atomic.Int64
}

// submit writes r with the next group and waits for its commit.
func (b *Broker) submit(ctx context.Context, r *writeReq) error {
	if _, ok := tidemq.FenceOf(ctx); ok {
		// A leader's write is checked against its lease in its own
		// transaction (fence.go), so it never joins a group: a group's
		// statement carries no fence, and a stale leader's delete must
		// not ride along with other nodes' requests.
		group := []*writeReq{r}
		if err := b.inTx(ctx, func(tx pgx.Tx) error { return b.writeRows(ctx, tx, group) }); err != nil {
			return err
		}
		b.announceGroup(group)
		return nil
	}
	b.group.once.Do(func() {
		b.group.reqs = make(chan *writeReq, 1024)
		b.group.stopped = make(chan struct{})
		b.group.running.Add(committers)
		b.wg.Add(committers)
		for i := 0; i < committers; i++ {
			go b.commitLoop()
		}
		go func() { b.group.running.Wait(); close(b.group.stopped) }()
	})
	r.done = make(chan error, 1)
	select {
	case b.group.reqs <- r:
	case <-b.closing:
		return b.refusal()
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once handed over, the write happens whatever the client does: wait
	// for it, so that the answer says what was written. A request handed
	// over after the committers drained at Close is refused.
	select {
	case err := <-r.done:
		return err
	case <-b.group.stopped:
		select {
		case err := <-r.done:
			return err
		default:
			return b.refusal()
		}
	}
}

func (b *Broker) commitLoop() {
	defer b.wg.Done()
	defer b.group.running.Done()
	for {
		var first *writeReq
		select {
		case first = <-b.group.reqs:
		case <-b.closing:
			// Requests handed over before the close are still written.
			for {
				select {
				case r := <-b.group.reqs:
					b.commitGroup([]*writeReq{r})
				default:
					return
				}
			}
		}
		group := []*writeReq{first}
		rows := first.rows()
	gather:
		for rows < maxGroupRows {
			select {
			case r := <-b.group.reqs:
				group = append(group, r)
				rows += r.rows()
			default:
				break gather
			}
		}
		b.commitGroup(group)
	}
}

// commitGroup writes a group in one statement, or, when that fails, each
// request on its own.
func (b *Broker) commitGroup(group []*writeReq) {
	err := b.writeGroup(group)
	if err != nil && len(group) > 1 {
		for _, r := range group {
			b.commitGroup([]*writeReq{r})
		}
		return
	}
	if err == nil {
		b.announceGroup(group)
	}
	for _, r := range group {
		r.done <- err
	}
}

func (b *Broker) writeGroup(group []*writeReq) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return b.writeRows(ctx, conn, group)
}

// writeRows writes group's rows in one statement on db, which the caller
// holds, and tells each request what it wrote.
func (b *Broker) writeRows(ctx context.Context, db querier, group []*writeReq) error {
	var (
		sq                   []int64
		senders, ids, bodies []string
		attrs, sys           [][]byte
		delays               []int64
		groups               []string
		dq, dseq             []int64
		dcount               []int32
		dfifo                []bool
		dname                []string
		sizes                []int64
		reqs                 []int32
	)
	limited := b.maxQueueBytes > 0
	for i, r := range group {
		r.full = nil
		for _, s := range r.sends() {
			for j := range s.ids {
				sq = append(sq, s.qid)
				senders = append(senders, s.sender)
				sizes = append(sizes, int64(s.sizes[j]))
				if limited {
					reqs = append(reqs, int32(i))
				}
			}
			ids, bodies = append(ids, s.ids...), append(bodies, s.bodies...)
			attrs, sys, delays = append(attrs, s.attrs...), append(sys, s.sys...), append(delays, s.delays...)
			for j := range s.ids { // every message a group id, "" when none was given
				g := ""
				if j < len(s.groups) {
					g = s.groups[j]
				}
				groups = append(groups, g)
			}
		}
		if d := r.del; d != nil {
			for range d.seqs {
				dq = append(dq, d.qid)
				dfifo = append(dfifo, d.fifo)
				dname = append(dname, d.name)
			}
			dseq, dcount = append(dseq, d.seqs...), append(dcount, d.counts...)
		}
	}
	now := stampOf(b.clock.Now()) // once the connection is ours
	b.group.statements.Add(1)
	var inserted, goneQ, goneSeq []int64 // inserted: every row's queue id; a group inserts all or nothing
	var fullReq []int32
	var fullQ, fullBytes []int64
	if !limited {
		sql := commitSQL
		switch {
		case len(dseq) == 0:
			sql = commitSendsSQL
		case len(sq) == 0:
			sql = commitDeletesSQL
		}
		if err := db.QueryRow(ctx, sql, sq, senders, ids, bodies, attrs, sys, delays, now,
			dq, dseq, dcount, dfifo, dname, groups, sizes).Scan(&inserted, &goneQ, &goneSeq); err != nil {
			return err
		}
	} else if err := db.QueryRow(ctx, commitLimitedSQL, sq, senders, ids, bodies, attrs, sys, delays, now,
		dq, dseq, dcount, dfifo, dname, groups, sizes, reqs, b.maxQueueBytes).Scan(&inserted, &goneQ, &goneSeq,
		&fullReq, &fullQ, &fullBytes); err != nil {
		return err
	}
	for k, i := range fullReq {
		r := group[i]
		if r.full != nil {
			continue // refused for another of its queues too: the first found says why
		}
		for _, s := range r.sends() {
			if s.qid == fullQ[k] {
				r.full = b.queueFull(s.notify, fullBytes[k])
				break
			}
		}
	}
	gone := map[[2]int64]bool{}
	for i := range goneQ {
		gone[[2]int64{goneQ[i], goneSeq[i]}] = true
	}
	for _, r := range group {
		for _, s := range r.sends() {
			s.written = int64(len(s.ids))
			if r.full != nil {
				s.written = 0
			}
		}
		if d := r.del; d != nil {
			d.gone = d.gone[:0]
			for _, seq := range d.seqs {
				if k := [2]int64{d.qid, seq}; gone[k] {
					delete(gone, k) // a handle given twice deletes once
					d.gone = append(d.gone, seq)
				}
			}
		}
	}
	return nil
}

// announceGroup announces, after its commit, the queues of group that got
// messages or had a FIFO message deleted (which may unlock its group).
func (b *Broker) announceGroup(group []*writeReq) {
	var names []string
	for _, r := range group {
		for _, s := range r.sends() {
			if s.written > 0 {
				names = append(names, s.notify)
			}
		}
		if d := r.del; d != nil && d.fifo && len(d.gone) > 0 {
			names = append(names, d.name)
		}
	}
	b.announce(names...)
}
