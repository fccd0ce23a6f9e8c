package engine

import (
	"time"

	"github.com/google/btree"

	"github.com/tidemq/tidemq"
)

// queue is one queue's state. Everything here is guarded by Engine.mu.
//
// An empty queue is most of what a server with many queues holds (issue
// 25: 100,000 of them), so what every queue of an engine shares is not
// copied into each: the engine (its store, receipt secret, page size and
// checkpoint state) is one pointer, the ARN is made from the name when
// asked for (arn), and the parsed settings are shared, like attrs, by the
// queues whose attributes are the same.
type queue struct {
	e    *Engine
	id   uint64
	name string
	fifo bool
	// busy: q is in e.busy, the queues the sweep visits (markBusy).
	busy  bool
	attrs map[string]string // settable attributes, normalised
	tags  map[string]string
	// Instants as stamps (8 bytes each, not 24: they are in every queue).
	created  stamp
	modified stamp
	purged   stamp // the last purge, for the 60-second cooldown

	// Parsed from attrs by applyAttributes; shared by the queues whose
	// attrs are the same (attrSets), so never written through.
	*tidemq.QueueSettings

	// msgs, tags, dedup and attempts are nil until their first entry
	// (readable as empty; written through q.put... or after a nil check):
	// with 100,000 queues, four empty maps each took 22 MB.
	msgs    map[uint64]*message // every live message, by sequence
	nextSeq uint64
	// seqLimit is the sequence counter as the store has it: nextSeq
	// stays at or below it (seqcounter.go).
	seqLimit uint64
	// pending are created messages waiting for their batch to be durable,
	// in sequence order; publish releases them in that order.
	pending []*message

	ready  readyHeap  // standard queues: receivable messages
	groups *fifoIndex // FIFO queues: message groups
	timers timerHeap  // delay and visibility deadlines
	byAge  ageIndex
	// cold is a standard queue's backlog on disk (page.go): ready
	// messages that are in none of the indexes above. Of a FIFO queue,
	// whose pages are its groups' (fifopage.go), it keeps only n, the
	// paged messages of every group, and oldest, the earliest enqueue
	// stamp among them.
	cold backlog

	// *gauges are the counts and counters (nReady, nDelayed, nInflight,
	// nDeadLettered, stats), in the engine's table (gauges.go).
	*gauges
	// bytes is the size of every live message (message.size), paged ones
	// included: what --max-queue-bytes limits.
	bytes int64

	// ahead are message records of a FIFO queue's pages, read ahead of
	// their groups' page reads (readahead.go).
	ahead readAhead

	// windows are a FIFO queue's deduplication window and receive
	// attempts; nil until the first entry (q.win).
	windows *fifoWindows

	// waiters are the long polls waiting on this queue, oldest first (see
	// waiters.go).
	waiters []*waiter

	lastReceive stamp // the latest ReceiveMessage call on this queue
	// expiredUnlogged counts expiries since the last sweep logged them.
	expiredUnlogged int
}

func olderFirst(a, b *message) bool {
	if a.Enqueued != b.Enqueued {
		return a.Enqueued < b.Enqueued
	}
	return a.seq < b.seq
}

// ageNodes is the free list of every queue's byAge tree: one per tree
// took 300 bytes of every queue, empty or not (it has its own lock).
var ageNodes = btree.NewFreeListG[*message](btree.DefaultFreeListSize)

// count returns q's counters, making them on first use.
func (q *queue) count() *tidemq.QueueStats {
	if q.stats == nil {
		q.stats = new(tidemq.QueueStats)
	}
	return q.stats
}

// counts returns a copy of q's counters.
func (q *queue) counts() tidemq.QueueStats {
	if q.stats == nil {
		return tidemq.QueueStats{}
	}
	return *q.stats
}

// fifoWindows is what a FIFO queue remembers for a while: the
// deduplication window and the receive attempts it may answer again.
type fifoWindows struct {
	dedup      map[string]*dedupEntry
	dedupOrder []*dedupEntry // by expiry (the window is constant)
	attempts   map[string]*receiveAttempt
	// attemptOrder holds attempts by expiry (the TTL is constant).
	attemptOrder []*receiveAttempt
}

// addDedup opens d's deduplication window.
func (w *fifoWindows) addDedup(d *dedupEntry) {
	if w.dedup == nil {
		w.dedup = make(map[string]*dedupEntry)
	}
	w.dedup[d.key] = d
	w.dedupOrder = append(w.dedupOrder, d)
}

// loadDedup is addDedup for a record read at start-up: of two records of
// one key (a d/ and a w/ one, after a downgrade and an upgrade), the one
// whose window ends later answers; both end in order.
func (w *fifoWindows) loadDedup(d *dedupEntry) {
	if old := w.dedup[d.key]; old != nil && old.expires.After(d.expires) {
		w.dedupOrder = append(w.dedupOrder, d)
		return
	}
	w.addDedup(d)
}

// addAttempt remembers a receive attempt until it expires.
func (w *fifoWindows) addAttempt(a *receiveAttempt) {
	if w.attempts == nil {
		w.attempts = make(map[string]*receiveAttempt)
	}
	w.attempts[a.id] = a
	w.attemptOrder = append(w.attemptOrder, a)
}

// win returns q's windows, making them on first use.
func (q *queue) win() *fifoWindows {
	if q.windows == nil {
		q.windows = &fifoWindows{}
		q.markBusy()
	}
	return q.windows
}

// ageIndex is a queue's live messages by age, oldest first: a B-tree made
// on the first insert (an empty queue has none), read as empty before.
type ageIndex struct{ t *btree.BTreeG[*message] }

func (a *ageIndex) ReplaceOrInsert(m *message) {
	if a.t == nil {
		a.t = btree.NewWithFreeListG(32, olderFirst, ageNodes)
	}
	a.t.ReplaceOrInsert(m)
}

func (a *ageIndex) Delete(m *message) {
	if a.t != nil {
		a.t.Delete(m)
	}
}

func (a *ageIndex) Min() (*message, bool) {
	if a.t == nil {
		return nil, false
	}
	return a.t.Min()
}

func (a *ageIndex) Ascend(f func(*message) bool) {
	if a.t != nil {
		a.t.Ascend(f)
	}
}

func (a *ageIndex) Clear(addNodesToFreelist bool) {
	if a.t != nil {
		a.t.Clear(addNodesToFreelist)
	}
}

// noSettings are the settings of a queue before applyAttributes.
var noSettings tidemq.QueueSettings

// newQueue returns a new queue of e (paged when it is a standard queue
// and e pages), its settings zero until applyAttributes.
func (e *Engine) newQueue(id uint64, name string, fifo bool) *queue {
	q := &queue{
		e: e, id: id, name: name, fifo: fifo,
		nextSeq:       1,
		QueueSettings: &noSettings,
	}
	q.gauges = &gauges{owner: q, namedDLQ: tidemq.NamedLikeDeadLetterQueue(name)}
	if fifo {
		q.groups = newFIFOIndex(q)
	}
	return q
}

// arn is q's ARN, made from its name and the engine's region and account:
// keeping it took 96 bytes of every queue.
func (q *queue) arn() string { return q.e.arn(q.name) }

// pageSize is how many ready messages q keeps in memory before the later
// ones stay on disk, and a page's size; 0 when q is not paged (a FIFO
// queue, or an engine that does not page).
func (q *queue) pageSize() int {
	if q.fifo {
		return 0
	}
	return q.e.pageSize
}

// paged reports whether q's backlog is paged: it is a queue of an engine
// that pages, standard (pageSize) or FIFO (groupPageSize).
func (q *queue) paged() bool { return q.e.pageSize > 0 }

// applyAttributes stores attrs (already validated and merged with the
// defaults) and refreshes the parsed fields.
func (q *queue) applyAttributes(attrs map[string]string) {
	q.attrs, q.QueueSettings = attrSets.intern(attrs)
	q.redrivesTo = ""
	if q.Redrive != nil {
		if name, ok := tidemq.QueueNameOfARN(q.Redrive.DeadLetterTargetARN, q.e.region, q.e.acct); ok {
			q.redrivesTo = name
		}
	}
}

// setState moves m to state s, keeping the counters and indexes right. It
// is the only place that changes a live message's state.
func (q *queue) setState(m *message, s msgState) {
	var g *group
	if q.fifo {
		g = q.groups.group(m.Group)
	}
	switch m.state {
	case stateReady:
		q.nReady-- // a standard queue's heap entry goes stale (see readyHeap)
	case stateDelayed:
		q.nDelayed--
	case stateInflight:
		q.nInflight--
		if g != nil {
			g.inflight--
		}
	}
	if g != nil {
		// g.hot counts the group's published messages in memory: not a
		// pending one, nor a paged one that leaves (retention).
		switch {
		case m.state == statePending && s != stateGone:
			g.hot++
		case s == stateGone && m.state != statePending && m.state != stateGone && q.msgs[m.seq] == m:
			g.hot--
		}
	}
	m.state = s
	m.gen++
	switch s {
	case stateReady:
		q.nReady++
		if !q.fifo {
			q.ready.add(m, q.msgs, q.nReady-q.cold.n)
		}
		q.wakeOne()
	case stateDelayed:
		q.nDelayed++
		q.addTimer(timerEntry{at: m.availableAt, seq: m.seq, gen: m.gen, kind: timerAvailable})
	case stateInflight:
		q.nInflight++
		if g != nil {
			g.inflight++
		}
		q.addTimer(timerEntry{at: m.VisibleAt, seq: m.seq, gen: m.gen, kind: timerVisible})
	}
	if g != nil {
		q.groups.refresh(g)
		if s == stateGone && g.canDeliver() {
			q.wakeOne() // the group's next message is now at its head
		}
	}
}

// addTimer schedules a deadline. A new earliest deadline wakes the long
// polls, which sleep until the earliest deadline they saw.
func (q *queue) addTimer(e timerEntry) {
	if len(q.timers) >= 2*(q.nDelayed+q.nInflight)+staleSlack {
		q.compactTimers()
	}
	q.timers.add(e)
	if q.timers[0] == e {
		q.wakeAll()
	}
}

// add inserts a new message, pending until its batch is durable.
func (q *queue) add(m *message) {
	m.state = statePending
	q.putMsg(m)
	q.bytes += int64(m.size())
	if m.DLQSource != "" {
		q.nDeadLettered++
	}
	q.byAge.ReplaceOrInsert(m)
	q.pending = append(q.pending, m)
	if q.fifo {
		q.groups.group(m.Group).insert(m)
	}
}

// putMsg files m in q.msgs, making the map on first use.
func (q *queue) putMsg(m *message) {
	if q.msgs == nil {
		q.msgs = make(map[uint64]*message)
	}
	q.msgs[m.seq] = m
	q.markBusy()
}

// markBusy puts q in the set of queues the sweep visits (Engine.busy).
// Invariant: a queue that has a message (in memory or paged), a timer, a
// FIFO window or an expiry not yet logged is in the set; advance on a
// queue with none of these does nothing, so the sweep leaves such a queue
// out (idle) and visits only the busy ones. Everything that gives a
// queue one of them goes through putMsg, push, install or win, which mark
// it.
func (q *queue) markBusy() {
	if !q.busy && q.e != nil {
		q.busy = true
		q.e.busy[q] = struct{}{}
	}
}

// idle reports whether q holds nothing that a deadline can change, nor an
// expiry to log: the sweep may leave it out until markBusy.
func (q *queue) idle() bool {
	return len(q.msgs) == 0 && len(q.pending) == 0 && len(q.timers) == 0 && q.cold.n == 0 &&
		len(q.cold.pages) == 0 && q.windows == nil && q.expiredUnlogged == 0
}

// publish makes durable pending messages receivable, in sequence order: a
// message waits for every message created before it in this queue.
func (q *queue) publish(now time.Time) {
	i := 0
	for ; i < len(q.pending); i++ {
		m := q.pending[i]
		if m.state == stateGone {
			continue
		}
		if !m.durable {
			break
		}
		if q.fifo && q.groupPagesOut(m, now) {
			q.pageOutFIFO(m)
			continue
		}
		if q.pagesOut(m, now) {
			q.pageOut(m)
			continue
		}
		q.activate(m, now)
	}
	n := copy(q.pending, q.pending[i:])
	clear(q.pending[n:]) // the published must not stay reachable from here
	q.pending = q.pending[:n]
}

// activate moves a durable message out of pending (or, at load, into its
// state), according to its deadlines.
func (q *queue) activate(m *message, now time.Time) {
	switch {
	case m.ReceiveCount > 0 && m.VisibleAt > stampOf(now):
		q.setState(m, stateInflight)
	case m.availableAt > stampOf(now):
		q.setState(m, stateDelayed)
	default:
		q.setState(m, stateReady)
	}
}

// remove takes m out of the queue for good and deletes its records.
func (q *queue) remove(m *message, t *txn) {
	if m.state == stateGone {
		return
	}
	q.setState(m, stateGone)
	delete(q.msgs, m.seq)
	q.bytes -= int64(m.size())
	if m.DLQSource != "" {
		q.nDeadLettered--
	}
	q.byAge.Delete(m)
	q.forget(m.seq, t)
	if q.fifo && q.paged() {
		q.forgetInGroup(m, t)
		t.b.Delete(groupKey(q.id, m.Group, m.seq))
	}
	// A FIFO group's list (until the group's head passes it) or a
	// remembered receive attempt (5 minutes) may keep m reachable for a
	// while: drop what is big. Ready and timer entries name m by sequence.
	m.Body, m.Attrs, m.SysAttrs, m.History = "", nil, nil, nil
	t.b.SingleDelete(seqKey(prefixMessage, q.id, m.seq))
	t.b.Delete(seqKey(prefixState, q.id, m.seq))
}

// advance applies every deadline that has passed: delays end, visibility
// timeouts end, messages past retention expire, dedup entries and receive
// attempts are forgotten. Cost is proportional to what is due.
func (e *Engine) advance(q *queue, now time.Time, t *txn) {
	for {
		te, ok := q.timers.due(now)
		if !ok {
			break
		}
		m := te.message(q)
		if m == nil {
			continue
		}
		if te.kind == timerVisible {
			m.AddHistory(tidemq.ExpiredEvent(q.name, te.at.Time()))
			// Written now: nothing else rewrites the state before the next
			// receive, and a restart does not derive the event again.
			t.b.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
		}
		q.setState(m, stateReady)
	}
	capture := e.captureTarget(q)
	for {
		m, ok := q.byAge.Min()
		if !ok || m.Enqueued.Time().Add(q.Retention).After(now) {
			break
		}
		e.expire(q, m, capture, now, t)
	}
	e.expirePaged(q, now, t, capture)
	e.expireGroups(q, now, t, capture)
	w := q.windows
	if w == nil {
		return
	}
	expireWindows(q.id, w, now, t)
	for len(w.attemptOrder) > 0 && !w.attemptOrder[0].expires.After(now) {
		a := w.attemptOrder[0]
		w.attemptOrder[0] = nil
		w.attemptOrder = w.attemptOrder[1:]
		if w.attempts[a.id] == a {
			delete(w.attempts, a.id)
		}
	}
	if len(w.dedup) == 0 && len(w.attempts) == 0 && len(w.dedupOrder) == 0 && len(w.attemptOrder) == 0 {
		q.windows = nil // an idle FIFO queue keeps none
	}
}

// massExpiry is how many deduplication windows one pass must end before
// it deletes their records with one range delete rather than one delete
// each. A server that sends steadily ends a few windows a pass and writes
// point deletes, as cheap to read past as ever; a pass after a pause (or a
// burst of sends five minutes earlier) may end millions at once, and a
// delete each would be one batch of that size in memory (about 50 bytes a
// window: 480 MiB for 10,000,000), held by the store until its next flush.
const massExpiry = 1024

// expireWindows forgets the deduplication entries of queue qid whose
// windows ended by now, and deletes their records in t.
func expireWindows(qid uint64, w *fifoWindows, now time.Time, t *txn) {
	n := 0
	for n < len(w.dedupOrder) && !w.dedupOrder[n].expires.After(now) {
		n++
	}
	if n == 0 {
		return
	}
	mass := n > massExpiry
	wall := now.Round(0) // the keys hold wall time; expires may hold a monotonic reading
	if mass {
		// Every w/ record of the queue whose window ended by now, in
		// memory or not (keys.go): one tombstone.
		t.b.DeleteRange(endedWindows(qid, wall))
	}
	for i, d := range w.dedupOrder[:n] {
		w.dedupOrder[i] = nil
		if w.dedup[d.key] == d {
			delete(w.dedup, d.key)
		}
		switch {
		case d.legacy:
			// Its own record: a later send of the key writes under w/.
			t.b.Delete(dedupKey(qid, d.key))
		case !mass || d.expires.Round(0).After(wall):
			// Ended by the monotonic clock but not by the wall clock
			// (stepped back since the send): past the range's end.
			t.b.Delete(windowKey(qid, d.expires, d.key))
		}
	}
	w.dedupOrder = w.dedupOrder[n:]
}

// expire takes m, whose retention period passed, out of q: counted as
// expired, and moved into capture (tidemq:capture-expired) when there is
// one, else removed.
func (e *Engine) expire(q *queue, m *message, capture *queue, now time.Time, t *txn) {
	q.count().Expired++
	q.expiredUnlogged++
	if capture != nil {
		e.move(q, m, capture, now, t, tidemq.CapturedEvent(q.name, q.Retention, capture.name, now))
		return
	}
	q.remove(m, t)
}
