package tidemq

import "testing"

func TestMoveRuleOf(t *testing.T) {
	for _, c := range []struct {
		kind string
		fifo bool
		want MoveRule
	}{
		{HistoryDeadLetter, false, MoveRule{DLQSource: "src"}},
		{HistoryDeadLetter, true, MoveRule{DLQSource: "src", DedupFromID: true, RestartRetention: true, Group: "default"}},
		{HistoryCaptured, false, MoveRule{RestartRetention: true}},
		{HistoryMoved, false, MoveRule{NewID: true, ResetReceives: true, RestartRetention: true}},
		{HistoryMoved, true, MoveRule{NewID: true, ResetReceives: true, RestartRetention: true, Group: "default"}},
	} {
		if got := MoveRuleOf(c.kind, "src", c.fifo); got != c.want {
			t.Errorf("%s fifo=%v: %+v, want %+v", c.kind, c.fifo, got, c.want)
		}
	}
}

func TestApplyMove(t *testing.T) {
	type stamp int64
	dlq, group, receives := "", "", 3
	first, last, enq := stamp(1), stamp(2), stamp(3)
	ApplyMove(MoveRuleOf(HistoryDeadLetter, "src", true), stamp(9), &dlq, &group, &receives, &first, &last, &enq)
	if dlq != "src" || group != "default" || receives != 3 || first != 1 || last != 2 || enq != 9 {
		t.Errorf("dead-letter into FIFO: %q %q %d %d %d %d", dlq, group, receives, first, last, enq)
	}
	group = "g"
	ApplyMove(MoveRuleOf(HistoryMoved, "dlq", false), stamp(10), &dlq, &group, &receives, &first, &last, &enq)
	if dlq != "src" || group != "g" || receives != 0 || first != 0 || last != 0 || enq != 10 {
		t.Errorf("redrive: %q %q %d %d %d %d", dlq, group, receives, first, last, enq)
	}
}
