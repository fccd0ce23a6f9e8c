package engine

// Long polls wait on their queue. A message that becomes receivable wakes
// one of them, the one that has waited longest, rather than all: with many
// consumers polling an idle queue, waking every one for each message made
// them all queue for the engine lock to find, all but one, nothing.
//
// Invariants (under e.mu):
//   - a waiter is in q.waiters exactly until it is woken (woken set, its
//     channel closed) or it leaves;
//   - a woken waiter either receives, or passes the wake on (wakeOne) when
//     it leaves without receiving, so that no wake is lost while messages
//     are ready;
//   - a receive that leaves ready messages behind wakes the next waiter.
//
// Events every waiter must see (a new earliest timer deadline, which each
// waiter sleeps until; a deleted queue) wake them all.

// waiter is one waiting long poll.
type waiter struct {
	ch    chan struct{}
	woken bool
}

// addWaiter registers a long poll and returns it.
func (q *queue) addWaiter() *waiter {
	w := &waiter{ch: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	return w
}

// wakeOne wakes the longest-waiting long poll, if any.
func (q *queue) wakeOne() {
	if len(q.waiters) == 0 {
		return
	}
	w := q.waiters[0]
	q.waiters[0] = nil
	q.waiters = q.waiters[1:]
	w.woken = true
	close(w.ch)
}

// wakeAll wakes every long poll.
func (q *queue) wakeAll() {
	for _, w := range q.waiters {
		w.woken = true
		close(w.ch)
	}
	q.waiters = nil
}

// leave takes w out of q's waiters. A waiter that was woken and leaves
// without receiving passes the wake on.
func (q *queue) leave(w *waiter, received bool) {
	if w.woken {
		if !received {
			q.wakeOne()
		}
		return
	}
	for i, x := range q.waiters {
		if x == w {
			q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
			return
		}
	}
}
