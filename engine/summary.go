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
// Unlike Snapshot it applies no deadline and writes nothing but its own
// marks (markTargets): the numbers are those the last operation on each
// queue or the last sweep (every second by default,
// Options.SweepInterval) left, so a message whose delay ended since is
// still counted as delayed until then. Applying the deadlines of 100,000
// queues was most of a scrape's time.
func (e *Engine) Summary(limit int) (tidemq.QueueTotals, []tidemq.QueueSnapshot) {
	var tot tidemq.QueueTotals
	h := hold{e: e}
	defer h.guard(nil)
	if h.lock() != nil {
		return tot, nil
	}
	now := e.clock.Now()
	dlqs := e.deadLetterTargets()
	pass := e.markTargets(dlqs)
	// The pass reads the gauges, side by side in their table (gauges.go),
	// and touches a queue itself only when it holds messages (its oldest
	// age), is returned, or shares the depth of the last one returned
	// (deepest): at 100,000 queues, reading each queue's struct and name
	// was most of a scrape's time.
	k := max(min(limit, len(e.queues)), 0)
	depths := make(minDepths, 0, k) // the k largest depths
	e.gauges.each(func(g *gauges) {
		tot.Queues++
		tot.Visible += g.nReady
		tot.InFlight += g.nInflight
		tot.Delayed += g.nDelayed
		if g.isDeadLetterQueue(pass) {
			tot.DeadLetterQueues++
			tot.DeadLetterVisible += g.nReady
		}
		if g.depth() > 0 {
			// A queue's messages that count in none of the three are
			// pending (not yet durable), which oldestAge leaves out.
			tot.OldestAgeSeconds = max(tot.OldestAgeSeconds, g.owner.oldestAge(now))
		}
		if g.stats != nil {
			tot.Stats.Add(g.stats)
		}
		switch d := g.depth(); {
		case k == 0:
		case len(depths) < k:
			heap.Push(&depths, d)
		case d > depths[0]:
			depths[0] = d
			heap.Fix(&depths, 0)
		}
	})
	out := make([]tidemq.QueueSnapshot, 0, k)
	if k > 0 {
		for _, q := range e.deepest(k, depths[0]) {
			s := e.snapshotOf(q, now, dlqs)
			s.ARN = q.arn()
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return tot, out
}

// deepest returns the k deepest queues, ties by name (tidemq.DeeperFirst's
// order), given the depth of the k-th: every queue deeper than that, then
// those at that depth in name order until there are k. When few queues
// share that depth (at most 4k) they are sorted by name; when many do
// (100,000 empty queues, the usual case), the name-ordered tree is walked
// until k are found, which takes a few more than k.
func (e *Engine) deepest(k, kth int) []*queue {
	top := make([]*queue, 0, k)
	var ties []*queue
	e.gauges.each(func(g *gauges) {
		switch d := g.depth(); {
		case d > kth:
			top = append(top, g.owner)
		case d == kth && len(ties) <= 4*k:
			ties = append(ties, g.owner)
		}
	})
	need := k - len(top)
	if len(ties) <= 4*k {
		sort.Slice(ties, func(i, j int) bool { return ties[i].name < ties[j].name })
		return append(top, ties[:need]...)
	}
	e.byName.t.Ascend(func(q *queue) bool {
		if q.depth() == kth {
			top = append(top, q)
		}
		return len(top) < k
	})
	return top
}

// minDepths is a min-heap of depths: the root is the smallest of the
// largest depths seen so far.
type minDepths []int

func (d minDepths) Len() int           { return len(d) }
func (d minDepths) Less(i, j int) bool { return d[i] < d[j] }
func (d minDepths) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *minDepths) Push(x any)        { *d = append(*d, x.(int)) }
func (d *minDepths) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}
