package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/vfs"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
	"github.com/tidemq/tidemq/storage/pebble"
)

// A standard queue writes its sequence counter ahead (seqcounter.go), so
// a restart must still never hand out a sequence used before, even when
// every message that had it was deleted (nothing in the store but the
// counter remembers it) and even when the process died without Close. The
// sends of each life cross the counter's block (1,023, 1,025, 2,049
// messages), where a counter that was not written again would show. A
// FIFO queue's SequenceNumbers go on one by one, as before.
func TestSequencesNeverReusedAfterRestart(t *testing.T) {
	ctx := context.Background()
	lives := []int{1, 1023, 2, 1025, 2049, 3}
	for _, c := range []struct {
		name string
		// open opens the engine on the store as the last life left it;
		// die ends a life: Close, or a crash (nothing closed, and on
		// Pebble whatever was not synced is gone).
		open func(t *testing.T) *Engine
		die  func(t *testing.T, e *Engine, clean bool)
	}{
		{name: "memory", open: memLives(), die: func(t *testing.T, e *Engine, clean bool) {
			if clean {
				e.Close()
			} // else abandoned, as a killed process leaves it
		}},
		pebbleLives(),
	} {
		t.Run(c.name, func(t *testing.T) {
			var maxSeq, lastFIFO uint64
			for life, n := range lives {
				e := c.open(t)
				if life == 0 {
					for _, name := range []string{"s", "f.fifo"} {
						attrs := map[string]string{}
						if name == "f.fifo" {
							attrs = map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"}
						}
						if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: name, Attributes: attrs}); err != nil {
							t.Fatal(err)
						}
					}
				}
				for i := 0; i < n; i += 10 {
					var entries []tidemq.SendEntry
					for j := i; j < min(i+10, n); j++ {
						entries = append(entries, tidemq.SendEntry{ID: fmt.Sprint(j), Body: fmt.Sprint("life ", life, " message ", j)})
					}
					if _, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "s", Entries: entries, Batch: true}); err != nil {
						t.Fatal(err)
					}
				}
				q := e.queues["s"]
				if len(q.msgs) != n {
					t.Fatalf("life %d: %d messages in memory, want %d", life, len(q.msgs), n)
				}
				for seq := range q.msgs {
					if seq <= maxSeq {
						t.Fatalf("life %d: sequence %d handed out again (the lives before used up to %d)", life, seq, maxSeq)
					}
				}
				for seq := range q.msgs {
					maxSeq = max(maxSeq, seq)
				}
				drain(t, e, "s", n)
				for i := range 2 {
					res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{{ID: "0", Body: fmt.Sprint(life, i), MessageGroupID: "g"}}})
					if err != nil {
						t.Fatal(err)
					}
					var seq uint64
					fmt.Sscan(res[0].SequenceNumber, &seq)
					if lastFIFO != 0 && seq != lastFIFO+1 {
						t.Fatalf("life %d: FIFO SequenceNumber %d after %d, want the next one", life, seq, lastFIFO)
					}
					lastFIFO = seq
				}
				drain(t, e, "f.fifo", 2)
				c.die(t, e, life%2 == 1)
			}
		})
	}
}

// drain receives and deletes the n messages of queue.
func drain(t *testing.T, e *Engine, queue string, n int) {
	t.Helper()
	ctx := context.Background()
	for got := 0; got < n; {
		ms, err := e.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: queue, MaxNumberOfMessages: new(10)})
		if err != nil || len(ms) == 0 {
			t.Fatalf("receive from %s after %d of %d: %v", queue, got, n, err)
		}
		var del []tidemq.DeleteEntry
		for i, m := range ms {
			del = append(del, tidemq.DeleteEntry{ID: fmt.Sprint(i), ReceiptHandle: m.ReceiptHandle})
		}
		if _, err := e.DeleteMessages(ctx, tidemq.DeleteMessagesParams{Queue: queue, Entries: del}); err != nil {
			t.Fatal(err)
		}
		got += len(ms)
	}
}

// memLives opens every life on one memory store: a life that is not
// closed is simply abandoned.
func memLives() func(t *testing.T) *Engine {
	st := mem.New()
	return func(t *testing.T) *Engine {
		e, err := Open(Options{Store: st, SweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
}

// pebbleLives runs the lives on Pebble over a file system that keeps
// only what was synced when a life dies: a crash is the store and the
// engine closed with their writes from then on never synced, then
// everything unsynced dropped, as a kill -9 leaves the disk.
func pebbleLives() struct {
	name string
	open func(t *testing.T) *Engine
	die  func(t *testing.T, e *Engine, clean bool)
} {
	fs := vfs.NewStrictMem()
	// The store's directory, synced into its parent: a crash keeps it.
	if err := fs.MkdirAll("/db", 0o755); err != nil {
		panic(err)
	}
	if root, err := fs.OpenDir("/"); err != nil || root.Sync() != nil {
		panic(fmt.Sprint("sync /: ", err))
	}
	var st *pebble.Store
	return struct {
		name string
		open func(t *testing.T) *Engine
		die  func(t *testing.T, e *Engine, clean bool)
	}{
		name: "pebble",
		open: func(t *testing.T) *Engine {
			var err error
			if st, err = pebble.Open("/db", pebble.Options{FS: fs, IdleFlush: -1}); err != nil {
				t.Fatal(err)
			}
			e, err := Open(Options{Store: storage.Share(st), SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		die: func(t *testing.T, e *Engine, clean bool) {
			if !clean {
				fs.SetIgnoreSyncs(true)
			}
			e.Close()
			if !clean {
				fs.ResetToSyncedState()
				fs.SetIgnoreSyncs(false)
			}
		},
	}
}
