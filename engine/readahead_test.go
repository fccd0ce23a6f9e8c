package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// readSeeks is a store that counts the seeks of reads of message records:
// one for a scan of a range (ScanRange), one a key for ReadEach. A
// read-ahead scan seeks once for the records of many groups' pages, which
// lie side by side; a page read record by record seeks once a record.
type readSeeks struct {
	storage.Store
	seeks int
}

func (s *readSeeks) ScanRange(start, end []byte, fn func(k, v []byte) error) error {
	if bytes.HasPrefix(start, []byte(prefixMessage)) && !bytes.Equal(start, canaryKey()) {
		s.seeks++
	}
	return storage.ScanRange(s.Store, start, end, fn)
}

func (s *readSeeks) ReadEach(keys [][]byte, fn func(i int, v []byte) error) error {
	if len(keys) > 0 && bytes.HasPrefix(keys[0], []byte(prefixMessage)) {
		s.seeks += len(keys)
	}
	return storage.ReadEach(s.Store, keys, fn)
}

// openPagedFIFO opens an engine on store paging with pageSize, and sends
// perGroup messages to each of groups groups of a FIFO queue of each
// name, the groups in turn: bodies and deduplication ids g<k>-<n>, n from
// 0 in each group (wantInOrder's).
func openPagedFIFO(t *testing.T, store storage.Store, pageSize, groups, perGroup int, names ...string) (*Engine, *clocktest.Clock) {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1, PageSize: pageSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	for _, name := range names {
		if _, err := e.CreateQueue(context.Background(), tidemq.CreateQueueParams{Name: name, Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
			t.Fatal(err)
		}
		sendTens(t, e, name, groups*perGroup, func(j int) tidemq.SendEntry {
			g, n := fmt.Sprintf("g%02d", j%groups), j/groups
			body := g + "-" + strconv.Itoa(n)
			return tidemq.SendEntry{Body: body, MessageGroupID: g, MessageDeduplicationID: body}
		})
	}
	return e, clk
}

// A FIFO queue whose 16 groups were sent to in turn reads its paged
// messages a range at a time for all the groups, not record by record for
// each group's page, and delivers every group in order; with the
// read-ahead bounded to nothing, it reads them record by record, as
// before.
func TestFIFOReadAheadReadsARangeForEveryGroup(t *testing.T) {
	const groups, perGroup, pageSize = 16, 60, 64 // group pages of 4 messages
	for _, c := range []struct {
		name  string
		ahead bool
	}{{name: "read-ahead", ahead: true}, {name: "record by record"}} {
		t.Run(c.name, func(t *testing.T) {
			store := &readSeeks{Store: mem.New()}
			e, clk := openPagedFIFO(t, store, pageSize, groups, perGroup, "q.fifo")
			if !c.ahead {
				e.ahead.max = 1
			}
			env := &fifoEnv{t: t, ctx: context.Background(), clk: clk, e: e}
			store.seeks = 0
			got := env.drain()
			for g := 0; g < groups; g++ {
				name := fmt.Sprintf("g%02d", g)
				wantInOrder(t, got[name], name, 0, perGroup)
			}
			paged := groups * (perGroup - pageSize/16) // every group's messages after its window
			if c.ahead && store.seeks > paged/5 {
				t.Errorf("%d seeks to read %d paged messages, want at most a fifth", store.seeks, paged)
			}
			if !c.ahead && store.seeks < paged {
				t.Errorf("%d seeks to read %d paged messages without the read-ahead, want one a message", store.seeks, paged)
			}
			if e.ahead.bytes != 0 { // every record read ahead was taken by its group
				t.Errorf("drained: %d bytes left in the read-aheads", e.ahead.bytes)
			}
		})
	}
}

// aheadAccount checks the engine's account of the read-aheads against
// the queues' own: the bytes of every record held, and the queues that
// hold some.
func aheadAccount(t *testing.T, e *Engine) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	total, holders := 0, 0
	for _, q := range e.queues {
		n := 0
		for _, v := range q.ahead.records {
			n += len(v)
		}
		if n != q.ahead.bytes {
			t.Fatalf("queue %s: %d bytes held, %d counted", q.name, n, q.ahead.bytes)
		}
		if _, listed := e.ahead.queues[q]; listed != (q.ahead.records != nil) {
			t.Fatalf("queue %s: listed %v with records %v", q.name, listed, q.ahead.records != nil)
		}
		total += n
		if q.ahead.records != nil {
			holders++
		}
	}
	if total != e.ahead.bytes || holders != len(e.ahead.queues) {
		t.Fatalf("the engine counts %d bytes in %d queues; they hold %d in %d", e.ahead.bytes, len(e.ahead.queues), total, holders)
	}
}

// Two FIFO queues drained in turn under an engine bound that holds one
// read-ahead at a time: each scan makes room by dropping the other's, the
// account stays exact, and both deliver every group in order. A purge
// and a DeleteQueue of queues holding records give their bytes back.
func TestFIFOReadAheadsShareTheEngineBound(t *testing.T) {
	const groups, perGroup, pageSize = 8, 60, 64
	e, _ := openPagedFIFO(t, mem.New(), pageSize, groups, perGroup, "a.fifo", "b.fifo", "c.fifo", "d.fifo")
	e.ahead.totalMax = 4000 // about one scan's worth
	ctx := context.Background()
	got := map[string]map[string][]string{"a.fifo": {}, "b.fifo": {}, "c.fifo": {}, "d.fifo": {}}
	receive := func(queue string) bool {
		n := receiveAndDelete(t, e, queue, got[queue])
		aheadAccount(t, e)
		return n > 0
	}
	// c and d take a read-ahead each (one page read each), and keep it.
	for _, name := range []string{"c.fifo", "d.fifo"} {
		for i := 0; i < 8; i++ {
			receive(name)
		}
	}
	for more := true; more; {
		a, b := receive("a.fifo"), receive("b.fifo")
		more = a || b
	}
	for _, queue := range []string{"a.fifo", "b.fifo"} {
		for g := 0; g < groups; g++ {
			name := fmt.Sprintf("g%02d", g)
			wantInOrder(t, got[queue][name], name, 0, perGroup)
		}
	}
	// Records held by c and d (if the others' scans left them any) go
	// with a purge and a delete.
	if err := e.PurgeQueue(ctx, tidemq.PurgeQueueParams{Queue: "c.fifo"}); err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteQueue(ctx, tidemq.DeleteQueueParams{Queue: "d.fifo"}); err != nil {
		t.Fatal(err)
	}
	aheadAccount(t, e)
	if e.ahead.bytes != 0 {
		t.Fatalf("%d bytes left in read-aheads", e.ahead.bytes)
	}
}

// The sweep drops a read-ahead that no page read used for aheadIdle (a
// queue whose consumers stopped), keeps one in use, and the queue then
// delivers the rest in order, reading it again.
func TestIdleReadAheadIsDropped(t *testing.T) {
	const groups, perGroup, pageSize = 8, 40, 64
	e, clk := openPagedFIFO(t, mem.New(), pageSize, groups, perGroup, "q.fifo")
	got := map[string][]string{}
	receive := func() int { return receiveAndDelete(t, e, "q.fifo", got) }
	held := func() int { e.mu.Lock(); defer e.mu.Unlock(); return e.ahead.bytes }
	for held() == 0 {
		receive() // until a page read scanned ahead
	}
	clk.Advance(aheadIdle - time.Second)
	e.Sweep()
	if held() == 0 {
		t.Fatal("the sweep dropped a read-ahead used a moment ago")
	}
	clk.Advance(time.Second)
	e.Sweep()
	if n := held(); n != 0 {
		t.Fatalf("a read-ahead unused for %v: %d bytes left", aheadIdle, n)
	}
	aheadAccount(t, e)
	for receive() > 0 {
	}
	for g := 0; g < groups; g++ {
		name := fmt.Sprintf("g%02d", g)
		wantInOrder(t, got[name], name, 0, perGroup)
	}
}
