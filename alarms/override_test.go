package alarms

import (
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// TestSetQueueOverride: an override set at run time keeps what the
// matching pattern set and changes only the fields it sets; the config
// given to New is not changed.
func TestSetQueueOverride(t *testing.T) {
	off, share := false, 0.25
	window := 5 * time.Minute
	cfg := DefaultConfig()
	cfg.Queues = map[string]Override{"orders*": {GrowthWindow: &window}}
	e := New(Options{Snapshots: func() []tidemq.QueueSnapshot { return nil }, Config: &cfg})
	e.SetQueueOverride("orders", Override{OldestAgeShare: &share})
	e.SetQueueOverride("orders", Override{DLQNotEmpty: &off})
	th := e.Thresholds("orders")
	if th.OldestAgeShare != 0.25 || th.DLQNotEmpty || th.GrowthWindow != window || th.NoReceive != Defaults.NoReceive {
		t.Errorf("orders: %+v", th)
	}
	if th := e.Thresholds("orders-2"); th.OldestAgeShare != Defaults.OldestAgeShare || th.GrowthWindow != window {
		t.Errorf("orders-2: %+v", th)
	}
	if _, ok := cfg.Queues["orders"]; ok {
		t.Error("the caller's config was changed")
	}
}
