package tidemq

import "time"

// Clock is the only source of time for anything that has a deadline:
// visibility timeouts, delays, retention, the deduplication window, the
// receive-attempt cache and the purge cooldown all read it. Tests inject a
// fake clock (see clocktest) and advance it instead of sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d after Now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer created by a Clock.
type Timer interface {
	// C delivers the time once, when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing. It reports whether it stopped
	// the timer before it fired.
	Stop() bool
}

// SystemClock is the Clock of the real world.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (SystemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }

// Every runs fn every interval of real time until stop closes: a broker's
// sweep, which applies retention on queues nobody reads. The ticks missed
// while fn runs are dropped, so runs never pile up; the interval is the
// operator's, not a deadline of the Clock's.
func Every(interval time.Duration, stop <-chan struct{}, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
		}
	}
}
