package engine

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tidemq/tidemq/storage"
)

// FIFO checkpoints: a FIFO queue's group pages in the checkpoint, so that
// a start-up does not read them (checkpoint.go has the standard queue's,
// and the marker and canary that guard both).
//
// A standard page is a range of its queue's records, which load skips. A
// FIFO group's page is a range of one group's index keys (fifopage.go),
// whose messages lie among other groups' records, so the checkpoint of a
// FIFO queue covers the whole front of the queue's records instead:
//
//	p/<qid>        the queue's head (encodeFIFOHead): hi, the queue's next
//	               sequence when it was written, and hot, the sequences
//	               of the messages in memory then
//	p/<qid><lo>    a page of one group (encodeGroupPage): its group, range
//	               and numbers, and whether some of its messages may have a
//	               receive state; once the page is dropped, only its group
//	               and range
//
// What the head claims, "every record of the queue below hi is a hot
// message's, a message of a page listed here, or a message of a page
// listed as dropped", stays true while the head is on disk:
//
//   - A message written later has a sequence of hi or more: sends and
//     moves (dead-letter moves, move tasks) take the queue's next
//     sequence.
//   - A hot message stays in memory until it leaves the queue (its
//     records are deleted then): nothing pages out a message that was in
//     memory but its publication, and a message published after the head
//     was written may join a page in memory without the head saying so,
//     which only costs a read (load reads it as a hot one).
//   - A page's messages change only once read into memory (fillGroup,
//     pageInGroupOne, expireGroups), and every such read drops the page
//     (droppedGroup): its record is replaced by a dropped one in the next
//     batch committed, which is in the log before any write that depends
//     on the read (batches commit in lock order). So what a listed page
//     claims, "its group's index keys in [lo, hi) that are not hot are n
//     ready messages, of these bytes, with no receive state unless
//     states", is exact, as a standard page's is.
//   - Purge and queue deletion delete the queue's p/ keys with its
//     messages. A dropped record written after the range deletion in the
//     same batch is harmless: pages without a head are not used.
//
// At start-up, load skips the queue's records below hi (their receive
// states too, but the hot ones'), installs the listed pages, reads each
// hot sequence, and reads into memory, as hot ones, the messages of each
// dropped page (its group's index keys in its range below hi that are
// neither hot nor in an installed page), with their receive states. What
// it reads is then what was in memory, or read, since the head was
// written, not the backlog. Records from hi on are read as after a crash
// with no checkpoint: their ready messages are paged again after their
// group's installed pages, which all lie below hi. A whole checkpoint
// (load, Close) or the sweep's, for a queue whose pages changed
// (q.cold.changed), writes the head and pages again.

// ckFIFO is a FIFO queue's part of a checkpoint.
type ckFIFO struct {
	hi    uint64
	hot   []uint64      // sorted
	pages []ckGroupPage // by lo
}

// ckGroupPage is a group's page as a checkpoint has it.
type ckGroupPage struct {
	page
	group   string
	dropped bool // read since: only its group and range are kept
}

// isHot reports whether seq was in memory when the checkpoint was written.
func (f *ckFIFO) isHot(seq uint64) bool {
	_, ok := slices.BinarySearch(f.hot, seq)
	return ok
}

// covers reports whether load leaves seq's records to the checkpoint:
// they lie below hi and were not in memory.
func (f *ckFIFO) covers(seq uint64) bool { return seq < f.hi && !f.isHot(seq) }

// droppedGroup records that page p of g is no longer what the last
// checkpoint says: its record becomes a dropped one, whose messages a
// start-up reads.
func (q *queue) droppedGroup(g *group, p page) {
	q.cold.changed = true
	q.e.ck.drops = append(q.e.ck.drops, ckDrop{k: pageKey(q.id, p.lo), v: encodeGroupPage(p, g.id, true)})
	q.e.ck.changes += p.n
}

// writeGroupPages adds q's head and group pages to b (writeCheckpoint),
// when q has pages.
func (q *queue) writeGroupPages(b storage.Batch) {
	if len(q.groups.cold) == 0 {
		return
	}
	hot := make([]uint64, 0, len(q.msgs))
	for seq := range q.msgs {
		hot = append(hot, seq)
	}
	slices.Sort(hot)
	b.Set(idKey(prefixHeaders, q.id), encodeFIFOHead(q.nextSeq, hot))
	for g := range q.groups.cold {
		for _, p := range g.cold.pages {
			b.Set(pageKey(q.id, p.lo), encodeGroupPage(p, g.id, false))
		}
	}
}

// encodeFIFOHead encodes a FIFO queue's head (the key holds its id).
func encodeFIFOHead(hi uint64, hot []uint64) []byte {
	e := encoder{b: make([]byte, 0, 16+3*len(hot))}
	e.uint(hi)
	e.uint(uint64(len(hot)))
	prev := uint64(0)
	for _, s := range hot {
		e.uint(s - prev)
		prev = s
	}
	return e.b
}

func decodeFIFOHead(b []byte) (*ckFIFO, error) {
	d := decoder{b: b}
	f := &ckFIFO{hi: d.uint()}
	n := d.uint()
	if n > uint64(len(d.b)) {
		return nil, errCorrupt
	}
	f.hot = make([]uint64, 0, n)
	prev := uint64(0)
	for i := uint64(0); i < n && d.err == nil; i++ {
		delta := d.uint()
		if i > 0 && delta == 0 {
			return nil, errCorrupt
		}
		prev += delta
		if prev >= f.hi {
			return nil, errCorrupt
		}
		f.hot = append(f.hot, prev)
	}
	if d.err == nil && len(d.b) > 0 {
		return nil, errCorrupt
	}
	return f, d.err
}

// Flags of a group page record.
const (
	groupPageStates  = 1 << iota // page.states
	groupPageDropped             // read since the checkpoint
)

// encodeGroupPage encodes page p of group (the key holds p.lo); a dropped
// one keeps only its group and range.
func encodeGroupPage(p page, group string, dropped bool) []byte {
	e := encoder{b: make([]byte, 0, 32+len(group))}
	var flags uint64
	if p.states {
		flags |= groupPageStates
	}
	if dropped {
		flags |= groupPageDropped
	}
	e.uint(flags)
	e.str(group)
	e.uint(p.hi - p.lo)
	if !dropped {
		e.uint(uint64(p.n))
		e.int(int64(p.oldest))
		e.uint(uint64(p.bytes))
		e.uint(uint64(p.dead))
	}
	return e.b
}

func decodeGroupPage(lo uint64, b []byte) (*ckGroupPage, error) {
	d := decoder{b: b}
	flags := d.uint()
	p := &ckGroupPage{group: d.str(), dropped: flags&groupPageDropped != 0}
	p.lo, p.hi = lo, lo+d.uint()
	p.states = flags&groupPageStates != 0
	if !p.dropped {
		p.n, p.oldest, p.bytes, p.dead = int(d.uint()), stamp(d.int()), int64(d.uint()), int(d.uint())
	}
	if d.err != nil {
		return nil, d.err
	}
	if flags >= groupPageDropped<<1 || p.hi <= p.lo || len(d.b) > 0 ||
		!p.dropped && (p.n <= 0 || uint64(p.n) > p.hi-p.lo || p.dead > p.n || p.bytes < 0) {
		return nil, errCorrupt
	}
	return p, nil
}

// checkFIFO reports what makes a FIFO queue's checkpoint unusable: a page
// past its head's hi, or two pages of a group that overlap.
func checkFIFO(qid uint64, f *ckFIFO) error {
	last := make(map[string]uint64) // the end of each group's last page
	for _, p := range f.pages {
		if p.dropped {
			// It may have been made after the head, and dropped since:
			// load reads its messages below hi (those above are read
			// anyway).
			continue
		}
		if p.hi > f.hi {
			return fmt.Errorf("checkpoint page %d/%d of group %q ends past the queue's head", qid, p.lo, p.group)
		}
		if end, ok := last[p.group]; ok && p.lo < end {
			return fmt.Errorf("checkpoint pages of group %q of queue %d overlap at %d", p.group, qid, p.lo)
		}
		last[p.group] = p.hi
	}
	return nil
}

// installGroups makes the pages of f (but the dropped ones) q's groups'
// pages: their messages count as ready, with their bytes. Called before
// any of q's records are read.
func (q *queue) installGroups(f *ckFIFO) {
	for _, p := range f.pages {
		if p.dropped {
			continue
		}
		g := q.groups.group(p.group)
		g.cold.pages = append(g.cold.pages, p.page)
		g.cold.n += p.n
		q.countInstalled(p.page)
		q.groups.markCold(g)
	}
	for g := range q.groups.cold {
		g.cold.tidy()
	}
	q.coldOldest()
	q.nextSeq = max(q.nextSeq, f.hi)
	q.markBusy()
}

// fifoReads returns the message keys load reads of q besides its records
// from f.hi on: the hot sequences, and the messages of the dropped pages
// that are neither hot nor in an installed page, in key order. Called
// right after installGroups, while q's groups have only the installed
// pages.
func (q *queue) fifoReads(f *ckFIFO) ([][]byte, error) {
	seqs := slices.Clone(f.hot)
	for _, p := range f.pages {
		if !p.dropped {
			continue
		}
		g := q.groups.groups[p.group]
		hi := min(p.hi, f.hi)
		if p.lo >= hi {
			continue
		}
		err := storage.ScanRange(q.e.store, groupKey(q.id, p.group, p.lo), groupKey(q.id, p.group, hi), func(k, _ []byte) error {
			seq, ok := groupKeySeq(k)
			if !ok {
				return errCorrupt
			}
			if !f.isHot(seq) && (g == nil || g.cold.find(seq) < 0) {
				seqs = append(seqs, seq)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("group index of queue %d: %w", q.id, err)
		}
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	keys := make([][]byte, len(seqs))
	for i, seq := range seqs {
		keys[i] = seqKey(prefixMessage, q.id, seq)
	}
	return keys, nil
}

// fifoHeadKey reports whether k is a FIFO queue's head key, and its queue.
func fifoHeadKey(k []byte) (uint64, bool) {
	if len(k) != len(prefixHeaders)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(prefixHeaders):]), true
}
