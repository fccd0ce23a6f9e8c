package engine

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// The paged backlog of a standard queue (see the package comment, # Memory).

// DefaultPageSize is the page size `tidemq serve` uses on its disk store:
// how many backlog messages one page-in reads, and how many ready messages
// a standard queue keeps in memory before its later ones stay on disk.
const DefaultPageSize = 4096

// page is a run of a standard queue's ready messages kept only in the
// store: every message with a record in [lo, hi) that is not in memory
// (queue.msgs) and not removed by the operation under way (backlog.gone).
// Hot messages of the range (delayed, in flight, or paged in by a receipt
// handle) are not part of it.
type page struct {
	lo, hi uint64
	n      int   // messages in the page
	oldest stamp // the earliest enqueue stamp among them
	bytes  int64 // their size (message.size): their share of queue.bytes
	dead   int   // how many of them were dead-lettered (queue.nDeadLettered)
	// states: some of them may have a receive state (s/): a FIFO page
	// read skips the state records when none can (fifopage.go).
	states bool
}

// keep counts m into p, recounted by a retention pass, when m is still
// within retention at now; it returns false for a message that is due.
func (p *page) keep(m *message, retention time.Duration, now time.Time) bool {
	if !m.Enqueued.Time().Add(retention).After(now) {
		return false
	}
	if p.n == 0 || m.Enqueued < p.oldest {
		p.oldest = m.Enqueued
	}
	p.n++
	p.bytes += int64(m.size())
	if m.DLQSource != "" {
		p.dead++
	}
	return true
}

// backlog is a standard queue's paged messages. They are ready messages
// (they count in queue.nReady) that are in no in-memory index.
//
// The store, the page size and the checkpoint bookkeeping are the
// engine's (queue.e, queue.pageSize): a queue keeps only its pages.
type backlog struct {
	// pages are in sequence order, disjoint: pages[0] is paged in next.
	pages  []page
	n      int   // messages in pages
	oldest stamp // the earliest page oldest (while n > 0)
	// gone are sequences in the pages' span removed by the operation under
	// way: the batch that deletes their records is not committed yet, so a
	// read would still find them. finish clears it once the batch commits.
	gone map[uint64]struct{}
	// changed: pages were added, extended or dropped since the last
	// checkpoint, which rewrites this queue's pages (and only then).
	changed bool
}

// span reports whether seq lies in the pages' range.
func (b *backlog) span(seq uint64) bool {
	return len(b.pages) > 0 && seq >= b.pages[0].lo && seq < b.pages[len(b.pages)-1].hi
}

// find returns the index of the page whose range holds seq, or -1.
func (b *backlog) find(seq uint64) int {
	i, _ := slices.BinarySearchFunc(b.pages, seq, func(p page, seq uint64) int {
		if p.hi <= seq {
			return -1
		}
		return 1
	})
	if i < len(b.pages) && b.pages[i].lo <= seq {
		return i
	}
	return -1
}

// push adds a message to the last page of q's backlog, or starts a new
// one.
func (q *queue) push(seq uint64, enqueued stamp, size int, dead bool) {
	b := &q.cold
	if n := len(b.pages); n > 0 && b.pages[n-1].n < q.pageSize() {
		p := &b.pages[n-1]
		p.hi = seq + 1
		p.n++
		p.oldest = min(p.oldest, enqueued)
		p.bytes += int64(size)
		if dead {
			p.dead++
		}
	} else {
		p := page{lo: seq, hi: seq + 1, n: 1, oldest: enqueued, bytes: int64(size)}
		if dead {
			p.dead = 1
		}
		b.pages = append(b.pages, p)
	}
	if b.n == 0 || enqueued < b.oldest {
		b.oldest = enqueued
	}
	b.n++
	b.changed = true
	q.e.ck.changes++
	q.markBusy()
}

// dropped records that page p of q's backlog, its numbers or messages,
// are no longer what the last checkpoint says of them (checkpoint.go).
func (q *queue) dropped(p page) {
	q.cold.changed = true
	q.e.ck.drop(q.id, p)
}

// drop removes the empty pages and recomputes oldest.
func (b *backlog) tidy() {
	b.pages = slices.DeleteFunc(b.pages, func(p page) bool { return p.n == 0 })
	b.oldest = 0
	for i, p := range b.pages {
		if i == 0 || p.oldest < b.oldest {
			b.oldest = p.oldest
		}
	}
}

// reset forgets every page (their records are deleted by the caller).
func (b *backlog) reset() {
	b.pages, b.n, b.oldest, b.gone = nil, 0, 0, nil
	b.changed = true // the caller deletes the queue's checkpoint pages too
}

// pagesOut reports whether m, durable and about to be published, stays on
// disk: it is ready now, and the queue already has a backlog on disk or a
// full page of ready messages in memory.
func (q *queue) pagesOut(m *message, now time.Time) bool {
	size := q.pageSize()
	if size == 0 || m.availableAt > stampOf(now) || (m.ReceiveCount > 0 && m.VisibleAt > stampOf(now)) {
		return false
	}
	return q.cold.n > 0 || q.nReady-q.cold.n >= size
}

// pageOut leaves m, pending, on disk: it counts as ready, and the memory
// it took is dropped.
func (q *queue) pageOut(m *message) {
	delete(q.msgs, m.seq)
	q.byAge.Delete(m)
	m.state = stateGone
	q.nReady++
	q.push(m.seq, m.Enqueued, m.size(), m.DLQSource != "")
	q.wakeOne()
}

// nextReady returns the ready message with the lowest sequence, paging in
// the next page when its messages come before every ready message in
// memory: a standard queue delivers in sequence order, paged or not.
func (q *queue) nextReady() *message {
	m := q.ready.top(q.msgs)
	if q.cold.n > 0 && (m == nil || q.cold.pages[0].lo < m.seq) {
		p := q.cold.pages[0]
		q.dropped(p)
		q.cold.pages = slices.Delete(q.cold.pages, 0, 1)
		q.cold.n -= p.n
		got := 0
		q.readRun(p.lo, p.hi, func(m *message) {
			q.warm(m)
			got++
		})
		if got != p.n {
			panic(fmt.Sprintf("engine: page [%d, %d) of queue %s held %d messages, not %d", p.lo, p.hi, q.name, got, p.n))
		}
		q.cold.tidy()
		m = q.ready.top(q.msgs)
	}
	return m
}

// warm puts m, read from a page, in memory as a ready message; it was
// counted as ready already.
func (q *queue) warm(m *message) {
	m.durable = true
	m.state = stateReady
	m.gen++
	q.putMsg(m)
	q.byAge.ReplaceOrInsert(m)
	q.ready.add(m, q.msgs, q.nReady-q.cold.n)
}

// pageInOne brings the paged message seq into memory, for a receipt handle
// that names it, or returns nil when no page holds it.
func (q *queue) pageInOne(seq uint64) *message {
	i := q.cold.find(seq)
	if i < 0 {
		return nil
	}
	var m *message
	q.readRun(seq, seq+1, func(x *message) { m = x })
	if m == nil {
		return nil
	}
	q.cold.n--
	q.dropped(q.cold.pages[i])
	q.warm(m)
	q.recount(i)
	return m
}

// recount recomputes page i from the store (its oldest may have left it).
func (q *queue) recount(i int) {
	p := &q.cold.pages[i]
	p.n, p.oldest, p.bytes, p.dead = 0, 0, 0, 0
	q.scanRun(prefixMessage, p.lo, p.hi, func(seq uint64, v []byte) {
		enq, _, dead, size, err := peekMessageSize(v)
		if err != nil {
			panic(fmt.Sprintf("engine: message %d/%d: %v", q.id, seq, err))
		}
		if p.n == 0 || enq < p.oldest {
			p.oldest = enq
		}
		p.n++
		p.bytes += int64(size)
		if dead {
			p.dead++
		}
	})
	q.cold.tidy()
}

// expirePaged drops (or captures) the paged messages past retention. It
// reads only the pages whose oldest message is due.
func (e *Engine) expirePaged(q *queue, now time.Time, t *txn, capture *queue) {
	b := &q.cold
	if b.n == 0 || b.oldest.Time().Add(q.Retention).After(now) {
		return
	}
	for i := range b.pages {
		p := &b.pages[i]
		if p.oldest.Time().Add(q.Retention).After(now) {
			continue
		}
		q.dropped(*p)
		p.n, p.oldest, p.bytes, p.dead = 0, 0, 0, 0
		var due []*message
		q.readRun(p.lo, p.hi, func(m *message) {
			if !p.keep(m, q.Retention, now) {
				due = append(due, m)
			}
		})
		for _, m := range due {
			b.n--
			m.state = stateReady // counted as ready: remove uncounts it
			e.expire(q, m, capture, now, t)
		}
	}
	b.tidy()
}

// peekPaged returns up to max paged messages, oldest first (by enqueue
// time, then sequence). It reads the pages in the order of their oldest
// message and stops at the first page that cannot hold an older one.
func (q *queue) peekPaged(max int) []*message {
	pages := q.cold.pages
	var groups []*group // a FIFO queue's pages are its groups' (fifopage.go)
	if q.fifo {
		pages, groups = q.coldPages()
	}
	order := make([]int, len(pages))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(pages[a].oldest, pages[b].oldest) })
	var out []*message
	for _, i := range order {
		p := pages[i]
		if len(out) >= max && out[max-1].Enqueued < p.oldest {
			break
		}
		if groups != nil {
			q.readGroupRun(groups[i], p, func(m *message) { out = append(out, m) })
		} else {
			q.readRun(p.lo, p.hi, func(m *message) { out = append(out, m) })
		}
		slices.SortFunc(out, func(a, b *message) int {
			if olderFirst(a, b) {
				return -1
			}
			return 1
		})
		if len(out) > max {
			out = out[:max]
		}
	}
	return out
}

// readRun calls fn with every paged message in [lo, hi), in sequence
// order, read with its receive state. A read error panics: the hold's
// guard fails the engine, which reloads its state from the store.
func (q *queue) readRun(lo, hi uint64, fn func(m *message)) {
	states := make(map[uint64][]byte)
	q.scanRun(prefixState, lo, hi, func(seq uint64, v []byte) { states[seq] = append([]byte(nil), v...) })
	q.scanRun(prefixMessage, lo, hi, func(seq uint64, v []byte) {
		m, err := decodeMessage(seq, v)
		if err == nil && states[seq] != nil {
			err = decodeState(m, states[seq])
		}
		if err != nil {
			panic(fmt.Sprintf("engine: message %d/%d: %v", q.id, seq, err))
		}
		fn(m)
	})
}

// scanRun visits the records under prefix in [lo, hi) of the paged
// messages: those not in memory nor removed by the operation under way.
func (q *queue) scanRun(prefix string, lo, hi uint64, fn func(seq uint64, v []byte)) {
	err := storage.ScanRange(q.e.store, seqKey(prefix, q.id, lo), seqKey(prefix, q.id, hi), func(k, v []byte) error {
		_, seq, ok := parseSeqKey(prefix, k)
		if !ok {
			return errCorrupt
		}
		if _, hot := q.msgs[seq]; hot {
			return nil
		}
		if _, gone := q.cold.gone[seq]; gone {
			return nil
		}
		fn(seq, v)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("engine: read the backlog of queue %s: %v", q.name, err))
	}
}

// forget records that m's records are deleted by t's batch, when m lies in
// the pages' span (a page read before the batch commits must skip it).
func (q *queue) forget(seq uint64, t *txn) {
	if !q.cold.span(seq) {
		return
	}
	if q.cold.gone == nil {
		q.cold.gone = make(map[uint64]struct{})
		t.paged = append(t.paged, &q.cold)
	}
	q.cold.gone[seq] = struct{}{}
}

// peekMessage reads what paging needs of a message record without
// decoding the rest: its enqueue and end-of-delay stamps, and whether it
// was dead-lettered.
func peekMessage(b []byte) (enqueued, availableAt stamp, deadLettered bool, err error) {
	enqueued, availableAt, deadLettered, _, err = peekMessageSize(b)
	return enqueued, availableAt, deadLettered, err
}

// peekMessageSize is peekMessage with the message's size (message.size).
func peekMessageSize(b []byte) (enqueued, availableAt stamp, deadLettered bool, size int, err error) {
	enqueued, availableAt, deadLettered, size, _, err = peekRecord(b)
	return enqueued, availableAt, deadLettered, size, err
}

// peekRecord is peekMessageSize with the message's group.
func peekRecord(b []byte) (enqueued, availableAt stamp, deadLettered bool, size int, group string, err error) {
	if len(b) == 0 || b[0] != recordVersion {
		return 0, 0, false, 0, "", errCorrupt
	}
	d := decoder{b: b[1:]}
	d.raw() // id
	size = len(d.raw()) + d.skipAttrs()
	d.skipAttrs()
	group = string(d.raw())
	d.raw() // deduplication id
	d.raw() // sender
	d.int() // sent
	enqueued = stamp(d.int())
	availableAt = stamp(d.int())
	deadLettered = len(d.raw()) > 0
	if d.err != nil {
		return 0, 0, false, 0, "", d.err
	}
	return enqueued, availableAt, deadLettered, size, group, nil
}

// peekState reads the receive count and the deadlines of a state record
// into m, without its history.
func peekState(m *message, b []byte) error {
	d, err := decodeStateHead(m, b)
	if err != nil {
		return err
	}
	return d.err
}

// skipAttrs passes over a set of attributes and returns their size as
// tidemq.MessageSize counts it (a value is a string or a binary one).
func (d *decoder) skipAttrs() int {
	n := d.uint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errCorrupt
	}
	size := 0
	for i := uint64(0); i < n && d.err == nil; i++ {
		size += len(d.raw()) + len(d.raw()) + len(d.raw()) + len(d.raw())
	}
	return size
}
