package engine

import (
	"bytes"
	"fmt"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// Read-ahead of a FIFO queue's paged messages (fifopage.go).
//
// A group's page holds messages that the queue's other groups interleave:
// with 64 groups sent to in turn, the 256 messages of a page lie among
// 16,384 of the queue, each in a different block of the store, and the
// other groups read the same blocks again for their own pages soon after.
// Reading a page message by message cost a block read (and decompression)
// a message: a FIFO queue of 64 groups received about 0.6x as fast at a
// depth of 1,000,000 as at 1,000, where every group fits in memory. So a page read
// whose range is dense enough with the queue's messages reads the whole
// range in one scan and keeps the message records of the other groups'
// pages (readAhead) for their page reads, which take them from there.
//
// Invariants:
//   - A message record (m/<qid><seq>) is written once, when the message is
//     sent or moved in under a new sequence, and deleted once: a kept
//     record is the store's for as long as the message lives, and a page
//     read asks only for live messages (scanGroupRun leaves out those in
//     memory and those whose delete is being written).
//   - A record leaves the read-ahead when a page read takes it; the rest
//     are dropped when the queue's read-ahead would grow past aheadBytes
//     (a new scan starts afresh), when the engine's would pass
//     aheadTotalBytes (the other queues' are dropped; if that is not
//     enough, the read goes record by record), by the sweep when no page
//     read used it for aheadIdle, and with the queue (purge, delete, a
//     reload of the state). e.ahead.bytes is the sum of the queues'
//     sizes, and e.ahead.queues the queues with records.
type readAhead struct {
	records map[uint64][]byte
	bytes   int
	// used is when a page read last used it (dropIdleAhead).
	used stamp
	// hi is where the last scan stopped (0: none since the last drop): a
	// page read that ends below it scans nothing, and one that goes on
	// past it scans on from it. Records below it may be missing (a gap
	// a scan jumped, a message in memory when its range was scanned and
	// paged out since): they are read one by one.
	hi uint64
}

const (
	// aheadDensity is how many of the queue's messages a page's range may
	// hold for each message of the page for one scan to read it: about
	// the number of groups that share the range. A block of the store
	// holds about a dozen messages of 256 bytes, so a scan of a range
	// this sparse reads some 10 times the blocks that the page's own
	// messages are in, which pays when the other groups read their pages
	// from the read-ahead.
	aheadDensity = 128
	// aheadBytes bounds a queue's read-ahead, and aheadTotalBytes the
	// engine's.
	aheadBytes      = 32 << 20
	aheadTotalBytes = 128 << 20
	// aheadIdle is how long a read-ahead no page read uses is kept: the
	// sweep drops it then (a queue whose consumers stopped).
	aheadIdle = 10 * time.Second
)

// readMessages calls fn with the message record of each of seqs (in
// ascending order, the live messages of a group's page p that are not in
// memory), in any order (i says which): from the read-ahead, after one
// scan that extends it over the rest of their range (keeping the other
// records it meets), or one by one.
func (q *queue) readMessages(p page, seqs []uint64, fn func(i int, v []byte) error) error {
	a := &q.ahead
	a.used = stampOf(q.e.clock.Now())
	q.scanAhead(p, seqs)
	var missing []int
	for i, seq := range seqs {
		v, ok := a.records[seq]
		if !ok {
			missing = append(missing, i)
			continue
		}
		q.takeAhead(seq, v)
		if err := fn(i, v); err != nil {
			return err
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// Records the read-ahead does not have: a message that was in memory
	// when a scan passed it and was paged out since, a record dropped with
	// the read-ahead, a gap a scan jumped, or a range too sparse to scan.
	keys := make([][]byte, len(missing))
	for j, i := range missing {
		keys[j] = seqKey(prefixMessage, q.id, seqs[i])
	}
	return storage.ReadEach(q.e.store, keys, func(j int, v []byte) error { return fn(missing[j], v) })
}

// scanAhead extends q's read-ahead over the range of seqs (page p's live
// messages) that it has not scanned yet, in one scan, when the range is
// dense enough with messages (aheadDensity) and their records fit the
// bounds.
func (q *queue) scanAhead(p page, seqs []uint64) {
	a := &q.ahead
	lo, hi := seqs[0], seqs[len(seqs)-1]+1
	if hi <= a.hi {
		return // scanned already
	}
	if span := hi - lo; span > aheadDensity*uint64(len(seqs)) || p.n == 0 {
		return
	}
	e := q.e
	size := int(p.bytes/int64(p.n) + 64) // a record is a bit larger than its message's size
	from := lo
	if lo < a.hi || (a.hi > 0 && lo-a.hi <= hi-lo) {
		from = a.hi // on from the scanned range, leaving no gap the other groups' pages may fall in
	}
	if a.bytes+int(hi-from)*size > e.ahead.max {
		q.dropAhead() // afresh, from the page's first message
		from = lo
	}
	est := int(hi-from) * size
	if est > e.ahead.max {
		return
	}
	if e.ahead.bytes+est > e.ahead.totalMax {
		for other := range e.ahead.queues { // the others' make room
			if other != q {
				other.dropAhead()
			}
		}
		if e.ahead.bytes+est > e.ahead.totalMax {
			return
		}
	}
	if a.records == nil {
		a.records = make(map[uint64][]byte)
		e.ahead.queues[q] = struct{}{}
	}
	err := storage.ScanRange(q.e.store, seqKey(prefixMessage, q.id, from), seqKey(prefixMessage, q.id, hi), func(k, v []byte) error {
		qid, seq, ok := parseSeqKey(prefixMessage, k)
		if !ok || qid != q.id {
			return errCorrupt
		}
		if _, hot := q.msgs[seq]; hot {
			return nil
		}
		a.records[seq] = bytes.Clone(v)
		a.bytes += len(v)
		e.ahead.bytes += len(v)
		return nil
	})
	if err != nil {
		panic(fmt.Sprintf("engine: read the backlog of queue %s: %v", q.name, err))
	}
	a.hi = hi
}

// takeAhead removes seq's record v from q's read-ahead.
func (q *queue) takeAhead(seq uint64, v []byte) {
	delete(q.ahead.records, seq)
	q.ahead.bytes -= len(v)
	q.e.ahead.bytes -= len(v)
}

// dropAhead empties q's read-ahead.
func (q *queue) dropAhead() {
	a := &q.ahead
	if a.records == nil {
		return
	}
	q.e.ahead.bytes -= a.bytes
	delete(q.e.ahead.queues, q)
	a.records, a.bytes, a.hi = nil, 0, 0
}

// aheadState is the engine's account of its queues' read-aheads.
type aheadState struct {
	bytes  int                 // the size of every queue's read-ahead
	queues map[*queue]struct{} // the queues that have one
	// max and totalMax are aheadBytes and aheadTotalBytes (tests make
	// them smaller).
	max, totalMax int
}

// dropIdleAhead drops the read-aheads that no page read used since
// aheadIdle before now. Called by the sweep.
func (e *Engine) dropIdleAhead(now time.Time) {
	for q := range e.ahead.queues {
		if now.Sub(q.ahead.used.Time()) >= aheadIdle {
			q.dropAhead()
		}
	}
}
