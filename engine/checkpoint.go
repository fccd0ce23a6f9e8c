package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/tidemq/tidemq/storage"
)

// Checkpoints: the page headers that let a start-up, after a clean
// shutdown or a crash, skip reading the paged backlog (see the package
// comment, # Memory).
//
// A checkpoint is one batch that writes one record per page of every
// paged queue, with its numbers (range, count, oldest enqueue stamp, bytes,
// dead-lettered count) and the sequences in its range that were in memory
// when it was written (hot), plus a marker. The engine writes a whole one
// (every p/ key replaced) at the end of every load and at Close, and from
// the sweep every CheckpointInterval (on the Clock), while messages were
// paged or pages read since the last one, one that rewrites only the
// queues whose pages changed (writeCheckpoint).
//
// What a page record claims, "the records of [lo, hi) but the hot ones are
// n ready messages, with no receive state that matters, of these bytes",
// stays true while the page's messages stay on disk: nothing writes to
// them. Its messages change only once they are read into memory (a refill,
// a receipt handle that names one, retention), and every such read drops
// the page: its p/ key is deleted by the next batch committed, which is in
// the log before any write that depends on the read (batches commit in
// lock order, and no other write can come first). Purge and queue deletion
// delete a queue's page records with its messages.
//
// A FIFO queue's pages are its groups', which are not ranges of its
// records: its part of a checkpoint is a head and group pages, and a
// page read is replaced by a dropped record rather than deleted
// (fifocheckpoint.go, where that argument is written out).
//
// So at start-up the page records found are exact, and load installs them
// without reading their messages, reads each hot sequence, and reads
// every other record as after a crash with no checkpoint: of a paged
// queue, the ready ones are paged again in sequence order between the
// installed pages, the others (in flight, delayed) are built in memory.
// What a crash costs is then what was written or read since the last
// checkpoint, not the backlog.
//
// The guard: a binary that does not know checkpoints (before page
// headers) would write messages, receives and deletes under a checkpoint
// without dropping its pages, and the next start-up would trust stale
// pages. Every whole checkpoint (each start-up writes one) therefore also
// writes a canary, a message record of queue id 0 (no queue has it) that
// holds the marker's value: every tidemq version's load deletes the
// records of a queue it does not know in the batch it commits before
// serving, so a start-up by an older binary removes the canary, and a
// checkpoint without its canary is not used. (The sweep's checkpoints
// leave marker and canary as they are: the canary stays valid until a
// start-up.)
// Binaries with page headers of version 1 delete the whole p/ range
// themselves (the marker's value is not theirs), and so does every later
// one on a marker of another version: version 4 added FIFO heads and
// group pages, which version 3 (FIFO paging without FIFO checkpoints)
// would not drop when it reads a group page in. A store last checkpointed
// by another version is read whole once, and its group index rebuilt.
//
//	p/                     marker: checkpointVersion, then the generation (8 bytes)
//	p/<qid>                a FIFO queue's head (encodeFIFOHead)
//	p/<qid><lo>            one page of queue qid starting at sequence lo (encodePage;
//	                       a FIFO group's: encodeGroupPage)
//	m/<0><0>               the canary: the marker's value
const (
	prefixHeaders     = "p/"
	checkpointVersion = 4
	// DefaultCheckpointInterval is how often the sweep writes a checkpoint
	// while the backlog changes: a crash reads about what was sent or
	// received since the last one.
	DefaultCheckpointInterval = 5 * time.Second
)

// checkpointState is the engine's checkpoint bookkeeping, guarded by e.mu.
type checkpointState struct {
	// drops are the p/ keys of pages read or changed since the last
	// checkpoint, with what replaces them (nil: nothing, a standard page;
	// a dropped record, a FIFO group's page); finish writes them with the
	// next batch it commits.
	drops []ckDrop
	// changes counts the messages paged, and those of pages dropped,
	// since the last checkpoint: what a crash would read that it need not.
	changes int
	gen     uint64 // the last checkpoint's generation
	// indexOK: at load, the group index can be trusted (readCheckpoint).
	indexOK bool
	last    time.Time // when it was written, on the Clock
}

// ckDrop is a page record to replace: deleted when v is nil.
type ckDrop struct{ k, v []byte }

// drop records that page p of queue qid is no longer what the last
// checkpoint says.
func (c *checkpointState) drop(qid uint64, p page) {
	c.drops = append(c.drops, ckDrop{k: pageKey(qid, p.lo)})
	c.changes += p.n
}

// flush adds the deletion (or replacement) of the dropped pages to b, the
// next batch to commit.
func (c *checkpointState) flush(b storage.Batch) {
	for _, d := range c.drops {
		if d.v == nil {
			b.Delete(d.k)
		} else {
			b.Set(d.k, d.v)
		}
	}
	c.drops = nil
}

func pageKey(qid, lo uint64) []byte { return seqKey(prefixHeaders, qid, lo) }

func canaryKey() []byte { return seqKey(prefixMessage, 0, 0) }

// ckPage is a page as a checkpoint has it.
type ckPage struct {
	page
	hot []uint64 // in memory when it was written, within [lo, hi); sorted
}

// covers reports whether seq is one of the paged messages of pages.
func covers(pages []ckPage, seq uint64) bool {
	i, _ := slices.BinarySearchFunc(pages, seq, func(p ckPage, seq uint64) int {
		if p.hi <= seq {
			return -1
		}
		return 1
	})
	if i == len(pages) || pages[i].lo > seq {
		return false
	}
	_, hot := slices.BinarySearch(pages[i].hot, seq)
	return !hot
}

// checkpointDue reports whether the sweep at now writes a checkpoint.
func (e *Engine) checkpointDue(now time.Time) bool {
	return e.pageSize > 0 && e.checkpointEvery > 0 && (e.ck.changes > 0 || len(e.ck.drops) > 0) &&
		!now.Before(e.ck.last.Add(e.checkpointEvery))
}

// writeCheckpoint adds a checkpoint of the current state to b. With all
// it replaces every p/ key (load and Close); else it rewrites the pages of
// the queues whose backlog changed since the last one, and keeps the
// others' records, which are still exact: a queue whose pages were neither
// added to nor dropped has the same pages, and a sequence listed as hot
// that has left memory since is read and found gone, or in flight, as any
// record outside the pages is. Called with e.mu held, as the last writes
// of the batch (they describe memory after the batch's other writes).
func (e *Engine) writeCheckpoint(b storage.Batch, all bool) {
	e.ck.drops, e.ck.changes, e.ck.last = nil, 0, e.clock.Now()
	if all {
		b.DeleteRange([]byte(prefixHeaders), []byte("p0")) // '0' follows '/'
	}
	for _, q := range e.queues {
		if !all && !q.cold.changed {
			continue
		}
		q.cold.changed = false
		if !all {
			start, end := queueRange(prefixHeaders, q.id)
			b.DeleteRange(start, end)
		}
		if q.fifo {
			q.writeGroupPages(b) // fifocheckpoint.go
			continue
		}
		if len(q.cold.pages) == 0 {
			continue
		}
		var hot map[int][]uint64
		for seq := range q.msgs {
			if i := q.cold.find(seq); i >= 0 {
				if hot == nil {
					hot = make(map[int][]uint64)
				}
				hot[i] = append(hot[i], seq)
			}
		}
		for i, p := range q.cold.pages {
			h := hot[i]
			slices.Sort(h)
			b.Set(pageKey(q.id, p.lo), encodePage(p, h))
		}
	}
	if all {
		// The marker and the canary, written again only with a whole
		// checkpoint: the sweep's leaves them (and the message keys'
		// neighbourhood) alone.
		e.ck.gen++
		marker := binary.BigEndian.AppendUint64([]byte{checkpointVersion}, e.ck.gen)
		b.Set([]byte(prefixHeaders), marker)
		b.Set(canaryKey(), marker)
	}
}

// readCheckpoint returns the pages of the last checkpoint by queue id, a
// standard queue's and a FIFO queue's (fifocheckpoint.go), or nil when
// there is none that can be trusted (none written, an older version's, or
// its canary gone), and adds the removal of every p/ key and of the canary
// to cleanup (load writes a new checkpoint after it).
func (e *Engine) readCheckpoint(cleanup storage.Batch) (map[uint64][]ckPage, map[uint64]*ckFIFO, error) {
	var marker []byte
	found := false
	var damaged error // a page that does not decode: the checkpoint is not used
	out := make(map[uint64][]ckPage)
	heads := make(map[uint64]*ckFIFO)
	gpages := make(map[uint64][]ckGroupPage)
	fifo := func(qid uint64) bool { q := e.byID[qid]; return q != nil && q.fifo }
	// damage keeps the first record that does not decode.
	damage := func(what string, k []byte, err error) {
		if damaged == nil {
			damaged = fmt.Errorf("checkpoint %s %x: %w", what, k, err)
		}
	}
	err := e.store.Scan([]byte(prefixHeaders), func(k, v []byte) error {
		found = true
		if len(k) == len(prefixHeaders) {
			marker = bytes.Clone(v)
			return nil
		}
		if qid, ok := fifoHeadKey(k); ok {
			if !fifo(qid) {
				return nil
			}
			f, err := decodeFIFOHead(v)
			if err != nil {
				damage("head", k, err)
				return nil
			}
			heads[qid] = f
			return nil
		}
		if len(k) != len(prefixHeaders)+16 {
			return nil
		}
		qid, lo, _ := parseSeqKey(prefixHeaders, k)
		if fifo(qid) {
			p, err := decodeGroupPage(lo, v)
			if err != nil {
				damage("group page", k, err)
				return nil
			}
			gpages[qid] = append(gpages[qid], *p)
			return nil
		}
		p, err := decodePage(lo, v)
		if err != nil {
			damage("page", k, err)
			return nil
		}
		out[qid] = append(out[qid], *p)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if found {
		cleanup.DeleteRange([]byte(prefixHeaders), []byte("p0"))
	}
	var canary []byte
	err = e.store.Scan(canaryKey(), func(k, v []byte) error {
		if bytes.Equal(k, canaryKey()) {
			canary = bytes.Clone(v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if canary != nil {
		cleanup.Delete(canaryKey())
	}
	if len(marker) != 9 || marker[0] != checkpointVersion {
		return nil, nil, nil // none, or an older version's (its pages are left unused)
	}
	e.ck.gen = binary.BigEndian.Uint64(marker[1:])
	// The FIFO group index (fifopage.go) is exact when no other binary
	// ran since the last start-up: the same guard as the pages'.
	e.ck.indexOK = bytes.Equal(canary, marker)
	if !bytes.Equal(canary, marker) {
		e.log.Warn("checkpoint not used: its canary is gone (an older tidemq ran on this store since); reading every message")
		return nil, nil, nil
	}
	if e.pageSize == 0 {
		return nil, nil, nil
	}
	for qid, pages := range out {
		for i := 1; i < len(pages) && damaged == nil; i++ {
			if pages[i].lo < pages[i-1].hi {
				damaged = fmt.Errorf("checkpoint pages of queue %d overlap at %d", qid, pages[i].lo)
			}
		}
	}
	// A FIFO queue's pages are used only with its head (a purge deletes
	// the head, and may leave a dropped record after it).
	for qid, f := range heads {
		f.pages = gpages[qid]
		if err := checkFIFO(qid, f); err != nil && damaged == nil {
			damaged = err
		}
	}
	if damaged != nil {
		// Only an optimisation is lost: every message record is intact.
		e.log.Warn("checkpoint not used: it is damaged; reading every message", "err", damaged)
		return nil, nil, nil
	}
	return out, heads, nil
}

// encodePage encodes page p and its hot sequences (the key holds p.lo).
func encodePage(p page, hot []uint64) []byte {
	e := encoder{b: make([]byte, 0, 24+3*len(hot))}
	e.uint(p.hi - p.lo)
	e.uint(uint64(p.n))
	e.int(int64(p.oldest))
	e.uint(uint64(p.bytes))
	e.uint(uint64(p.dead))
	e.uint(uint64(len(hot)))
	prev := p.lo
	for _, s := range hot {
		e.uint(s - prev)
		prev = s
	}
	return e.b
}

func decodePage(lo uint64, b []byte) (*ckPage, error) {
	d := decoder{b: b}
	p := &ckPage{page: page{lo: lo, hi: lo + d.uint(), n: int(d.uint()), oldest: stamp(d.int()), bytes: int64(d.uint()), dead: int(d.uint())}}
	if d.err == nil && (p.hi <= p.lo || p.n <= 0 || uint64(p.n) > p.hi-p.lo || p.dead > p.n || p.bytes < 0) {
		return nil, errCorrupt
	}
	n := d.uint()
	if n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	prev := lo
	for i := uint64(0); i < n && d.err == nil; i++ {
		prev += d.uint()
		if prev >= p.hi || (i > 0 && prev == p.hot[len(p.hot)-1]) {
			return nil, errCorrupt
		}
		p.hot = append(p.hot, prev)
	}
	if d.err == nil && len(d.b) > 0 {
		return nil, errCorrupt
	}
	return p, d.err
}

// install makes p, from a checkpoint, the next page of q's backlog: its
// messages count as ready, with their bytes.
func (q *queue) install(p page) {
	q.markBusy()
	q.cold.pages = append(q.cold.pages, p)
	q.countInstalled(p)
	q.nextSeq = max(q.nextSeq, p.hi)
}

// countInstalled counts the messages of p, a page a checkpoint installs
// (a standard queue's or a FIFO group's), as paged ready messages, with
// their bytes.
func (q *queue) countInstalled(p page) {
	q.cold.n += p.n
	q.nReady += p.n
	q.nDeadLettered += p.dead
	q.bytes += p.bytes
}
