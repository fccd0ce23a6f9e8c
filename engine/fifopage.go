package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// The paged backlog of a FIFO queue (see the package comment, # Memory).
//
// A FIFO queue delivers each group in order, so its pages are per group:
// a group's page [lo, hi) is the group's messages with a sequence in the
// range that are neither in memory nor removed by the operation under way
// (page.go's backlog, one per group). A message is found by group through
// its index key g/<qid><len><group><seq> (keys.go), an empty record
// written in the batch that writes the message and deleted in the batch
// that deletes it: the message's body is written once. A page read scans
// the group's index keys in the range, then reads each message (m/) and its
// receive state (s/), in sequence order.
//
// Invariants, kept where noted:
//   - A group's pages come after its first live message in memory (or the
//     group has none in memory and no pages): fifoIndex.refresh and the
//     receive walk read the next page in (fillGroup) before anything could
//     be delivered past it. So delivery order, group blocking and the line
//     of groups (groupHeap) are what they are without paging.
//   - q.cold.n counts the paged messages of every group and
//     q.cold.oldest is the earliest enqueue stamp among them (exact:
//     coldOldest recomputes it whenever a group's can grow); q.cold has
//     no pages of its own. Paged messages count as ready (q.nReady), in
//     q.bytes and q.nDeadLettered, as a standard queue's do.
//   - The group index is exact while only binaries that write it ran on
//     the store; load rebuilds it when the checkpoint's canary says that
//     another ran (load.go).

// groupPageSize is how many messages a FIFO group's page holds, and how
// many ready messages a group keeps in memory before its later ones stay on
// disk; 0 when the engine does not page. A group's window is smaller than a
// standard queue's page: a queue may have many groups.
func (q *queue) groupPageSize() int {
	if !q.fifo || q.e.pageSize == 0 {
		return 0
	}
	return max(q.e.pageSize/16, 1)
}

// groupPagesOut reports whether m, durable and about to be published,
// stays on disk: it is ready now, and its group already has pages or a
// window of messages in memory.
func (q *queue) groupPagesOut(m *message, now time.Time) bool {
	size := q.groupPageSize()
	if size == 0 || m.availableAt > stampOf(now) || (m.ReceiveCount > 0 && m.VisibleAt > stampOf(now)) {
		return false
	}
	g := q.groups.groups[m.Group]
	return g != nil && (g.cold.n > 0 || g.hot >= size)
}

// pageOutFIFO leaves m, pending, on disk: it counts as ready, and the
// memory it took is dropped.
func (q *queue) pageOutFIFO(m *message) {
	g := q.groups.groups[m.Group]
	g.unlist(m)
	delete(q.msgs, m.seq)
	q.byAge.Delete(m)
	m.state = stateGone
	q.nReady++
	// A message has a state record once received or moved (markReceived,
	// move).
	q.pushGroup(g, m.seq, m.Enqueued, m.size(), m.DLQSource != "", m.ReceiveCount > 0 || len(m.History) > 0)
	q.groups.refresh(g)
	q.wakeOne()
}

// pushGroup adds a message to the last page of g, or starts a new one.
// state: the message may have a receive state record.
func (q *queue) pushGroup(g *group, seq uint64, enqueued stamp, size int, dead, state bool) {
	b := &g.cold
	if n := len(b.pages); n > 0 && b.pages[n-1].n < q.groupPageSize() {
		p := &b.pages[n-1]
		p.hi = seq + 1
		p.n++
		p.states = p.states || state
		p.oldest = min(p.oldest, enqueued)
		p.bytes += int64(size)
		if dead {
			p.dead++
		}
	} else {
		p := page{lo: seq, hi: seq + 1, n: 1, oldest: enqueued, bytes: int64(size), states: state}
		if dead {
			p.dead = 1
		}
		b.pages = append(b.pages, p)
	}
	if b.n == 0 || enqueued < b.oldest {
		b.oldest = enqueued
	}
	b.n++
	if q.cold.n == 0 || enqueued < q.cold.oldest {
		q.cold.oldest = enqueued
	}
	q.cold.n++
	q.cold.changed = true // the next checkpoint writes q's pages again
	q.e.ck.changes++
	q.groups.markCold(g)
	q.markBusy()
}

// fillGroup reads g's first page into memory, as ready messages.
func (q *queue) fillGroup(g *group) {
	p := g.cold.pages[0]
	q.droppedGroup(g, p) // before the read (fifocheckpoint.go)
	g.cold.pages = g.cold.pages[1:]
	g.cold.n -= p.n
	q.cold.n -= p.n
	got := 0
	q.readGroupRun(g, p, func(m *message) {
		q.warmGroup(g, m)
		got++
	})
	if got != p.n {
		panic(fmt.Sprintf("engine: page [%d, %d) of group %q of queue %s held %d messages, not %d", p.lo, p.hi, g.id, q.name, got, p.n))
	}
	q.tidyGroup(g)
}

// warmGroup puts m, read from one of g's pages, in memory as a ready
// message; it was counted as ready already.
func (q *queue) warmGroup(g *group, m *message) {
	m.durable = true
	m.state = stateReady
	m.gen++
	q.putMsg(m)
	q.byAge.ReplaceOrInsert(m)
	g.place(m)
	g.hot++
}

// tidyGroup drops g's empty pages and recomputes the oldest stamps.
func (q *queue) tidyGroup(g *group) {
	g.cold.tidy()
	if len(g.cold.pages) == 0 {
		delete(q.groups.cold, g)
	}
	q.coldOldest()
}

// coldOldest recomputes q.cold.oldest from the groups with pages.
func (q *queue) coldOldest() {
	q.cold.oldest = 0
	first := true
	for g := range q.groups.cold {
		if g.cold.n > 0 && (first || g.cold.oldest < q.cold.oldest) {
			q.cold.oldest, first = g.cold.oldest, false
		}
	}
}

// pageInGroupOne brings the paged message seq into memory, for a receipt
// handle that names it, or returns nil when no page holds it.
func (q *queue) pageInGroupOne(seq uint64) *message {
	if q.cold.n == 0 {
		return nil
	}
	v, ahead := q.ahead.records[seq]
	if !ahead {
		v = q.getRecord(prefixMessage, seq)
	}
	if v == nil {
		return nil
	}
	m, err := decodeMessage(seq, v)
	if err != nil {
		panic(fmt.Sprintf("engine: message %d/%d: %v", q.id, seq, err))
	}
	g := q.groups.groups[m.Group]
	if g == nil {
		return nil
	}
	i := g.cold.find(seq)
	if i < 0 {
		return nil
	}
	if _, gone := g.cold.gone[seq]; gone {
		return nil
	}
	if s := q.getRecord(prefixState, seq); s != nil {
		if err := decodeState(m, s); err != nil {
			panic(fmt.Sprintf("engine: message state %d/%d: %v", q.id, seq, err))
		}
	}
	if ahead {
		q.takeAhead(seq, v)
	}
	q.droppedGroup(g, g.cold.pages[i])
	g.cold.n--
	q.cold.n--
	q.warmGroup(g, m)
	q.recountGroup(g, i)
	q.groups.refresh(g)
	return m
}

// recountGroup recomputes page i of g from the store.
func (q *queue) recountGroup(g *group, i int) {
	p := &g.cold.pages[i]
	p.n, p.oldest, p.bytes, p.dead = 0, 0, 0, 0
	q.scanGroupRun(g, p.lo, p.hi, func(seq uint64) {
		enq, _, dead, size, err := peekMessageSize(q.mustRecord(prefixMessage, seq))
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
	q.tidyGroup(g)
}

// forgetInGroup records that m's records are deleted by t's batch, when m
// lies in its group's pages' span (a page read before the batch commits
// must skip it).
func (q *queue) forgetInGroup(m *message, t *txn) {
	g := q.groups.groups[m.Group]
	if g == nil || !g.cold.span(m.seq) {
		return
	}
	if g.cold.gone == nil {
		g.cold.gone = make(map[uint64]struct{})
		t.paged = append(t.paged, &g.cold)
	}
	g.cold.gone[m.seq] = struct{}{}
}

// expireGroups drops (or captures) the paged messages of a FIFO queue past
// retention. It reads only the pages whose oldest message is due.
func (e *Engine) expireGroups(q *queue, now time.Time, t *txn, capture *queue) {
	if !q.fifo || q.cold.n == 0 || q.cold.oldest.Time().Add(q.Retention).After(now) {
		return
	}
	var due []*message
	for g := range q.groups.cold {
		if g.cold.n == 0 || g.cold.oldest.Time().Add(q.Retention).After(now) {
			continue
		}
		var gdue []*message
		for i := range g.cold.pages {
			p := &g.cold.pages[i]
			if p.oldest.Time().Add(q.Retention).After(now) {
				continue
			}
			q.droppedGroup(g, *p)
			p.n, p.oldest, p.bytes, p.dead = 0, 0, 0, 0
			q.readGroupRun(g, *p, func(m *message) {
				if !p.keep(m, q.Retention, now) {
					gdue = append(gdue, m)
				}
			})
		}
		// Every due message is marked gone before any leaves: a page read
		// while they leave (a refill) must not bring one back.
		for _, m := range gdue {
			q.forgetInGroup(m, t)
			g.cold.n--
			q.cold.n--
		}
		g.cold.tidy()
		due = append(due, gdue...)
	}
	for g := range q.groups.cold {
		if len(g.cold.pages) == 0 {
			delete(q.groups.cold, g)
		}
	}
	q.coldOldest()
	slices.SortFunc(due, func(a, b *message) int { // oldest first, as in memory
		if olderFirst(a, b) {
			return -1
		}
		return 1
	})
	for _, m := range due {
		m.state = stateReady // counted as ready: remove uncounts it
		e.expire(q, m, capture, now, t)
	}
}

// coldPages returns every page of a FIFO queue's groups, with its group.
func (q *queue) coldPages() (pages []page, groups []*group) {
	for g := range q.groups.cold {
		for _, p := range g.cold.pages {
			pages = append(pages, p)
			groups = append(groups, g)
		}
	}
	return pages, groups
}

// readGroupRun calls fn with every paged message of g in page p's range,
// in sequence order, read with its receive state (when p says one of them
// may have one: the state records of a queue lie among the deletions of
// the states of messages received and deleted, which a read would walk
// over). A read error panics: the hold's guard fails the engine, which
// reloads its state from the store.
func (q *queue) readGroupRun(g *group, p page, fn func(m *message)) {
	var seqs []uint64
	q.scanGroupRun(g, p.lo, p.hi, func(seq uint64) { seqs = append(seqs, seq) })
	if len(seqs) == 0 {
		return
	}
	msgs := make([]*message, len(seqs))
	err := q.readMessages(p, seqs, func(i int, v []byte) error {
		m, err := decodeMessage(seqs[i], v)
		msgs[i] = m
		return err
	})
	if err == nil && p.states {
		keys := make([][]byte, len(seqs))
		for i, seq := range seqs {
			keys[i] = seqKey(prefixState, q.id, seq)
		}
		err = storage.ReadEach(q.e.store, keys, func(i int, v []byte) error {
			if msgs[i] == nil {
				return nil
			}
			return decodeState(msgs[i], v)
		})
	}
	if err != nil {
		panic(fmt.Sprintf("engine: read the backlog of queue %s: %v", q.name, err))
	}
	for i, m := range msgs {
		if m == nil {
			panic(fmt.Sprintf("engine: the group index of queue %s names message %d, which is not in the store", q.name, seqs[i]))
		}
		fn(m)
	}
}

// scanGroupRun visits the sequences of g's paged messages in [lo, hi):
// those of its index keys that are not in memory nor removed by the
// operation under way.
func (q *queue) scanGroupRun(g *group, lo, hi uint64, fn func(seq uint64)) {
	var seqs []uint64
	err := storage.ScanRange(q.e.store, groupKey(q.id, g.id, lo), groupKey(q.id, g.id, hi), func(k, _ []byte) error {
		seq, ok := groupKeySeq(k)
		if !ok {
			return errCorrupt
		}
		if _, hot := q.msgs[seq]; hot {
			return nil
		}
		if _, gone := g.cold.gone[seq]; gone {
			return nil
		}
		seqs = append(seqs, seq)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("engine: read the backlog of queue %s: %v", q.name, err))
	}
	for _, seq := range seqs {
		fn(seq)
	}
}

// getRecord returns the record of seq under prefix (m/ or s/), or nil.
func (q *queue) getRecord(prefix string, seq uint64) []byte {
	k := seqKey(prefix, q.id, seq)
	var out []byte
	err := storage.ScanRange(q.e.store, k, append(k, 0), func(_, v []byte) error {
		out = append([]byte(nil), v...)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("engine: read the backlog of queue %s: %v", q.name, err))
	}
	return out
}

// mustRecord is getRecord for a record that the group index names: its
// absence means the index is damaged.
func (q *queue) mustRecord(prefix string, seq uint64) []byte {
	v := q.getRecord(prefix, seq)
	if v == nil {
		panic(fmt.Sprintf("engine: the group index of queue %s names message %d, which is not in the store", q.name, seq))
	}
	return v
}
