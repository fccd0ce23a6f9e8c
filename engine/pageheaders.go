package engine

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tidemq/tidemq/storage"
)

// Page headers: what a clean shutdown leaves so that the next start-up
// does not read the backlog (see the package comment, # Memory).
//
// Close writes, in its last batch, one record per paged queue with its
// pages and the sequences of the messages it held in memory within the
// pages' span, and a marker. Nothing writes engine keys after that batch,
// so at the next load the records describe the store exactly: the pages'
// messages are every record in their ranges except the listed ones. Load
// then reads the message records outside the pages' ranges and the listed
// ones (what was in memory), not the pages. It deletes the marker and the
// records in its own cleanup batch, which is synced before the engine
// writes anything else: a crash after that start-up finds no headers and
// reads every record, as before (the headers would be stale by then).
//
//	p/                     marker: headers valid (headersVersion)
//	p/<qid>                page headers of one queue (encodeHeaders)

const (
	prefixHeaders  = "p/"
	headersVersion = 1
)

// queueHeaders is what load takes from a queue's headers record.
type queueHeaders struct {
	pages   []page
	hot     []uint64 // in memory at shutdown, within a page's range; sorted
	nextSeq uint64
	dead    int   // paged messages that were dead-lettered into the queue
	bytes   int64 // the paged messages' size (queue.bytes)
}

// inPage reports whether seq lies in one of h's pages and was not in memory.
func (h *queueHeaders) inPage(seq uint64) bool {
	i, _ := slices.BinarySearchFunc(h.pages, seq, func(p page, seq uint64) int {
		if p.hi <= seq {
			return -1
		}
		return 1
	})
	if i == len(h.pages) || h.pages[i].lo > seq {
		return false
	}
	_, hot := slices.BinarySearch(h.hot, seq)
	return !hot
}

// writeHeaders adds the page headers of every paged queue, and the marker,
// to b. Called by Close with e.mu held, once nothing else can write.
func (e *Engine) writeHeaders(b storage.Batch) {
	n := 0
	for _, q := range e.queues {
		if q.cold.n == 0 {
			continue
		}
		h := queueHeaders{pages: q.cold.pages, nextSeq: q.nextSeq, dead: q.nDeadLettered, bytes: q.bytes}
		for seq, m := range q.msgs {
			h.bytes -= int64(m.size())
			if q.cold.find(seq) >= 0 {
				h.hot = append(h.hot, seq)
			}
			if m.dlqSource != "" {
				h.dead--
			}
		}
		slices.Sort(h.hot)
		b.Set(idKey(prefixHeaders, q.id), encodeHeaders(&h))
		n++
	}
	if n > 0 {
		b.Set([]byte(prefixHeaders), []byte{headersVersion})
	}
}

// readHeaders returns the page headers a clean shutdown left, by queue id,
// or nil when there are none (a crash, an older version, or no paging),
// and adds their removal to cleanup.
func (e *Engine) readHeaders(cleanup storage.Batch) (map[uint64]*queueHeaders, error) {
	valid, found := false, false
	out := make(map[uint64]*queueHeaders)
	err := e.store.Scan([]byte(prefixHeaders), func(k, v []byte) error {
		found = true
		if len(k) == len(prefixHeaders) {
			valid = len(v) == 1 && v[0] == headersVersion
			return nil
		}
		if !valid || len(k) != len(prefixHeaders)+8 {
			return nil
		}
		h, err := decodeHeaders(v)
		if err != nil {
			return fmt.Errorf("page headers %x: %w", k, err)
		}
		out[binary.BigEndian.Uint64(k[len(prefixHeaders):])] = h
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found {
		cleanup.DeleteRange([]byte(prefixHeaders), []byte("p0")) // '0' follows '/'
	}
	if !valid || e.pageSize == 0 {
		return nil, nil
	}
	return out, nil
}

func encodeHeaders(h *queueHeaders) []byte {
	e := encoder{b: make([]byte, 0, 16+8*len(h.pages)+3*len(h.hot))}
	e.b = append(e.b, headersVersion)
	e.uint(h.nextSeq)
	e.uint(uint64(h.dead))
	e.uint(uint64(h.bytes))
	e.uint(uint64(len(h.pages)))
	prev := uint64(0)
	for _, p := range h.pages {
		e.uint(p.lo - prev)
		e.uint(p.hi - p.lo)
		e.uint(uint64(p.n))
		e.int(int64(p.oldest))
		prev = p.hi
	}
	e.uint(uint64(len(h.hot)))
	prev = 0
	for _, s := range h.hot {
		e.uint(s - prev)
		prev = s
	}
	return e.b
}

func decodeHeaders(b []byte) (*queueHeaders, error) {
	if len(b) == 0 || b[0] != headersVersion {
		return nil, errCorrupt
	}
	d := decoder{b: b[1:]}
	h := &queueHeaders{nextSeq: d.uint(), dead: int(d.uint()), bytes: int64(d.uint())}
	n := d.uint()
	if n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	prev := uint64(0)
	for i := uint64(0); i < n && d.err == nil; i++ {
		lo := prev + d.uint()
		p := page{lo: lo, hi: lo + d.uint(), n: int(d.uint()), oldest: stamp(d.int())}
		if p.hi <= p.lo || p.n <= 0 || uint64(p.n) > p.hi-p.lo {
			return nil, errCorrupt
		}
		h.pages = append(h.pages, p)
		prev = p.hi
	}
	n = d.uint()
	if n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	prev = 0
	for i := uint64(0); i < n && d.err == nil; i++ {
		prev += d.uint()
		h.hot = append(h.hot, prev)
	}
	return h, d.err
}

// installHeaders makes q's backlog the pages of h, counted as ready.
func (q *queue) installHeaders(h *queueHeaders) {
	q.cold.pages = h.pages
	for _, p := range h.pages {
		q.cold.n += p.n
	}
	q.cold.tidy()
	q.nReady += q.cold.n
	q.nDeadLettered += h.dead
	q.bytes += h.bytes
	q.nextSeq = max(q.nextSeq, h.nextSeq)
}

// headerGaps returns the key ranges of m/ that load reads when some queues
// have headers: all of m/ but the pages' ranges. The hot messages inside
// those ranges are read one by one (headerHot).
func headerGaps(headers map[uint64]*queueHeaders) [][2][]byte {
	qids := make([]uint64, 0, len(headers))
	for qid := range headers {
		qids = append(qids, qid)
	}
	slices.Sort(qids)
	var gaps [][2][]byte
	start := []byte(prefixMessage)
	for _, qid := range qids {
		for _, p := range headers[qid].pages {
			gaps = append(gaps, [2][]byte{start, seqKey(prefixMessage, qid, p.lo)})
			start = seqKey(prefixMessage, qid, p.hi)
		}
	}
	return append(gaps, [2][]byte{start, []byte("m0")}) // '0' follows '/'
}
