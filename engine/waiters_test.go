package engine

import "testing"

func woken(w *waiter) bool {
	select {
	case <-w.ch:
		return true
	default:
		return false
	}
}

// The waiter rules of waiters.go, one by one.
func TestWaiters(t *testing.T) {
	q := &queue{}
	a, b, c := q.addWaiter(), q.addWaiter(), q.addWaiter()

	q.wakeOne()
	if !woken(a) || woken(b) || woken(c) || len(q.waiters) != 2 {
		t.Fatal("wakeOne must wake the longest-waiting poll only, and drop it from the list")
	}
	q.leave(a, false) // a leaves without receiving: its wake goes on
	if !woken(b) || woken(c) {
		t.Fatal("a woken poll that leaves without receiving must pass the wake on")
	}
	q.leave(b, true) // b received: nothing to pass on
	if woken(c) {
		t.Fatal("a poll that received must not wake another")
	}
	q.leave(c, false) // c was never woken: just leaves
	if len(q.waiters) != 0 || woken(c) {
		t.Fatalf("a poll that leaves unwoken must leave the list: %d left", len(q.waiters))
	}
	q.wakeOne() // no waiters: nothing happens
	d, e := q.addWaiter(), q.addWaiter()
	q.wakeAll()
	if !woken(d) || !woken(e) || len(q.waiters) != 0 {
		t.Fatal("wakeAll must wake every poll")
	}
}
