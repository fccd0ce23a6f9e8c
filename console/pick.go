package console

import (
	"container/heap"
	"sort"

	"github.com/tidemq/tidemq"
)

// pick chooses the overview's queues in one pass over every queue, handed
// to offer one at a time, keeping copies of at most OverviewLimit of them
// (and of the queue the page asked for and its sources) and counting the
// totals the page shows: at 100,000 queues the overview no longer holds,
// sorts and filters a snapshot of each.
type pick struct {
	firing map[string]bool
	// want is the queue the page asked for (?queue=), wantARN its ARN.
	want, wantARN string
	// top holds the first queues offered until OverviewLimit, then is a
	// heap whose root leaves first when a queue that comes earlier in the
	// overview's order is offered.
	top overviewHeap
	// asked is the queue asked for (when seen) and its sources.
	asked []tidemq.QueueSnapshot
	// Totals over every queue offered.
	total, deadLetterQueues, firingQueues int
}

func newPick(firing map[string]bool, want, wantARN string) *pick {
	return &pick{firing: firing, want: want, wantARN: wantARN, top: overviewHeap{firing: firing}}
}

// offer counts s and keeps a copy of it when the overview lists it. s may
// be reused once offer returns.
func (p *pick) offer(s *tidemq.QueueSnapshot) {
	p.total++
	if s.IsDeadLetterQueue {
		p.deadLetterQueues++
	}
	if p.firing[s.Name] {
		p.firingQueues++
	}
	if p.want != "" && (s.Name == p.want || s.DeadLetterTarget == p.wantARN) {
		p.asked = append(p.asked, *s)
	}
	switch {
	case len(p.top.s) < OverviewLimit:
		p.top.s = append(p.top.s, *s) // no heap.Push: boxing s would allocate a copy
		if len(p.top.s) == OverviewLimit {
			heap.Init(&p.top)
		}
	case before(s, &p.top.s[0], p.firing):
		p.top.s[0] = *s
		heap.Fix(&p.top, 0)
	}
}

// queues is what the overview lists: the first OverviewLimit queues in its
// order and, past them, the queue asked for and its sources (only when
// the queue was seen), in the overview's order.
func (p *pick) queues() []tidemq.QueueSnapshot {
	out := p.top.s
	sort.Slice(out, func(i, j int) bool { return before(&out[i], &out[j], p.firing) })
	if p.total <= OverviewLimit || !p.seen() {
		return out
	}
	listed := make(map[string]bool, len(out))
	for i := range out {
		listed[out[i].Name] = true
	}
	extra := p.asked[:0:0]
	for _, s := range p.asked {
		if !listed[s.Name] {
			extra = append(extra, s)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return before(&extra[i], &extra[j], p.firing) })
	return append(out, extra...)
}

// seen reports whether the queue asked for was offered.
func (p *pick) seen() bool {
	for i := range p.asked {
		if p.asked[i].Name == p.want {
			return true
		}
	}
	return false
}

// before reports whether a comes before b in the overview's order:
// dead-letter queues first, queues with a firing alarm first among their
// kind, then by name.
func before(a, b *tidemq.QueueSnapshot, firing map[string]bool) bool {
	if a.IsDeadLetterQueue != b.IsDeadLetterQueue {
		return a.IsDeadLetterQueue
	}
	if fa, fb := firing[a.Name], firing[b.Name]; fa != fb {
		return fa
	}
	return a.Name < b.Name
}

// overviewHeap is a heap of snapshots whose root is the last in the
// overview's order.
type overviewHeap struct {
	s      []tidemq.QueueSnapshot
	firing map[string]bool
}

func (h overviewHeap) Len() int           { return len(h.s) }
func (h overviewHeap) Less(i, j int) bool { return before(&h.s[j], &h.s[i], h.firing) }
func (h overviewHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *overviewHeap) Push(x any)        { h.s = append(h.s, *x.(*tidemq.QueueSnapshot)) }
func (h *overviewHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}
