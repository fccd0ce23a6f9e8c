package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// deleteCounter is a store whose batches count their deletes, point and
// range, under one prefix.
type deleteCounter struct {
	storage.Store
	prefix         string
	points, range_ int
}

func (s *deleteCounter) NewBatch() storage.Batch { return &countedBatch{s.Store.NewBatch(), s} }

type countedBatch struct {
	storage.Batch
	s *deleteCounter
}

func (b *countedBatch) Delete(k []byte) {
	if strings.HasPrefix(string(k), b.s.prefix) {
		b.s.points++
	}
	b.Batch.Delete(k)
}

func (b *countedBatch) DeleteRange(start, end []byte) {
	if strings.HasPrefix(string(start), b.s.prefix) {
		b.s.range_++
	}
	b.Batch.DeleteRange(start, end)
}

// windowRecords counts the store's deduplication records under prefix.
func windowRecords(t *testing.T, s storage.Store, prefix string) int {
	t.Helper()
	n := 0
	if err := s.Scan([]byte(prefix), func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// sendDistinct sends n FIFO messages with distinct deduplication ids
// (prefix0, prefix1, ...) to queue, in batches of ten.
func sendDistinct(t *testing.T, e *Engine, queue, prefix string, n int) {
	t.Helper()
	for i := 0; i < n; i += 10 {
		var entries []tidemq.SendEntry
		for j := i; j < min(i+10, n); j++ {
			id := fmt.Sprintf("%s%d", prefix, j)
			entries = append(entries, tidemq.SendEntry{ID: fmt.Sprint(j - i), Body: id, MessageGroupID: "g", MessageDeduplicationID: id})
		}
		res, err := e.SendMessages(context.Background(), tidemq.SendMessagesParams{Queue: queue, Entries: entries})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
}

// Issue 25: a pass that ends many deduplication windows at once (after a
// pause, or five minutes after a burst of sends) deletes their records
// with one range delete, not with one delete each in one batch; a pass
// that ends a few deletes them one by one. Either way none is left, and a
// restart remembers exactly the windows still open.
func TestDedupWindowsEndWithOneRangeDelete(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	store := &deleteCounter{Store: mem.New(), prefix: prefixWindow}
	open := func() *Engine {
		t.Helper()
		e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}

	// Few windows end in a pass: a delete each.
	sendDistinct(t, e, "f.fifo", "few", 20)
	clk.Advance(tidemq.DedupWindow + time.Second)
	e.Sweep()
	if store.points != 20 || store.range_ != 0 {
		t.Fatalf("20 windows ended: %d deletes and %d range deletes, want 20 and 0", store.points, store.range_)
	}
	if n := windowRecords(t, store, prefixWindow); n != 0 {
		t.Fatalf("%d records left after 20 windows ended", n)
	}

	// Many end in one pass: one range delete, whatever their number.
	store.points = 0
	sendDistinct(t, e, "f.fifo", "many", 3*massExpiry)
	clk.Advance(time.Minute)
	sendDistinct(t, e, "f.fifo", "late", 10) // their windows end a minute later
	if n := windowRecords(t, store, prefixWindow); n != 3*massExpiry+10 {
		t.Fatalf("%d records, want %d", n, 3*massExpiry+10)
	}
	clk.Advance(tidemq.DedupWindow - 30*time.Second)
	e.Sweep()
	if store.points != 0 || store.range_ != 1 {
		t.Fatalf("%d windows ended: %d deletes and %d range deletes, want 0 and 1", 3*massExpiry, store.points, store.range_)
	}
	if n := windowRecords(t, store, prefixWindow); n != 10 {
		t.Fatalf("%d records left, want the 10 whose windows are open", n)
	}

	// A restart remembers the open windows, and only them.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{
		{ID: "open", Body: "late3", MessageGroupID: "g", MessageDeduplicationID: "late3"},
		{ID: "ended", Body: "many7", MessageGroupID: "g", MessageDeduplicationID: "many7"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	q, _ := e.queue("f.fifo")
	dups := q.counts().Duplicates
	e.mu.Unlock()
	if dups != 1 {
		t.Fatalf("after the restart, %d duplicates of a send of an open and an ended id, want 1", dups)
	}
	if res[0].MessageID == res[1].MessageID {
		t.Fatal("the two sends got one message id")
	}
}

// A d/ record written before the w/ layout answers duplicates after the
// upgrade's start-up and is deleted when its window ends; the id's next
// send is recorded under w/.
func TestLegacyDedupRecordsAreReadAndEnd(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	store := mem.New()
	qid, key := closedFIFOQueue(t, store, clk, "old")
	rec, _ := json.Marshal(dedupRecord{MessageID: "0e5c1c9a-legacy", Seq: 7, Expires: clk.Now().Add(time.Minute)})
	e := openWithRecords(t, store, clk, map[string][]byte{string(dedupKey(qid, key)): rec})
	send := func() tidemq.SendResult {
		t.Helper()
		res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{
			{ID: "1", Body: "b", MessageGroupID: "g", MessageDeduplicationID: "old"}}})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	if r := send(); r.MessageID != "0e5c1c9a-legacy" {
		t.Fatalf("a send within the d/ record's window got message %q, want the recorded one", r.MessageID)
	}
	clk.Advance(2 * time.Minute)
	e.Sweep()
	if n := windowRecords(t, store, prefixDedup); n != 0 {
		t.Fatalf("%d d/ records after their window ended", n)
	}
	if r := send(); r.MessageID == "0e5c1c9a-legacy" {
		t.Fatal("a send after the d/ record's window ended was taken for a duplicate")
	}
	if n := windowRecords(t, store, prefixWindow); n != 1 {
		t.Fatalf("%d w/ records after a new send, want 1", n)
	}
}

// After a downgrade and an upgrade a key may have a w/ record and a later
// d/ one (the older release took the id again once the w/ window it could
// not see had ended): the window that ends later answers.
func TestLoadKeepsTheLaterWindowOfAKey(t *testing.T) {
	ctx := context.Background()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	store := mem.New()
	qid, key := closedFIFOQueue(t, store, clk, "k")
	early, late := clk.Now().Add(time.Minute), clk.Now().Add(3*time.Minute)
	fromW, _ := json.Marshal(dedupRecord{MessageID: "from-w", Seq: 1, Expires: early})
	fromD, _ := json.Marshal(dedupRecord{MessageID: "from-d", Seq: 2, Expires: late})
	e := openWithRecords(t, store, clk, map[string][]byte{
		string(windowKey(qid, early, key)): fromW,
		string(dedupKey(qid, key)):         fromD,
	})
	clk.Advance(2 * time.Minute) // the w/ window has ended, the d/ one has not
	res, err := e.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "f.fifo", Entries: []tidemq.SendEntry{
		{ID: "1", Body: "b", MessageGroupID: "g", MessageDeduplicationID: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].MessageID != "from-d" {
		t.Fatalf("a send within the later window got message %q, want from-d", res[0].MessageID)
	}
	if n := windowRecords(t, store, prefixWindow); n != 0 {
		t.Fatalf("%d w/ records after their window ended, want 0", n)
	}
}

// closedFIFOQueue creates queue f.fifo in store and closes its engine, so
// that a test can write records the engine will read at its next start;
// it returns the queue's id and the key of deduplication id dedup in
// group g.
func closedFIFOQueue(t *testing.T, store storage.Store, clk *clocktest.Clock, dedup string) (uint64, string) {
	t.Helper()
	e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: "f.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
		t.Fatal(err)
	}
	q, _ := e.queue("f.fifo")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return q.id, q.DedupKey("g", dedup)
}

// openWithRecords writes records (key to value) into store in one batch,
// as an earlier release or a crash may have left them, then opens an
// engine on it, closed when the test ends.
func openWithRecords(t *testing.T, store storage.Store, clk *clocktest.Clock, records map[string][]byte) *Engine {
	t.Helper()
	b := store.NewBatch()
	for k, v := range records {
		b.Set([]byte(k), v)
	}
	if _, err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
