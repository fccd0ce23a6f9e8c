package engine

import "container/heap"

// readyHeap holds the receivable messages of a standard queue, lowest
// sequence first, so a standard queue delivers in roughly send order.
//
// Entries carry the sequence and the message's gen, so sifting never
// dereferences a message (at a million entries that is a cache miss per
// level), and removal is lazy: a message that stops being ready leaves its
// entry behind, and top drops entries whose message is no longer ready at
// that gen. Receives pop the top, so stale entries are rare (a stale-handle
// delete of a visible message) and never outlive their turn at the top.
type readyHeap []readyEntry

type readyEntry struct {
	seq uint64
	gen uint64
	m   *message
}

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(readyEntry)) }
func (h *readyHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = readyEntry{}
	*h = old[:len(old)-1]
	return e
}

// add makes m, just set ready, receivable.
func (h *readyHeap) add(m *message) { heap.Push(h, readyEntry{seq: m.seq, gen: m.gen, m: m}) }

// top returns the ready message with the lowest sequence, or nil.
func (h *readyHeap) top() *message {
	for len(*h) > 0 {
		e := (*h)[0]
		if e.m.state == stateReady && e.m.gen == e.gen {
			return e.m
		}
		heap.Pop(h)
	}
	return nil
}
