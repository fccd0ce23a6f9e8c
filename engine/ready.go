package engine

import "container/heap"

// readyHeap holds the receivable messages of a standard queue, lowest
// sequence first, so a standard queue delivers in roughly send order. Every
// operation is O(log n); messages know their index so that a delete of a
// visible message (a stale handle) removes it directly.
type readyHeap []*message

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}
func (h *readyHeap) Push(x any) {
	m := x.(*message)
	m.heapIndex = len(*h)
	*h = append(*h, m)
}
func (h *readyHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	m.heapIndex = -1
	return m
}

func (h *readyHeap) add(m *message) { heap.Push(h, m) }

func (h *readyHeap) remove(m *message) {
	if m.heapIndex >= 0 && m.heapIndex < len(*h) && (*h)[m.heapIndex] == m {
		heap.Remove(h, m.heapIndex)
	}
}
