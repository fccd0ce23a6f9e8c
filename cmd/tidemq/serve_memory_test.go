package main

import (
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/storage/diskguard"
)

// Above --max-memory, sends are refused with a retryable error while
// receives and deletes drain the queue; below it again, sends go on.
func TestSendsRefusedWhileMemoryIsHigh(t *testing.T) {
	rss := uint64(100 << 20)
	g := &memGuard{max: 512 << 20, read: func() uint64 { return rss }, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	g.check()
	checkSendGuard(t, func(b tidemq.Broker) tidemq.Broker { return &memGuarded{Broker: b, g: g} }, func(refuse bool) {
		rss = 200 << 20
		if refuse {
			rss = 600 << 20
		}
		g.check()
	}, "--max-memory")
	if residentBytes() == 0 {
		t.Fatal("the process's resident memory reads 0")
	}
}

// The memory and disk marks raise the memory_high and disk_low alarms
// while they refuse sends.
func TestMarkAlarmsFollowTheGuards(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	rss := uint64(100 << 20)
	mem := &memGuard{max: 512 << 20, read: func() uint64 { return rss }, log: quiet}
	mem.check()
	free := uint64(1 << 30)
	disk := diskguard.New(t.TempDir(), 128<<20, quiet)
	disk.SetStatfs(func(string) (uint64, error) { return free, nil })
	disk.Check()
	if guardMarks(nil, nil) != nil {
		t.Fatal("marks with both guards off")
	}
	ev := alarms.New(alarms.Options{Snapshots: func() []tidemq.QueueSnapshot { return []tidemq.QueueSnapshot{} }, Marks: guardMarks(mem, disk), Logger: quiet})
	firing := func() []string {
		var out []string
		for _, a := range ev.Alarms() {
			if a.State == alarms.StateFiring {
				out = append(out, a.Alarm)
			}
		}
		return out
	}
	ev.Evaluate()
	if f := firing(); len(f) != 0 {
		t.Fatalf("firing with memory and disk fine: %v", f)
	}
	rss, free = 600<<20, 64<<20
	mem.check()
	disk.Check()
	ev.Evaluate()
	if f := firing(); !slices.Equal(f, []string{alarms.MemoryHigh, alarms.DiskLow}) {
		t.Fatalf("firing with memory high and disk low: %v", f)
	}
	rss, free = 200<<20, 1<<30
	mem.check()
	disk.Check()
	ev.Evaluate()
	if f := firing(); len(f) != 0 {
		t.Fatalf("firing once both recovered: %v", f)
	}
}
