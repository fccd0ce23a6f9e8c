package alarms_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
)

// An evaluator that visits the engine's queues one at a time (Visit, what
// `tidemq serve` wires) reaches the same states and transitions as one
// given the slice of every snapshot; and an alarm read back later (made
// from what its queue's state keeps) says what its transition said.
func TestVisitEvaluatesAsSnapshots(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	for i := range 300 { // more than one of the engine's chunks
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%03d", i)})
		must(t, err)
	}
	_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "orders-dlq"})
	must(t, err)
	cfg := alarms.DefaultConfig()
	cfg.Queues = map[string]alarms.Override{"q1*": {NoReceive: new(2 * time.Minute)}}
	bySnapshots := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Config: &cfg, Logger: quiet})
	byVisit := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Visit: eng.Visit, Clock: clk, Config: &cfg, Logger: quiet})
	fired := 0
	for round := range 8 {
		switch round {
		case 1:
			send(t, eng, "orders-dlq")
			send(t, eng, "q005")
			send(t, eng, "q150")
		case 3:
			send(t, eng, "q150")
			receive(t, eng, "orders-dlq")
		}
		a, b := bySnapshots.Evaluate(), byVisit.Evaluate()
		sortTransitions(a)
		sortTransitions(b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round %d: transitions differ:\nsnapshots %+v\nvisit     %+v", round, a, b)
		}
		if x, y := bySnapshots.Alarms(), byVisit.Alarms(); !reflect.DeepEqual(x, y) {
			t.Fatalf("round %d: alarms differ", round)
		}
		current := map[string]alarms.Alarm{}
		for _, al := range byVisit.Alarms() {
			current[al.Queue+"/"+al.Alarm] = al
		}
		for _, tr := range b {
			if tr.State != alarms.StateFiring {
				continue
			}
			fired++
			if got := current[tr.Queue+"/"+tr.Alarm.Alarm]; !reflect.DeepEqual(got, tr.Alarm) {
				t.Errorf("round %d: alarm read back\n%+v\nits transition\n%+v", round, got, tr.Alarm)
			}
		}
		clk.Advance(time.Minute)
	}
	if fired < 2 {
		t.Fatalf("%d alarms fired, want the DLQ's and q150's (the scenario tests nothing)", fired)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func sortTransitions(ts []alarms.Transition) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Queue != ts[j].Queue {
			return ts[i].Queue < ts[j].Queue
		}
		return ts[i].Alarm.Alarm < ts[j].Alarm.Alarm
	})
}
