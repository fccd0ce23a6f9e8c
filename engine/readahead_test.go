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
			clk := clocktest.New(time.Unix(1_700_000_000, 0))
			e, err := Open(Options{Store: store, Clock: clk, SweepInterval: -1, PageSize: pageSize})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if !c.ahead {
				e.ahead.max = 1
			}
			ctx := context.Background()
			if _, err := e.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q.fifo", Attributes: map[string]string{"FifoQueue": "true"}}); err != nil {
				t.Fatal(err)
			}
			sendTens(t, e, "q.fifo", groups*perGroup, func(j int) tidemq.SendEntry {
				g, n := fmt.Sprintf("g%02d", j%groups), j/groups
				body := g + "-" + strconv.Itoa(n)
				return tidemq.SendEntry{Body: body, MessageGroupID: g, MessageDeduplicationID: body}
			})
			env := &fifoEnv{t: t, ctx: ctx, clk: clk, e: e}
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
