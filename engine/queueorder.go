package engine

import (
	"github.com/google/btree"

	"github.com/tidemq/tidemq"
)

// byName is the engine's queues in name order, beside e.queues (by name,
// in no order): a page of GET /tidemq/queues walks it from the page's
// token instead of snapshotting and sorting every queue. Invariant: it
// holds exactly the queues of e.queues, as e.gauges holds their gauges
// (gauges.go); addQueue and removeQueue are the only writers of any (and
// resetState, which empties them).
type byName struct{ t *btree.BTreeG[*queue] }

func nameOrder(a, b *queue) bool { return a.name < b.name }

func newByName() byName { return byName{t: btree.NewG(32, nameOrder)} }

// addQueue makes q one of the engine's queues. Called with e.mu held.
func (e *Engine) addQueue(q *queue) {
	e.queues[q.name] = q
	e.byID[q.id] = q
	e.byName.t.ReplaceOrInsert(q)
	q.gauges = e.gauges.add(q.gauges)
}

// removeQueue takes q out of the engine's queues. Called with e.mu held.
func (e *Engine) removeQueue(q *queue) {
	delete(e.queues, q.name)
	delete(e.byID, q.id)
	e.byName.t.Delete(q)
	q.gauges = e.gauges.remove(q.gauges)
	q.dropAhead()
}

// SnapshotsAfter returns the snapshots of the first n queues whose names
// sort after after ("" from the first), in name order, deadlines applied
// as Snapshot applies them; fewer than n only when no more queues follow
// (tidemq.SnapshotPager). It snapshots only those queues: at 100,000
// queues, a page of 1,000 no longer copies out and sorts the 100,000.
// Telling which of them are dead-letter queues reads every queue's
// RedrivePolicy, without a copy of any.
func (e *Engine) SnapshotsAfter(after string, n int) (_ []tidemq.QueueSnapshot, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return nil, err
	}
	page := make([]*queue, 0, min(max(n, 0), e.byName.t.Len()))
	if n > 0 {
		e.byName.t.AscendGreaterOrEqual(&queue{name: after}, func(q *queue) bool {
			if q.name == after && after != "" {
				return true
			}
			page = append(page, q)
			return len(page) < n
		})
	}
	now := e.clock.Now()
	t := e.begin()
	dlqs := e.deadLetterTargets()
	out := make([]tidemq.QueueSnapshot, len(page))
	for i, q := range page {
		e.advance(q, now, t)
		out[i] = e.snapshotOf(q, now, dlqs)
		out[i].ARN = q.arn()
	}
	return out, e.finish(&h, t)
}

// QueueCount is the number of the engine's queues (tidemq.QueueCounter).
func (e *Engine) QueueCount() (_ int, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := h.lock(); err != nil {
		return 0, err
	}
	return len(e.queues), nil
}
