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
	mu     sync.Mutex
	now    time.Time
	timers []*timer
}

// New returns a fake clock set to start.
func New(start time.Time) *Clock { return &Clock{now: start} }

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
