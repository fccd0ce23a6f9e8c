package tidemq_test

import (
	"context"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
)

func TestPollDeadline(t *testing.T) {
	now := time.Unix(1000, 0)
	s := tidemq.QueueSettings{WaitTime: 20 * time.Second}
	if got := s.PollDeadline(tidemq.ReceiveMessagesParams{}, now); !got.Equal(now.Add(20 * time.Second)) {
		t.Errorf("without WaitTimeSeconds: %v, want the queue's 20s", got.Sub(now))
	}
	zero := 0
	if got := s.PollDeadline(tidemq.ReceiveMessagesParams{WaitTimeSeconds: &zero}, now); !got.Equal(now) {
		t.Errorf("WaitTimeSeconds 0: %v, want no wait", got.Sub(now))
	}
}

// pollWait runs PollWait in a goroutine and returns its answer's channel.
func pollWait(ctx context.Context, clk *clocktest.Clock, deadline, next time.Time, wake, stop chan struct{}) chan bool {
	done := make(chan bool, 1)
	now := clk.Now()
	go func() { done <- tidemq.PollWait(ctx, clk, now, deadline, next, wake, stop, nil) }()
	return done
}

func TestPollWaitWakesAtTheEarlierOfDeadlineAndNext(t *testing.T) {
	clk := clocktest.New(time.Unix(1000, 0))
	start := clk.Now()
	done := pollWait(context.Background(), clk, start.Add(20*time.Second), start.Add(5*time.Second), nil, nil)
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("PollWait set no timer")
	}
	clk.Advance(4 * time.Second)
	select {
	case <-done:
		t.Fatal("PollWait returned before the queue's next deadline")
	case <-time.After(20 * time.Millisecond):
	}
	clk.Advance(time.Second)
	if !<-done {
		t.Fatal("PollWait reported a cancelled wait at the next deadline")
	}
}

func TestPollWaitEnds(t *testing.T) {
	clk := clocktest.New(time.Unix(1000, 0))
	deadline := clk.Now().Add(20 * time.Second)
	wake, stop := make(chan struct{}), make(chan struct{})
	close(wake)
	if !<-pollWait(context.Background(), clk, deadline, time.Time{}, wake, nil) {
		t.Error("a wake: false")
	}
	close(stop)
	if !<-pollWait(context.Background(), clk, deadline, time.Time{}, nil, stop) {
		t.Error("a drain: false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if <-pollWait(ctx, clk, deadline, time.Time{}, nil, nil) {
		t.Error("a cancelled context: true, want false")
	}
	if n := clk.Timers(); n != 0 {
		t.Errorf("%d timers left running", n)
	}
}

func TestDrainer(t *testing.T) {
	var d tidemq.Drainer
	if d.Draining() {
		t.Fatal("a new Drainer is draining")
	}
	done := d.Done()
	d.Drain()
	d.Drain()
	if !d.Draining() {
		t.Fatal("not draining after Drain")
	}
	select {
	case <-done:
	default:
		t.Fatal("Done, taken before Drain, is not closed")
	}
}

func TestEveryRunsUntilStop(t *testing.T) {
	stop, ran, done := make(chan struct{}), make(chan struct{}, 1), make(chan struct{})
	n := 0
	go func() {
		tidemq.Every(time.Millisecond, stop, func() {
			n++
			if n == 3 {
				ran <- struct{}{}
			}
		})
		close(done)
	}()
	<-ran
	close(stop)
	<-done
	if n < 3 {
		t.Fatalf("ran %d times", n)
	}
}
