package main

import (
	"fmt"

	"github.com/tidemq/tidemq/alarms"
	"github.com/tidemq/tidemq/storage/diskguard"
)

// guardMarks returns the state of the high-water marks that are on (nil
// guards are off), for the memory_high and disk_low alarms; nil when both
// are off.
func guardMarks(mem *memGuard, disk *diskguard.Guard) func() []alarms.Mark {
	if mem == nil && disk == nil {
		return nil
	}
	return func() []alarms.Mark {
		var out []alarms.Mark
		if mem != nil {
			rss := mem.rss.Load()
			out = append(out, alarms.Mark{Alarm: alarms.MemoryHigh, Firing: mem.high.Load(), Value: float64(rss), Threshold: float64(mem.max),
				Summary: fmt.Sprintf("the server's resident memory is %d MiB, its limit %d MiB (--max-memory): sends are refused while it is above", rss>>20, mem.max>>20)})
		}
		if disk != nil {
			if free, ok := disk.Free(); ok {
				out = append(out, alarms.Mark{Alarm: alarms.DiskLow, Firing: disk.Low(), Value: float64(free), Threshold: float64(disk.Min()),
					Summary: fmt.Sprintf("the data directory's disk has %d MiB free, its minimum %d MiB (--min-free-disk): sends are refused while it is below", free>>20, disk.Min()>>20)})
			}
		}
		return out
	}
}
