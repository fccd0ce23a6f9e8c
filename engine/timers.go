package engine

import (
	"container/heap"
	"time"
)

// timerKind says what happens when a timer entry comes due.
type timerKind uint8

const (
	timerAvailable timerKind = iota // delay over: delayed → ready
	timerVisible                    // visibility timeout over: in flight → ready
)

// Retention is not a timer: a queue keeps its live messages in a B-tree by
// enqueue time (queue.byAge), whose minimum is the next to expire and the
// oldest message's age. A per-message retention timer would keep deleted
// messages reachable for the whole retention period.

// timerEntry is one deadline of one message. An entry whose message is
// gone, or whose gen no longer matches its message's, is stale: it is
// skipped when popped, and dropped early when stale entries outnumber live
// ones (queue.compactTimers; a deleted message's entry would otherwise
// stay until its deadline, up to 12 hours).
//
// An entry names its message by sequence, not by pointer: a deleted
// message must not stay reachable until its deadline (a visibility timeout
// can be 12 hours), and a heap of pointer-free entries is not scanned by
// the garbage collector.
type timerEntry struct {
	at   stamp
	seq  uint64
	gen  uint64
	kind timerKind
}

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = timerEntry{}
	*h = old[:len(old)-1]
	return e
}

func (h *timerHeap) add(e timerEntry) { heap.Push(h, e) }

// due pops the earliest entry if it is due at now.
func (h *timerHeap) due(now time.Time) (timerEntry, bool) {
	if len(*h) == 0 || (*h)[0].at > stampOf(now) {
		return timerEntry{}, false
	}
	return heap.Pop(h).(timerEntry), true
}

// message returns the entry's message if the entry still applies to it, or
// nil.
func (e timerEntry) message(q *queue) *message {
	m := q.msgs[e.seq]
	if m == nil || m.gen != e.gen {
		return nil
	}
	if e.kind == timerAvailable && m.state == stateDelayed || e.kind == timerVisible && m.state == stateInflight {
		return m
	}
	return nil
}

// nextDeadline returns the earliest deadline at which something may become
// receivable (entries may be stale: a waiter woken by one just looks again).
func (h timerHeap) nextDeadline() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	return h[0].at.Time(), true
}

// compactTimers drops the stale timer entries.
func (q *queue) compactTimers() {
	live := q.timers[:0]
	for _, e := range q.timers {
		if e.message(q) != nil {
			live = append(live, e)
		}
	}
	q.timers = live
	heap.Init(&q.timers)
}
