package alarms_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
)

// Shown returns what a /metrics scrape needs of the alarms: every firing
// one, those of the queues it names, and one of each name; no others.
func TestShown(t *testing.T) {
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%d", i), Attributes: map[string]string{"MessageRetentionPeriod": "60"}})
		must(t, err)
	}
	send(t, eng, "q7")
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if got := ev.Shown([]string{"q1"}); len(got) != 0 {
		t.Fatalf("before any evaluation: %+v", got)
	}
	ev.Evaluate()
	clk.Advance(31 * time.Second)
	ev.Evaluate() // q7's oldest message is past half its retention
	all := ev.Alarms()
	names := map[string]bool{}
	for _, a := range all {
		names[a.Alarm] = true
	}
	got := ev.Shown([]string{"q1", "q2"})
	seen := map[string]bool{}
	byName := map[string]bool{}
	for _, a := range got {
		k := a.Alarm + "/" + a.Queue
		if seen[k] {
			t.Errorf("%s twice", k)
		}
		seen[k] = true
		byName[a.Alarm] = true
	}
	for _, a := range all {
		k := a.Alarm + "/" + a.Queue
		if (a.State == alarms.StateFiring || a.Queue == "q1" || a.Queue == "q2") && !seen[k] {
			t.Errorf("%s (%s) missing", k, a.State)
		}
	}
	if !seen[alarms.OldestAge+"/q7"] {
		t.Fatalf("the firing alarm is not shown: %+v", got)
	}
	for n := range names {
		if !byName[n] {
			t.Errorf("no alarm named %s shown", n)
		}
	}
	if max := 2*len(names) + len(names) + 1; len(got) > max || len(got) >= len(all) {
		t.Fatalf("%d alarms shown of %d: more than the named queues', the firing and one of each name", len(got), len(all))
	}
}
