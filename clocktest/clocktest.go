// Package clocktest provides a fake tidemq.Clock for tests: time stands still
// until the test advances it, and timers fire synchronously inside Advance.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/tidemq/tidemq"
)

// Clock is a manually driven tidemq.Clock. The zero value is not usable; use
// New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*timer
	changed chan struct{} // closed and replaced whenever a timer is added
}

// New returns a fake clock set to start.
func New(start time.Time) *Clock { return &Clock{now: start, changed: make(chan struct{})} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer returns a timer that fires when the clock is advanced past d.
func (c *Clock) NewTimer(d time.Duration) tidemq.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return t
}

// Advance moves the clock forward by d and fires every timer that is due, in
// deadline order.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	now := c.now
	var due, keep []*timer
	for _, t := range c.timers {
		if !t.at.After(now) {
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, t := range due {
		t.fired = true
		t.ch <- t.at
	}
	c.mu.Unlock()
}

// Set moves the clock to t (which must not be earlier than Now) and fires
// what is due.
func (c *Clock) Set(t time.Time) { c.Advance(t.Sub(c.Now())) }

// Timers reports how many timers are waiting to fire. Tests use it as a
// signal that a goroutine has reached a wait (for example a long poll).
func (c *Clock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers blocks until at least n timers are waiting, or until the
// real-time limit passes; it reports whether the timers are there. It is the
// test signal that another goroutine has reached a timed wait, such as a long
// poll, so that a test can act without sleeping.
func (c *Clock) WaitForTimers(n int, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		count, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if count >= n {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

type timer struct {
	c     *Clock
	at    time.Time
	ch    chan time.Time
	fired bool
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.fired {
		return false
	}
	for i, x := range t.c.timers {
		if x == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			break
		}
	}
	t.fired = true
	return true
}
