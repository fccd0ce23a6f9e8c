package tidemq

import (
	"context"
	"sync"
	"time"
)

// PollDeadline returns when a receive that starts at now stops waiting for
// messages: after the request's WaitTimeSeconds, or the queue's
// ReceiveMessageWaitTimeSeconds when the request gives none.
func (s QueueSettings) PollDeadline(p ReceiveMessagesParams, now time.Time) time.Time {
	wait := s.WaitTime
	if p.WaitTimeSeconds != nil {
		wait = time.Duration(*p.WaitTimeSeconds) * time.Second
	}
	return now.Add(wait)
}

// PollWait is a long poll's sleep between two looks at its queue, on clk
// (read at now). It returns true when wake delivers (a send or a message
// becoming visible), at deadline or at next (the queue's next delay or
// visibility timeout ending; zero for none), whichever comes first, or when
// stop or broken closes (the broker drains or fails; either may be nil):
// the caller looks again. It returns false when ctx ends first: the client
// is gone, and the caller gives up its place among the waiters.
func PollWait(ctx context.Context, clk Clock, now, deadline, next time.Time, wake, stop, broken <-chan struct{}) bool {
	wakeAt := deadline
	if !next.IsZero() && next.Before(wakeAt) {
		wakeAt = next
	}
	timer := clk.NewTimer(wakeAt.Sub(now))
	defer timer.Stop()
	select {
	case <-wake:
	case <-timer.C():
	case <-ctx.Done():
		return false
	case <-stop:
	case <-broken:
	}
	return true
}

// Drainer is a broker's drain signal (Broker.Drain), ready at its zero
// value: once drained, every waiting long poll returns (empty) and later
// receives return without waiting.
type Drainer struct {
	init, drain sync.Once
	ch          chan struct{}
}

func (d *Drainer) c() chan struct{} {
	d.init.Do(func() { d.ch = make(chan struct{}) })
	return d.ch
}

// Drain closes the signal; later calls do nothing.
func (d *Drainer) Drain() { d.drain.Do(func() { close(d.c()) }) }

// Done is closed once Drain has been called.
func (d *Drainer) Done() <-chan struct{} { return d.c() }

// Draining reports whether Drain has been called.
func (d *Drainer) Draining() bool {
	select {
	case <-d.c():
		return true
	default:
		return false
	}
}
