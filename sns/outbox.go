package sns

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/tidemq/tidemq"
)

// The outbox makes fan-out crash-safe. Invariant: a Publish is acknowledged
// only after its outbox record is durable — the message, everything needed
// to build each delivery, and one delivery key per subscription still to be
// served — all in one synced batch. A delivery key is deleted once its
// delivery is done (delivered, dead-lettered, or given up and counted); the
// record goes with the last one. At Open, whatever the outbox still holds
// is delivered again, oldest first, before the service answers anything.
//
// So a crash never drops a fan-out half way: it can only repeat deliveries
// whose key was not yet deleted (at-least-once). FIFO queues deduplicate
// the repeats, because a repeat carries the original deduplication id.
//
// Keys (in a store of its own):
//
//	'm' + id (8 bytes, big endian)                 → record (JSON)
//	'd' + id + index (4 bytes, big endian)         → subscription ARN
//	'y' + expiry (Unix ms, 8 bytes, big endian)
//	    + topic ARN + 0 + [group + 0] + dedup id   → FIFO dedup entry (JSON)
//
// A dedup entry's key holds its expiry, so that deleting an expired entry
// can never delete a newer entry for the same deduplication id: expiry
// runs across topics, and the batch deleting topic A's expired entry may
// commit after topic B's publish wrote a fresh one for the same id.
// ('x' + the rest, without the expiry, is the layout of the first
// release; Open rewrites such keys.)
type record struct {
	ID               uint64               `json:"-"`
	TopicARN         string               `json:"t"`
	FIFO             bool                 `json:"f,omitempty"`
	SignatureVersion string               `json:"v,omitempty"`
	MessageID        string               `json:"i"`
	Sequence         string               `json:"q,omitempty"`
	Timestamp        string               `json:"ts"`
	Subject          string               `json:"s,omitempty"`
	Message          string               `json:"m"`
	Structured       map[string]string    `json:"j,omitempty"` // MessageStructure=json: protocol → message
	Attributes       map[string]Attribute `json:"a,omitempty"`
	GroupID          string               `json:"g,omitempty"`
	DedupID          string               `json:"d,omitempty"`
	BaseURL          string               `json:"b,omitempty"`
	Client           tidemq.ClientInfo    `json:"c"`
	remaining        atomic.Int32         // deliveries not yet done
	deliveries       []*delivery          // set while building or recovering
	dedupKey         string               // FIFO: the cache key to remember
	dedupExpires     int64                // and when it expires (Unix ms)
}

// delivery is one subscription's share of a record.
type delivery struct {
	rec   *record
	index uint32
	sub   string // subscription ARN
}

// message returns what a subscription of protocol gets as the message.
func (r *record) message(protocol string) string {
	if r.Structured == nil {
		return r.Message
	}
	if m, ok := r.Structured[protocol]; ok {
		return m
	}
	return r.Structured["default"]
}

func recordKey(id uint64) []byte {
	k := make([]byte, 9)
	k[0] = 'm'
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

func deliveryKey(id uint64, index uint32) []byte {
	k := make([]byte, 13)
	k[0] = 'd'
	binary.BigEndian.PutUint64(k[1:], id)
	binary.BigEndian.PutUint32(k[9:], index)
	return k
}

func dedupStoreKey(key string, expires int64) []byte {
	k := make([]byte, 9, 9+len(key))
	k[0] = 'y'
	binary.BigEndian.PutUint64(k[1:], uint64(expires))
	return append(k, key...)
}

// commitRecords writes records, their delivery keys and their dedup
// entries, plus the deletion of expired dedup entries, in one batch, and
// waits until it is durable.
func (s *Service) commitRecords(recs []*record, expired []dedupItem) error {
	b := s.outbox.NewBatch()
	for _, r := range recs {
		if len(r.deliveries) > 0 {
			v, err := json.Marshal(r)
			if err != nil {
				return err
			}
			b.Set(recordKey(r.ID), v)
			for _, d := range r.deliveries {
				b.Set(deliveryKey(r.ID, d.index), []byte(d.sub))
			}
		}
		if r.dedupKey != "" {
			b.Set(dedupStoreKey(r.dedupKey, r.dedupExpires), dedupEntry{MessageID: r.MessageID, Sequence: r.Sequence, Expires: r.dedupExpires}.encode())
		}
	}
	for _, it := range expired {
		b.Delete(dedupStoreKey(it.key, it.expires))
	}
	if b.Empty() {
		return nil
	}
	d, err := b.Commit()
	if err != nil {
		return err
	}
	return d.Wait()
}

// done removes a finished delivery from the outbox, and its record with the
// last one.
func (s *Service) done(d *delivery) {
	b := s.outbox.NewBatch()
	b.Delete(deliveryKey(d.rec.ID, d.index))
	if d.rec.remaining.Add(-1) == 0 {
		b.Delete(recordKey(d.rec.ID))
	}
	dur, err := b.Commit()
	if err == nil {
		err = dur.Wait()
	}
	if err != nil {
		// The delivery happened; at worst it is repeated after a restart.
		s.log.Error("sns: remove a finished delivery from the outbox", "message_id", d.rec.MessageID, "subscription", d.sub, "err", err)
	}
}

// loadOutbox reads what the outbox holds: the FIFO dedup entries still
// live, and the records with deliveries left, oldest first.
func (s *Service) loadOutbox() ([]*record, error) {
	recs := map[uint64]*record{}
	err := s.outbox.Scan([]byte{'m'}, func(k, v []byte) error {
		if len(k) != 9 {
			return fmt.Errorf("sns: outbox: bad record key %x", k)
		}
		r := &record{ID: binary.BigEndian.Uint64(k[1:])}
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("sns: outbox: record %d: %w", r.ID, err)
		}
		recs[r.ID] = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := s.outbox.NewBatch()
	err = s.outbox.Scan([]byte{'d'}, func(k, v []byte) error {
		if len(k) != 13 {
			return fmt.Errorf("sns: outbox: bad delivery key %x", k)
		}
		id := binary.BigEndian.Uint64(k[1:])
		r, ok := recs[id]
		if !ok { // its record is gone: nothing to deliver
			b.Delete(append([]byte(nil), k...))
			return nil
		}
		r.deliveries = append(r.deliveries, &delivery{rec: r, index: binary.BigEndian.Uint32(k[9:]), sub: string(v)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	nowMs := s.opt.Now().UnixMilli()
	err = s.outbox.Scan([]byte{'y'}, func(k, v []byte) error {
		var e dedupEntry
		if len(k) < 9 || json.Unmarshal(v, &e) != nil || e.Expires <= nowMs {
			b.Delete(append([]byte(nil), k...))
			return nil
		}
		s.dedup.add(string(k[9:]), e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = s.outbox.Scan([]byte{'x'}, func(k, v []byte) error { // the first release's layout
		b.Delete(append([]byte(nil), k...))
		var e dedupEntry
		if json.Unmarshal(v, &e) != nil || e.Expires <= nowMs {
			return nil
		}
		s.dedup.add(string(k[1:]), e)
		b.Set(dedupStoreKey(string(k[1:]), e.Expires), append([]byte(nil), v...))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*record, 0, len(recs))
	for id, r := range recs {
		s.nextRecord = max(s.nextRecord, id)
		if len(r.deliveries) == 0 {
			b.Delete(recordKey(id))
			continue
		}
		r.remaining.Store(int32(len(r.deliveries)))
		out = append(out, r)
	}
	if !b.Empty() {
		d, err := b.Commit()
		if err == nil {
			err = d.Wait()
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	// The dedup queue must be in expiry order.
	sort.SliceStable(s.dedup.order, func(i, j int) bool { return s.dedup.order[i].expires < s.dedup.order[j].expires })
	return out, nil
}
