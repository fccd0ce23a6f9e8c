package engine

import "container/heap"

// readyHeap holds the receivable messages of a standard queue, lowest
// sequence first, so a standard queue delivers in roughly send order.
//
// Entries are a message's sequence and gen, not a pointer to it: sifting
// never dereferences a message (at a million entries that is a cache miss
// per level), the garbage collector does not scan the heap, and a message
// that leaves the queue is not kept reachable by its entry. Removal is
// lazy: a message that stops being ready leaves its entry behind, top
// drops entries whose message is gone or no longer ready at that gen, and
// add compacts the heap when stale entries outnumber live ones (on a
// queue nobody receives from, expired messages would otherwise leave
// their entries forever).
type readyHeap []readyEntry

type readyEntry struct {
	seq uint64
	gen uint64
}

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(readyEntry)) }
func (h *readyHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// add makes m, just set ready, receivable. live is the number of ready
// messages, m included.
func (h *readyHeap) add(m *message, msgs map[uint64]*message, live int) {
	if len(*h) >= 2*live+staleSlack {
		h.compact(msgs)
	}
	heap.Push(h, readyEntry{seq: m.seq, gen: m.gen})
}

// top returns the ready message with the lowest sequence, or nil.
func (h *readyHeap) top(msgs map[uint64]*message) *message {
	for len(*h) > 0 {
		if m := (*h)[0].message(msgs); m != nil {
			return m
		}
		heap.Pop(h)
	}
	return nil
}

// message returns the entry's message if it is still ready at the entry's
// gen, or nil.
func (e readyEntry) message(msgs map[uint64]*message) *message {
	m := msgs[e.seq]
	if m == nil || m.gen != e.gen || m.state != stateReady {
		return nil
	}
	return m
}

// compact drops the stale entries.
func (h *readyHeap) compact(msgs map[uint64]*message) {
	live := (*h)[:0]
	for _, e := range *h {
		if e.message(msgs) != nil {
			live = append(live, e)
		}
	}
	*h = live
	heap.Init(h)
}

// staleSlack is how many stale entries a heap may hold beyond as many as
// its live ones before it is compacted: compaction costs one pass over the
// heap, paid for by at least that many stale entries.
const staleSlack = 1024
