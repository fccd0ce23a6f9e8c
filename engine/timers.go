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

// timerEntry is one deadline of one message. Entries are never removed from
// the heap early: an entry whose gen no longer matches its message (for
// visibility and delay), or whose message is gone, is skipped when popped.
type timerEntry struct {
	at   time.Time
	msg  *message
	gen  uint64
	kind timerKind
}

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
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
	if len(*h) == 0 || (*h)[0].at.After(now) {
		return timerEntry{}, false
	}
	return heap.Pop(h).(timerEntry), true
}

// live reports whether an entry still applies to its message.
func (e timerEntry) live() bool {
	if e.kind == timerAvailable {
		return e.msg.state == stateDelayed && e.msg.gen == e.gen
	}
	return e.msg.state == stateInflight && e.msg.gen == e.gen
}

// nextDeadline returns the earliest deadline at which something may become
// receivable (entries may be stale: a waiter woken by one just looks again).
func (h timerHeap) nextDeadline() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	return h[0].at, true
}
