package clocktest

import (
	"testing"
	"time"
)

func TestTimersFireOnAdvance(t *testing.T) {
	c := New(time.Unix(1000, 0))
	a := c.NewTimer(2 * time.Second)
	b := c.NewTimer(5 * time.Second)
	stopped := c.NewTimer(3 * time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop of a pending timer reported false")
	}
	c.Advance(2 * time.Second)
	select {
	case got := <-a.C():
		if !got.Equal(time.Unix(1002, 0)) {
			t.Fatalf("timer fired with %v", got)
		}
	default:
		t.Fatal("due timer did not fire")
	}
	select {
	case <-b.C():
		t.Fatal("timer fired early")
	default:
	}
	if n := c.Timers(); n != 1 {
		t.Fatalf("Timers() = %d, want 1", n)
	}
	go func() { c.NewTimer(time.Second) }()
	if !c.WaitForTimers(2, 5*time.Second) {
		t.Fatal("WaitForTimers did not see the new timer")
	}
}
