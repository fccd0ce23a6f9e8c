package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
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
		if err := checkFIFOEntries(q, p); err != nil {
			_ = e.finish(&h, t) // commits what advance did
			return nil, err
		}
	}
	sender := p.Client.AccessKey
	if sender == "" {
		sender = e.acct
	}
	results := make([]tidemq.SendResult, len(p.Entries))
	var waits []*sharedDurable
	created := false
	for i, entry := range p.Entries {
		res := &results[i]
		res.ID = entry.ID
		if err := q.validateEntry(entry); err != nil {
			res.Err = err
			continue
		}
		m := &message{
			body: entry.Body, attrs: entry.Attributes, sysAttrs: entry.SystemAttributes,
			group: entry.MessageGroupID, sender: sender, sent: stampOf(now), enqueued: stampOf(now),
		}
		delay := q.delay
		if entry.DelaySeconds != nil && !q.fifo {
			delay = time.Duration(*entry.DelaySeconds) * time.Second
		}
		m.availableAt = stampOf(now.Add(delay))
		var key string
		if q.fifo {
			m.dedupID = entry.MessageDeduplicationID
			if m.dedupID == "" {
				sum := sha256.Sum256([]byte(entry.Body))
				m.dedupID = hex.EncodeToString(sum[:])
			}
			key = m.dedupID
			if q.groupDedup {
				key = m.group + "\x00" + key
			}
			if d := q.dedup[key]; d != nil && d.expires.After(now) {
				res.MessageID, res.SequenceNumber = d.messageID, formatSeq(d.seq)
				q.stats.Duplicates++
				if d.durable != nil {
					waits = append(waits, d.durable)
				}
				continue
			}
		}
		m.id = uuid.NewString()
		m.seq = q.nextSeq
		q.nextSeq++
		res.MessageID = m.id
		if q.fifo {
			m.fifoSeq = m.seq
			res.SequenceNumber = formatSeq(m.seq)
			e.remember(q, t, key, m, now)
		}
		q.add(m)
		t.addCreated(q, m)
		t.b.Set(seqKey(prefixMessage, q.id, m.seq), encodeMessage(m))
		q.stats.Sent++
		created = true
	}
	if created {
		t.b.Set(idKey(prefixCounter, q.id), uint64Value(q.nextSeq))
	}
	if err := e.finish(&h, t); err != nil {
		return nil, err
	}
	for _, w := range waits {
		if err := w.wait(); err != nil {
			return nil, tidemq.AsError(err)
		}
	}
	return results, nil
}

// remember opens the deduplication window for a new FIFO message.
func (e *Engine) remember(q *queue, t *txn, key string, m *message, now time.Time) {
	d := &dedupEntry{key: key, messageID: m.id, seq: m.fifoSeq, expires: now.Add(tidemq.DedupWindow), durable: t.durable}
	q.dedup[key] = d
	q.dedupOrder = append(q.dedupOrder, d)
	rec, _ := json.Marshal(dedupRecord{MessageID: d.messageID, Seq: d.seq, Expires: d.expires})
	t.b.Set(dedupKey(q.id, key), rec)
}

// checkFIFOEntries applies the FIFO rules that fail a whole request: every
// entry needs a MessageGroupId, and a deduplication id unless the queue
// deduplicates by content. In a batch both are InvalidParameterValue.
func checkFIFOEntries(q *queue, p tidemq.SendMessagesParams) error {
	for _, entry := range p.Entries {
		if entry.MessageGroupID == "" {
			if p.Batch {
				return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "The request must contain the parameter MessageGroupId.")
			}
			return tidemq.MissingParameter("MessageGroupId")
		}
		if entry.MessageDeduplicationID == "" && !q.contentDedup {
			return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
		}
	}
	return nil
}

// validateEntry checks one message against the queue's rules.
func (q *queue) validateEntry(entry tidemq.SendEntry) error {
	if err := tidemq.ValidateBody(entry.Body); err != nil {
		return err
	}
	if err := tidemq.ValidateMessageAttributes(entry.Attributes); err != nil {
		return err
	}
	if err := tidemq.ValidateSystemAttributes(entry.SystemAttributes); err != nil {
		return err
	}
	if size := tidemq.MessageSize(entry.Body, entry.Attributes); size > q.maxSize {
		return tidemq.Errorf(tidemq.ErrInvalidParameterValue, "One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", q.maxSize)
	}
	if d := entry.DelaySeconds; d != nil {
		if *d < 0 || *d > tidemq.MaxDelaySeconds {
			return tidemq.InvalidParameter("DelaySeconds", *d, "DelaySeconds must be >= 0 and <= 900")
		}
		if q.fifo && *d != 0 {
			return tidemq.InvalidParameter("DelaySeconds", *d, "The request include parameter that is not valid for this queue type")
		}
	}
	if entry.MessageGroupID != "" {
		if err := tidemq.ValidateFIFOToken("MessageGroupId", entry.MessageGroupID); err != nil {
			return err
		}
	}
	if entry.MessageDeduplicationID != "" {
		if !q.fifo {
			return tidemq.InvalidParameter("MessageDeduplicationId", entry.MessageDeduplicationID, "The request include parameter that is not valid for this queue type")
		}
		if err := tidemq.ValidateFIFOToken("MessageDeduplicationId", entry.MessageDeduplicationID); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	// Message ids are random (version 4) UUIDs. Reading randomness in
	// blocks rather than once per id takes a call to the kernel's random
	// source off every message sent. Enabled here, before any id is made,
	// as the uuid package requires.
	uuid.EnableRandPool()
}
