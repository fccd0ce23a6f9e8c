package alarms_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// The server's high-water marks are alarms of their own, with no queue:
// memory_high fires while the memory mark refuses sends, and resolves
// when it stops; a mark that is turned off resolves and goes.
func TestMarkAlarms(t *testing.T) {
	clk := clocktest.New(start)
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	marks := []alarms.Mark{
		{Alarm: alarms.MemoryHigh, Value: 100, Threshold: 512},
		{Alarm: alarms.DiskLow, Value: 1 << 30, Threshold: 128 << 20},
		{Alarm: "not_a_mark", Firing: true}, // not a server alarm: ignored
	}
	ev := alarms.New(alarms.Options{Snapshots: eng.Snapshot, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ev.SetMarks(func() []alarms.Mark { return marks })
	if got := ev.Evaluate(); len(got) != 0 {
		t.Fatalf("transitions with both marks low: %+v", got)
	}
	marks[0].Firing, marks[0].Value = true, 600
	clk.Advance(time.Second)
	got := ev.Evaluate()
	if len(got) != 1 || got[0].Alarm.Alarm != alarms.MemoryHigh || got[0].State != alarms.StateFiring || got[0].Queue != "" || got[0].Value != 600 || got[0].Threshold != 512 {
		t.Fatalf("transitions with memory high: %+v", got)
	}
	if alarms.AlertName(alarms.MemoryHigh) != "TidemqMemoryHigh" || alarms.AlertName(alarms.DiskLow) != "TidemqDiskLow" {
		t.Fatal("alert names")
	}
	firing := 0
	for _, a := range ev.Alarms() {
		if a.State == alarms.StateFiring {
			firing++
		}
		if a.Alarm == "not_a_mark" {
			t.Fatalf("an unknown mark was evaluated: %+v", a)
		}
	}
	if firing != 1 {
		t.Fatalf("%d alarms firing, want 1: %+v", firing, ev.Alarms())
	}
	marks[0].Firing = false
	clk.Advance(time.Second)
	if got := ev.Evaluate(); len(got) != 1 || got[0].Alarm.Alarm != alarms.MemoryHigh || got[0].State != alarms.StateOK {
		t.Fatalf("transitions once memory fell: %+v", got)
	}
	marks[1].Firing = true
	clk.Advance(time.Second)
	if got := ev.Evaluate(); len(got) != 1 || got[0].Alarm.Alarm != alarms.DiskLow || got[0].State != alarms.StateFiring {
		t.Fatalf("transitions with the disk low: %+v", got)
	}
	ev.SetMarks(nil)
	clk.Advance(time.Second)
	if got := ev.Evaluate(); len(got) != 1 || got[0].Alarm.Alarm != alarms.DiskLow || got[0].State != alarms.StateOK {
		t.Fatalf("transitions once the marks are off: %+v", got)
	}
	if as := ev.Alarms(); len(as) != 0 {
		t.Fatalf("alarms left once the marks are off: %+v", as)
	}
}
