package engine

import (
	"container/heap"
	"sort"

	"github.com/tidemq/tidemq"
)

// Summary returns the totals over every queue and the snapshots of at most
// limit queues (every queue when there are no more; else the deepest, ties
// by name), sorted by name: what a /metrics scrape needs, in one pass over
// the queues that builds no snapshot for the others and sorts only those
// it returns. A negative limit returns no snapshot.
//
// Unlike Snapshot it applies no deadline and writes nothing: the numbers
// are those the last operation on each queue or the last sweep (every
// second by default, Options.SweepInterval) left, so a message whose
// delay ended since is still counted as delayed until then. Applying the
// deadlines of 100,000 queues was most of a scrape's time.
func (e *Engine) Summary(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot) {
	var tot tidemq.QueueTotals
	h := hold{e: e}
	defer h.guard(nil)
	if h.lock() != nil {
		return tot, nil
	}
	now := e.clock.Now()
	dlqs := e.deadLetterTargets()
	// The pass reads each queue's counters where they are and builds a
	// snapshot only for the queues it returns: at 100,000 queues, copying
	// a snapshot out of every queue was most of its time.
	top := make(deepest, 0, max(min(limit, len(e.queues)), 0))
	for _, q := range e.queues {
		tot.Queues++
		tot.Visible += q.nReady
		tot.InFlight += q.nInflight
		tot.Delayed += q.nDelayed
		if (len(dlqs) > 0 && dlqs[q.name]) || q.nDeadLettered > 0 || tidemq.NamedLikeDeadLetterQueue(q.name) {
			tot.DeadLetterQueues++
			tot.DeadLetterVisible += q.nReady
		}
		if len(q.msgs) > 0 || q.cold.n > 0 {
			tot.OldestAgeSeconds = max(tot.OldestAgeSeconds, q.oldestAge(now))
		}
		if q.stats != nil {
			tot.Stats.Add(q.stats)
		}
		switch {
		case limit <= 0:
		case len(top) < limit:
			heap.Push(&top, q)
		case deeper(q, top[0]):
			top[0] = q
			heap.Fix(&top, 0)
		}
	}
	out := make([]tidemq.QueueSnapshot, len(top))
	for i, q := range top {
		out[i] = e.snapshotOf(q, now, dlqs)
		out[i].ARN = q.arn()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return tot, out
}

// deeper reports whether a comes before b in tidemq.DeeperFirst's order.
func deeper(a, b *queue) bool {
	da, db := a.nReady+a.nInflight+a.nDelayed, b.nReady+b.nInflight+b.nDelayed
	if da != db {
		return da > db
	}
	return a.name < b.name
}

// deepest is a heap of queues whose root is the one that leaves first
// when a deeper queue comes: the shallowest, of the last name.
type deepest []*queue

func (d deepest) Len() int           { return len(d) }
func (d deepest) Less(i, j int) bool { return deeper(d[j], d[i]) }
func (d deepest) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *deepest) Push(x any)        { *d = append(*d, x.(*queue)) }
func (d *deepest) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}
