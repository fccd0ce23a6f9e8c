package engine

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
)

// dedupEntry remembers a FIFO send for the deduplication window.
type dedupEntry struct {
	key       string
	messageID string
	seq       uint64
	expires   time.Time
	// durable is the commit of the original send; a duplicate answers only
	// once the original is durable. nil for entries loaded from the store.
	durable *sharedDurable
	// legacy is set for an entry read from a d/ record (keys.go), which
	// its end deletes by key; the others are under w/.
	legacy bool
}

type dedupRecord struct {
	MessageID string    `json:"m"`
	Seq       uint64    `json:"s"`
	Expires   time.Time `json:"e"`
}

// SendMessages enqueues messages. See tidemq.Broker.
func (e *Engine) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) (_ []tidemq.SendResult, err error) {
	h := hold{e: e}
	defer h.guard(&err)
	if err := p.Validate(); err != nil {
		return nil, err
	}
	q, now, t, err := e.lockQueue(&h, p.Queue)
	if err != nil {
		return nil, err
	}
	if q.fifo {
		if err := p.ValidateFIFO(q.ContentDedup); err != nil {
			_ = e.finish(&h, t) // commits what advance did
			return nil, err
		}
	}
	results := p.Results(q.fifo, q.MaxSize)
	if err := e.full(q, results); err != nil {
		_ = e.finish(&h, t)
		return nil, err
	}
	waits := e.sendLocked(q, now, t, &p, results)
	if err := e.finish(&h, t); err != nil {
		return nil, err
	}
	if err := waitAll(waits); err != nil {
		return nil, err
	}
	return results, nil
}

// full refuses a send to q once q holds --max-queue-bytes. The send that
// reaches the limit is accepted whole, so a queue can pass it by one
// request (at most 1 MiB). A request none of whose entries is valid
// (results, as p.Results gave them) adds nothing, so it gets its entries'
// errors, not the throttle: as on PostgreSQL, which never reaches its
// check without a row to write.
func (e *Engine) full(q *queue, results []tidemq.SendResult) error {
	if e.maxQueueBytes <= 0 || q.bytes < e.maxQueueBytes {
		return nil
	}
	for i := range results {
		if results[i].Err == nil {
			return tidemq.QueueFull(q.name, q.bytes, e.maxQueueBytes)
		}
	}
	return nil
}

// waitAll waits for the commits that duplicates answered from the
// deduplication window depend on (sendLocked).
func waitAll(waits []*sharedDurable) error {
	for _, w := range waits {
		if err := w.wait(); err != nil {
			return tidemq.AsError(err)
		}
	}
	return nil
}

// sendLocked adds the entries of p to q in t (under e.mu), those whose
// result has no error yet, and fills their results. It returns the commits
// that duplicates must wait for (their original sends still syncing).
func (e *Engine) sendLocked(q *queue, now time.Time, t *txn, p *tidemq.SendMessagesParams, results []tidemq.SendResult) []*sharedDurable {
	sender := p.SenderID(e.acct)
	var waits []*sharedDurable
	for i := range p.Entries {
		entry, res := &p.Entries[i], &results[i]
		if res.Err != nil {
			continue
		}
		m := &message{StoredMessage: tidemq.StoredMessage{
			Body: entry.Body, Attrs: entry.Attributes, SysAttrs: entry.SystemAttributes,
			Group: entry.MessageGroupID, Sender: sender, Sent: stampOf(now), Enqueued: stampOf(now),
		}}
		m.availableAt = stampOf(now.Add(q.SendDelay(entry, q.fifo)))
		var key string
		if q.fifo {
			m.DedupID = tidemq.DeduplicationID(entry.MessageDeduplicationID, entry.Body)
			key = q.DedupKey(m.Group, m.DedupID)
			if d := q.dedupEntry(key); d != nil && d.expires.After(now) {
				res.MessageID, res.SequenceNumber = d.messageID, tidemq.FormatSequenceNumber(d.seq)
				q.count().Duplicates++
				if d.durable != nil {
					waits = append(waits, d.durable)
				}
				continue
			}
		}
		m.ID = uuid.NewString()
		m.seq = q.nextSeq
		q.nextSeq++
		res.MessageID = m.ID
		if q.fifo {
			m.fifoSeq = m.seq
			res.SequenceNumber = tidemq.FormatSequenceNumber(m.seq)
			e.remember(q, t, key, m, now)
		}
		q.add(m)
		t.addCreated(q, m)
		storage.SetValue(t.b, seqKey(prefixMessage, q.id, m.seq), (*messageRecord)(m))
		if q.fifo && q.paged() {
			t.b.Set(groupKey(q.id, m.Group, m.seq), nil)
		}
		q.count().Sent++
	}
	q.reserveSeqs(t)
	return waits
}

// remember opens the deduplication window for a new FIFO message.
func (e *Engine) remember(q *queue, t *txn, key string, m *message, now time.Time) {
	d := &dedupEntry{key: key, messageID: m.ID, seq: m.fifoSeq, expires: now.Add(tidemq.DedupWindow), durable: t.durable}
	q.win().addDedup(d)
	rec, _ := json.Marshal(dedupRecord{MessageID: d.messageID, Seq: d.seq, Expires: d.expires})
	t.b.Set(windowKey(q.id, d.expires, key), rec)
}

func init() {
	// Message ids are random (version 4) UUIDs. Reading randomness in
	// blocks rather than once per id takes a call to the kernel's random
	// source off every message sent. Enabled here, before any id is made,
	// as the uuid package requires.
	uuid.EnableRandPool()
}

// dedupEntry returns the deduplication window's entry of key, or nil.
func (q *queue) dedupEntry(key string) *dedupEntry {
	if q.windows == nil {
		return nil
	}
	return q.windows.dedup[key]
}
