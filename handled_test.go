package tidemq

import (
	"testing"
	"time"
)

func TestChangeVisibilityDecide(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	secs := func(n int) *int { return &n }
	inflight := Handled{Receipt: Receipt{Count: 2}, ReceiveCount: 2, Inflight: true, ReceivedAt: now.Add(-time.Hour)}
	ready := Handled{Receipt: Receipt{Count: 1}, ReceiveCount: 2, Ready: true, ReceivedAt: now.Add(-time.Hour)}
	fifoOld := inflight
	fifoOld.FIFO, fifoOld.Receipt.Count = true, 1
	delayed := Handled{Receipt: Receipt{Count: 1}, ReceiveCount: 1}
	for _, c := range []struct {
		name    string
		h       Handled
		timeout *int
		want    VisibilityChange
		code    *ErrorCode
	}{
		{"extend", inflight, secs(30), VisibilityChange{Write: true, VisibleAt: now.Add(30 * time.Second)}, nil},
		{"release", inflight, secs(0), VisibilityChange{Write: true, Release: true, VisibleAt: now}, nil},
		{"batch entry without a timeout releases", inflight, nil, VisibilityChange{Write: true, Release: true, VisibleAt: now}, nil},
		{"0 on a ready message changes nothing", ready, secs(0), VisibilityChange{VisibleAt: now}, nil},
		{"an old handle hides a ready message again", ready, secs(10), VisibilityChange{Write: true, VisibleAt: now.Add(10 * time.Second)}, nil},
		{"gone", Handled{Gone: true}, secs(10), VisibilityChange{}, ErrInvalidParameterValue},
		{"FIFO: an older receive's handle", fifoOld, secs(10), VisibilityChange{}, ErrInvalidParameterValue},
		{"delayed", delayed, secs(10), VisibilityChange{}, ErrMessageNotInflight},
		{"beyond 12 hours from the receive", inflight, secs(MaxVisibilityTimeout), VisibilityChange{}, ErrInvalidParameterValue},
	} {
		e := ChangeVisibilityEntry{ReceiptHandle: "h", VisibilityTimeout: c.timeout}
		got, err := e.Decide(c.h, now)
		if c.code != nil {
			if !HasCode(err, c.code) {
				t.Errorf("%s: error %v, want %s", c.name, err, c.code.Code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
}

func TestHandledStale(t *testing.T) {
	h := Handled{Receipt: Receipt{Count: 1}, ReceiveCount: 2}
	if h.Stale() || h.Latest() {
		t.Error("standard queue: any handle acts; an older one is not the latest")
	}
	h.FIFO, h.Receipt.Count, h.Inflight = true, 2, true
	if h.Stale() {
		t.Error("FIFO: the latest handle of a message in flight acts")
	}
	h.Inflight = false
	if !h.Stale() {
		t.Error("FIFO: a handle whose visibility timeout ran out is stale")
	}
}
