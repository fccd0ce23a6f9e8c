package alarms_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
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

// The pages of GET /tidemq/alarms, read one after the other, are every
// alarm in Alarms' order (firing first), whatever the page size, each
// page at most its limit.
func TestPages(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(start)
	eng := openEngine(t, clk)
	for i := range 40 {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: fmt.Sprintf("q%02d", i)})
		must(t, err)
	}
	for _, name := range []string{"a-dlq", "z-dlq"} {
		_, err := eng.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name})
		must(t, err)
		send(t, eng, name)
	}
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Visit: eng.Visit, Clock: clk, Logger: quiet,
		Marks: func() []alarms.Mark {
			return []alarms.Mark{{Alarm: alarms.DiskLow, Value: 1, Threshold: 2}}
		}})
	ev.Evaluate()
	clk.Advance(time.Minute)
	ev.Evaluate()
	want := ev.Alarms()
	if len(want) < 150 || want[0].State != alarms.StateFiring || want[1].State != alarms.StateFiring {
		t.Fatalf("%d alarms, the first %+v: the scenario tests nothing", len(want), want[:2])
	}
	for _, limit := range []int{1, 7, 100, len(want), alarms.MaxPageSize} {
		var got []alarms.Alarm
		token, pages := "", 0
		for {
			page, next, err := ev.Page(limit, token)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page))
			}
			got = append(got, page...)
			pages++
			if next == "" {
				break
			}
			if pages > len(want)+1 {
				t.Fatalf("limit %d: the pages do not end", limit)
			}
			token = next
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: %d alarms in %d pages differ from the %d of Alarms", limit, len(got), pages, len(want))
		}
	}
	if _, _, err := ev.Page(10, "!!"); err == nil {
		t.Error("an invalid token gave no error")
	}
	// Over HTTP: the default page is PageSize; limit and nextToken apply.
	rec := httptest.NewRecorder()
	ev.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/alarms?limit=5", nil))
	var l alarms.List
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Alarms) != 5 || l.NextToken == "" {
		t.Fatalf("?limit=5: %d alarms, nextToken %q, %v", len(l.Alarms), l.NextToken, err)
	}
	rec = httptest.NewRecorder()
	ev.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tidemq/alarms?limit=100000", nil))
	if rec.Code != 400 {
		t.Errorf("?limit=100000: status %d, want 400", rec.Code)
	}
}

// A visit that fails part way (PostgreSQL's Visit reads a page per
// transaction: a later page can fail after the first ones were evaluated)
// skips what needs every queue (resolving the alarms of queues not seen),
// but the transitions it already made to the queues it saw are announced:
// their state is kept, so the next evaluation makes no transition for them
// and the webhook would never hear that the alarm fires.
func TestVisitFailingPartWayAnnouncesWhatItChanged(t *testing.T) {
	clk := clocktest.New(start)
	depth := 0
	fail := false
	visit := func(f func(*tidemq.QueueSnapshot)) bool {
		s := tidemq.QueueSnapshot{Name: "orders-dlq", IsDeadLetterQueue: true, Visible: depth, RetentionSeconds: 345600}
		f(&s)        // the first page
		return !fail // a later one fails
	}
	rec := &recorder{}
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return nil }, Visit: visit, Clock: clk, Webhook: rec, Logger: quiet})
	ev.Evaluate()
	depth, fail = 1, true
	for range 3 {
		clk.Advance(time.Minute)
		ev.Evaluate()
	}
	fail = false
	clk.Advance(time.Minute)
	ev.Evaluate()
	firing := 0
	for _, a := range ev.Alarms() {
		if a.Queue == "orders-dlq" && a.State == alarms.StateFiring {
			firing++
		}
	}
	if firing == 0 {
		t.Fatal("orders-dlq fires no alarm with a message in it: the scenario tests nothing")
	}
	if n := rec.count(); n != firing {
		t.Errorf("the webhook heard %d transitions, want the %d firing alarms of orders-dlq", n, firing)
	}
}
