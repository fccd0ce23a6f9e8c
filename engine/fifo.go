package engine

import (
	"container/heap"
	"slices"

	"github.com/tidemq/tidemq"
)

// group is one FIFO message group: its messages in sequence order, whatever
// their state.
//
// The delivery rule (AWS's, as observed; reference §5): a message of a
// group can be received only when it is ready and every live message
// before it in the group is ready too. So a receive takes a group's
// messages in order from its first live message and stops at the first one
// that is not ready (in flight or delayed); a message waits while an
// EARLIER message of its group is in flight, not while a later one is. The
// difference shows when several messages of a group were received together
// and an earlier one comes back (its visibility timeout ran out or was set
// to 0) while a later one is still in flight: the earlier one can be
// received again, and the group's messages after the one in flight cannot.
// With one consumer that deletes or releases in order this is the same as
// "the group is locked while any of its messages is in flight".
//
// msgs is a queue with lazy removal: messages that leave the group are
// marked stateGone and skipped when they reach the head, so removal from the
// middle is O(1) and the head is found in amortised O(1).
type group struct {
	id       string
	msgs     []*message
	head     int // index of the first message that may still be live
	inflight int // how many of msgs are in flight
	// hot counts the group's published messages in memory (in msgs, not
	// pending); cold are
	// its paged messages, kept only in the store (fifopage.go). Every
	// page lies after the group's first live message in memory, and
	// refresh reads the next page in as soon as none is.
	hot  int
	cold backlog
	// availIndex is the position in the queue's available-groups heap (-1
	// when not there).
	availIndex int
}

// first returns the first live message of the group, or nil.
//
// It only moves head forward: receives walk msgs by index while messages
// leave the group, so slots are cleared and the slice compacted only in
// insert.
func (g *group) first() *message {
	for g.head < len(g.msgs) && g.msgs[g.head].state == stateGone {
		g.head++
	}
	if g.head == len(g.msgs) {
		return nil
	}
	return g.msgs[g.head]
}

// canDeliver reports whether the group's head can be received now: it is
// ready (nothing before it is live). Messages in flight after it do not
// hold it back (see group).
func (g *group) canDeliver() bool {
	m := g.first()
	return m != nil && m.state == stateReady && !g.coldBefore(m)
}

// coldBefore reports whether a paged message of the group may come
// before m (nil: the end of the group's messages in memory): the next
// page must be read in before m can be delivered.
func (g *group) coldBefore(m *message) bool {
	return g.cold.n > 0 && (m == nil || g.cold.pages[0].lo < m.seq)
}

// empty reports whether the group holds no live message, in memory or
// paged.
func (g *group) empty() bool { return g.first() == nil && g.cold.n == 0 }

// insert adds m in sequence order. Messages nearly always arrive in order,
// so this is an append; a dead-letter move into a FIFO queue keeps the
// order of sequence numbers it is given too.
func (g *group) insert(m *message) {
	// Compact here, never in first: receives walk msgs by index while
	// messages leave the group.
	if g.head == len(g.msgs) || (g.head > 1024 && g.head*2 > len(g.msgs)) {
		n := copy(g.msgs, g.msgs[g.head:])
		clear(g.msgs[n:])
		g.msgs, g.head = g.msgs[:n], 0
	}
	i := len(g.msgs)
	for i > g.head && g.msgs[i-1].seq > m.seq {
		i--
	}
	g.msgs = append(g.msgs, nil)
	copy(g.msgs[i+1:], g.msgs[i:])
	g.msgs[i] = m
}

// place adds m, read from a page, in sequence order without compacting
// msgs: a receive may be walking msgs by index (receiveLocked), and every
// message it has passed comes before m.
func (g *group) place(m *message) {
	i := len(g.msgs)
	for i > g.head && g.msgs[i-1].seq > m.seq {
		i--
	}
	g.msgs = slices.Insert(g.msgs, i, m)
}

// unlist takes m, about to be paged out, out of msgs.
func (g *group) unlist(m *message) {
	for i := len(g.msgs) - 1; i >= g.head; i-- {
		if g.msgs[i] == m {
			g.msgs = slices.Delete(g.msgs, i, i+1)
			return
		}
	}
}

// groupHeap orders the groups that can deliver in the line AWS serves
// them in (tidemq.GroupHead): by when their head became receivable, so a
// group whose message came back from in flight goes behind the groups
// already waiting. A head's key changes only through setState, which
// fixes the group's place (refresh).
type groupHeap []*group

func (h groupHeap) Len() int           { return len(h) }
func (h groupHeap) Less(i, j int) bool { return h[i].first().head().ServedBefore(h[j].first().head()) }
func (h groupHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].availIndex = i
	h[j].availIndex = j
}
func (h *groupHeap) Push(x any) {
	g := x.(*group)
	g.availIndex = len(*h)
	*h = append(*h, g)
}
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.availIndex = -1
	return g
}

// head is m's place in the line of groups when it is its group's head.
func (m *message) head() tidemq.GroupHead {
	if m.ReceiveCount > 0 {
		return tidemq.GroupHead{Since: int64(m.VisibleAt), Returned: true, Seq: m.seq}
	}
	return tidemq.GroupHead{Since: int64(m.availableAt), Seq: m.seq}
}

// fifoIndex is the receive index of a FIFO queue.
type fifoIndex struct {
	q      *queue
	groups map[string]*group
	avail  groupHeap
	// cold are the groups with paged messages (fifopage.go).
	cold map[*group]struct{}
}

func newFIFOIndex(q *queue) *fifoIndex {
	return &fifoIndex{q: q, groups: make(map[string]*group)}
}

// markCold records that g has paged messages.
func (f *fifoIndex) markCold(g *group) {
	if f.cold == nil {
		f.cold = make(map[*group]struct{})
	}
	f.cold[g] = struct{}{}
}

func (f *fifoIndex) group(id string) *group {
	g := f.groups[id]
	if g == nil {
		g = &group{id: id, availIndex: -1}
		f.groups[id] = g
	}
	return g
}

// refresh puts g in or out of the available heap (and fixes its place, since
// its head may have changed) and forgets it when it is empty. It first
// reads in the group's next page when a paged message comes before every
// live message of the group in memory.
func (f *fifoIndex) refresh(g *group) {
	for g.coldBefore(g.first()) {
		f.q.fillGroup(g)
	}
	if g.canDeliver() {
		if g.availIndex < 0 {
			heap.Push(&f.avail, g)
		} else {
			heap.Fix(&f.avail, g.availIndex)
		}
		return
	}
	if g.availIndex >= 0 {
		heap.Remove(&f.avail, g.availIndex)
	}
	if g.inflight == 0 && g.empty() && len(g.cold.pages) == 0 {
		delete(f.groups, g.id)
	}
}

// next returns the group whose head is the oldest receivable message.
func (f *fifoIndex) next() *group {
	if len(f.avail) == 0 {
		return nil
	}
	return f.avail[0]
}
