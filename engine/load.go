package engine

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// load rebuilds the in-memory state from the store: queues, counters,
// messages with their receive state, and open deduplication windows. A
// message in flight before the restart stays in flight until its deadline.
// A page that cannot be read (paging panics, see page.go) is an error.
func (e *Engine) load() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	cleanup := e.store.NewBatch()
	err = e.store.Scan([]byte(keyNextQueue), func(k, v []byte) error {
		if string(k) == keyNextQueue && len(v) == 8 {
			e.nextQueueID = binary.BigEndian.Uint64(v)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = e.store.Scan([]byte(keyHandleSecret), func(k, v []byte) error {
		if string(k) == keyHandleSecret && len(v) == 32 {
			e.handleKey = append([]byte(nil), v...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if e.handleKey == nil {
		e.handleKey = make([]byte, 32)
		if _, err := rand.Read(e.handleKey); err != nil {
			return err
		}
		cleanup.Set([]byte(keyHandleSecret), e.handleKey)
	}
	err = e.store.Scan([]byte(prefixQueue), func(k, v []byte) error {
		var r queueRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("queue record %q: %w", k, err)
		}
		q := e.newQueue(r.ID, r.Name, r.FIFO)
		q.applyAttributes(r.Attributes)
		if r.Tags != nil {
			q.tags = r.Tags
		}
		q.created, q.modified, q.purged = stampOf(r.Created), stampOf(r.Modified), stampOf(r.Purged)
		e.addQueue(q)
		if q.id > e.nextQueueID {
			e.nextQueueID = q.id
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = e.store.Scan([]byte(prefixCounter), func(k, v []byte) error {
		if q := e.byID[binary.BigEndian.Uint64(k[len(prefixCounter):])]; q != nil && len(v) == 8 {
			q.nextSeq = binary.BigEndian.Uint64(v)
			q.seqLimit = q.nextSeq
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The pages of the last checkpoint, for the queues that can use them
	// (checkpoint.go).
	e.ck.indexOK = false
	ck, fck, err := e.readCheckpoint(cleanup)
	if err != nil {
		return err
	}
	// The FIFO group index (fifopage.go) is rebuilt from the messages when
	// another binary may have written since the last start-up: in its own
	// batch, committed before any page is read.
	var index storage.Batch
	if e.pageSize > 0 && !e.ck.indexOK {
		index = e.store.NewBatch()
		index.DeleteRange([]byte(prefixGroup), []byte("g0")) // '0' follows '/'
	}
	for qid := range ck {
		if q := e.byID[qid]; q == nil || q.pageSize() == 0 {
			delete(ck, qid)
		}
	}
	for qid := range fck {
		if q := e.byID[qid]; q == nil || q.groupPageSize() == 0 {
			delete(fck, qid)
		}
	}
	now := e.clock.Now()
	// Receive states first, so that the message pass knows which messages
	// are in flight. Of a paged queue only the states of messages that
	// stay in memory are kept: those in flight, and those whose visibility
	// timeout ran out while the server was down (their history is written
	// below). The others are read again when their page is.
	type seqOf struct{ qid, seq uint64 }
	states := make(map[seqOf][]byte)
	err = e.store.Scan([]byte(prefixState), func(k, v []byte) error {
		qid, seq, ok := parseSeqKey(prefixState, k)
		q := e.byID[qid]
		if !ok || q == nil {
			cleanup.Delete(k) // left behind by a deleted queue
			return nil
		}
		if pages := ck[qid]; pages != nil && covers(pages, seq) {
			// The states of a checkpoint page's messages are read with
			// their page.
			return nil
		}
		if f := fck[qid]; f != nil && f.covers(seq) {
			// Those of a FIFO checkpoint's pages too; those of its
			// dropped pages' messages are read with the message
			// (fifocheckpoint.go).
			return nil
		}
		if q.paged() {
			// The history is decoded only when it decides (a dead-letter
			// queue's messages have a state but no visibility deadline).
			var m message
			if err := peekState(&m, v); err != nil {
				return fmt.Errorf("message state %d/%d: %w", qid, seq, err)
			}
			if m.ReceiveCount == 0 || m.VisibleAt == 0 {
				return nil
			}
			if m.VisibleAt <= stampOf(now) {
				if err := decodeState(&m, v); err != nil {
					return fmt.Errorf("message state %d/%d: %w", qid, seq, err)
				}
				if !m.expiredWhileDown(now) {
					return nil
				}
			}
		}
		states[seqOf{qid, seq}] = append([]byte(nil), v...)
		return nil
	})
	if err != nil {
		return err
	}
	loaded := make(map[*queue][]*message)
	type queued struct {
		q *queue
		m *message
	}
	// unread are messages of paged queues built in memory without the
	// state the pass above did not keep: delayed ones, and the hot ones of
	// checkpoint pages. Their states are read below.
	var unread []queued
	e.loadedRecords = 0
	visitRecord := func(k, v []byte, hot bool) error {
		e.loadedRecords++
		qid, seq, ok := parseSeqKey(prefixMessage, k)
		q := e.byID[qid]
		if !ok || q == nil {
			cleanup.Delete(k) // left behind by a deleted queue (or the canary: see readCheckpoint)
			return nil
		}
		// A ready message of a paged queue is paged again, in sequence
		// order; a hot one lies within a checkpoint page, so it is built
		// in memory instead.
		paged := q.paged()
		if seq >= q.nextSeq {
			q.nextSeq = seq + 1
		}
		var state []byte
		hasState := false
		if len(states) > 0 { // most messages were never received: no hash then
			state, hasState = states[seqOf{qid, seq}]
		}
		if paged && !hasState && !hot {
			// A ready message of a paged queue stays on disk; only a
			// delayed one is read.
			enq, avail, dl, size, group, err := peekRecord(v)
			if err != nil {
				return fmt.Errorf("message %d/%d: %w", qid, seq, err)
			}
			if q.fifo && index != nil {
				index.Set(groupKey(qid, group, seq), nil)
			}
			if avail <= stampOf(now) {
				q.nReady++
				q.bytes += int64(size)
				if dl {
					q.nDeadLettered++
				}
				if q.fifo {
					q.pushGroup(q.groups.group(group), seq, enq, size, dl, true) // its state is not read here
				} else {
					q.push(seq, enq, size, dl)
				}
				return nil
			}
		} else if q.fifo && index != nil {
			_, _, _, _, group, err := peekRecord(v)
			if err != nil {
				return fmt.Errorf("message %d/%d: %w", qid, seq, err)
			}
			index.Set(groupKey(qid, group, seq), nil)
		}
		m, err := decodeMessage(seq, v)
		if err == nil && hasState {
			delete(states, seqOf{qid, seq})
			err = decodeState(m, state)
		}
		if err != nil {
			return fmt.Errorf("message %d/%d: %w", qid, seq, err)
		}
		m.durable = true
		q.add(m)
		loaded[q] = append(loaded[q], m)
		if paged && !hasState {
			unread = append(unread, queued{q, m}) // its state, if any, is read below
		}
		return nil
	}
	visit := func(k, v []byte) error { return visitRecord(k, v, false) }
	if len(ck) == 0 && len(fck) == 0 {
		err = e.store.Scan([]byte(prefixMessage), visit)
	} else {
		// Every record but the checkpoint pages', in key order, with the
		// pages installed in their place (a FIFO queue's, before its
		// records from its head's hi on); then what was in memory within
		// them, and what a FIFO queue's dropped pages held.
		qids := make([]uint64, 0, len(ck)+len(fck))
		for qid := range ck {
			qids = append(qids, qid)
		}
		for qid := range fck {
			qids = append(qids, qid)
		}
		slices.Sort(qids)
		// The keys a FIFO queue's checkpoint leaves to read, found as
		// soon as its pages are installed: a record of the queue's tail
		// may extend the last installed page of its group over a
		// dropped page's range (pushGroup), whose messages are read
		// after the scan.
		fifoKeys := make(map[uint64][][]byte)
		start := []byte(prefixMessage)
		for _, qid := range qids {
			q := e.byID[qid]
			if f := fck[qid]; f != nil {
				if err = storage.ScanRange(e.store, start, seqKey(prefixMessage, qid, 0), visit); err != nil {
					return err
				}
				q.installGroups(f)
				if fifoKeys[qid], err = q.fifoReads(f); err != nil {
					return err
				}
				start = seqKey(prefixMessage, qid, f.hi)
				continue
			}
			for _, p := range ck[qid] {
				if err = storage.ScanRange(e.store, start, seqKey(prefixMessage, qid, p.lo), visit); err != nil {
					return err
				}
				if n := len(q.cold.pages); n > 0 && q.cold.pages[n-1].hi > p.lo {
					return fmt.Errorf("checkpoint page %d/%d overlaps a message read before it", qid, p.lo)
				}
				q.install(p.page)
				start = seqKey(prefixMessage, qid, p.hi)
			}
		}
		if err = storage.ScanRange(e.store, start, []byte("m0"), visit); err != nil { // '0' follows '/'
			return err
		}
		for _, qid := range qids {
			if fck[qid] != nil {
				keys := fifoKeys[qid]
				err = storage.ReadEach(e.store, keys, func(i int, v []byte) error { return visitRecord(keys[i], v, true) })
				if err != nil {
					return err
				}
				continue
			}
			e.byID[qid].cold.tidy()
			for _, p := range ck[qid] {
				for _, seq := range p.hot {
					k := seqKey(prefixMessage, qid, seq)
					err = storage.ScanRange(e.store, k, append(k, 0), func(k, v []byte) error { return visitRecord(k, v, true) })
					if err != nil {
						return err
					}
				}
			}
		}
	}
	if err != nil {
		return err
	}
	for _, d := range unread {
		q, m := d.q, d.m
		k := seqKey(prefixState, q.id, m.seq)
		err := storage.ScanRange(e.store, k, append(k, 0), func(_, v []byte) error { return decodeState(m, v) })
		if err != nil {
			return fmt.Errorf("message state %d/%d: %w", q.id, m.seq, err)
		}
	}
	for k := range states {
		cleanup.Delete(seqKey(prefixState, k.qid, k.seq)) // a state record whose message is gone
	}
	if index != nil {
		if err := storage.CommitSync(index); err != nil {
			return err
		}
	}
	err = e.store.Scan([]byte(prefixDedup), func(k, v []byte) error {
		q := e.byID[binary.BigEndian.Uint64(k[len(prefixDedup):])]
		var r dedupRecord
		if q == nil || json.Unmarshal(v, &r) != nil || !r.Expires.After(now) {
			cleanup.Delete(k)
			return nil
		}
		d := &dedupEntry{key: string(k[len(prefixDedup)+8:]), messageID: r.MessageID, seq: r.Seq, expires: r.Expires, legacy: true}
		q.win().loadDedup(d)
		return nil
	})
	if err != nil {
		return err
	}
	// The w/ records after the d/ ones; of a key in both, the later window
	// answers (loadDedup).
	ended := make(map[uint64]bool) // queues with records of ended windows
	err = e.store.Scan([]byte(prefixWindow), func(k, v []byte) error {
		qid, expires, key, ok := parseWindowKey(k)
		q := e.byID[qid]
		var r dedupRecord
		if !ok || q == nil || json.Unmarshal(v, &r) != nil {
			cleanup.Delete(k)
			return nil
		}
		if !expires.After(now) {
			ended[qid] = true // range-deleted below, however many
			return nil
		}
		q.win().loadDedup(&dedupEntry{key: key, messageID: r.MessageID, seq: r.Seq, expires: expires})
		return nil
	})
	if err != nil {
		return err
	}
	for qid := range ended {
		cleanup.DeleteRange(endedWindows(qid, now))
	}
	var tasks []*moveTask
	err = e.store.Scan([]byte(prefixTask), func(k, v []byte) error {
		t, err := taskFromRecord(v)
		if err != nil {
			return fmt.Errorf("move task %q: %w", k, err)
		}
		tasks = append(tasks, t)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].StartedTimestamp.Before(tasks[j].StartedTimestamp) })
	for _, t := range tasks {
		e.addTask(t)
	}
	for q := range loaded {
		q.pending = nil
	}
	for q, msgs := range loaded {
		for _, m := range msgs {
			if m.expiredWhileDown(now) {
				// The visibility timeout ran out while the server was down:
				// record it as the timer would have.
				m.AddHistory(tidemq.ExpiredEvent(q.name, m.VisibleAt.Time()))
				cleanup.Set(seqKey(prefixState, q.id, m.seq), encodeState(m))
			}
			q.activate(m, now)
		}
	}
	for _, q := range e.queues {
		if q.fifo {
			// Every group with pages reads its first one in (fifopage.go).
			for g := range q.groups.cold {
				q.groups.refresh(g)
			}
		}
	}
	t := &txn{b: cleanup}
	for _, q := range e.queues {
		if w := q.windows; w != nil {
			sort.Slice(w.dedupOrder, func(i, j int) bool { return w.dedupOrder[i].expires.Before(w.dedupOrder[j].expires) })
		}
		e.advance(q, now, t)
	}
	if e.pageSize > 0 {
		// The pages as they are now, for the next start-up, crash or not.
		e.writeCheckpoint(cleanup, true)
	}
	if !cleanup.Empty() {
		d, err := cleanup.Commit()
		if err == nil {
			err = d.Wait()
		}
		if err != nil {
			return err
		}
	}
	t.committed()
	// Messages captured on expiry while loading are durable now.
	for _, m := range t.created {
		m.durable = true
	}
	for _, q := range t.queues {
		q.publish(now)
	}
	return nil
}
