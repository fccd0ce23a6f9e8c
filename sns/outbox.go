package sns

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync/atomic"

	"github.com/tidemq/tidemq"
)

// The outbox makes fan-out crash-safe. Invariant: a Publish is acknowledged
// only after its outbox record is durable — the message, everything needed
// to build each delivery, and one delivery entry per subscription still to
// be served — all in one write of the Outbox (one synced batch of the
// store). A delivery entry is deleted once its delivery is done
// (delivered, dead-lettered, or given up and counted); the record goes
// with the last one. At Open, whatever the Outbox still holds is delivered
// again, oldest first, before the service answers anything.
//
// So a crash never drops the fan-out of an acknowledged publish half way:
// it can only repeat deliveries whose entry was not yet deleted
// (at-least-once). The exceptions to "recorded first": a standard
// topic's publish whose one delivery goes to an SQS queue is delivered
// first and recorded only if that fails (publish.go): a single delivery
// cannot be left half way, and one that is durable in its queue needs no
// record; and so is a standard topic's fan-out to SQS queues only, where
// the broker writes all its deliveries in one batch, all or nothing
// (together.go). FIFO queues deduplicate
// the repeats, because a repeat carries the original deduplication id.
//
// The Outbox also keeps the FIFO deduplication entries (dedup.go), written
// in the publish's own write. Where all this lives in the store: keys.go.

// record is a publish in the outbox: the message and what each delivery
// needs to be built.
type record struct {
	ID               uint64               `json:"-"`
	Node             string               `json:"n,omitempty"` // Options.NodeID of the node delivering it
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
	TraceHeader      string               `json:"x,omitempty"` // the publish's X-Ray header: AWSTraceHeader in SQS
	Client           tidemq.ClientInfo    `json:"c"`
	remaining        atomic.Int32         // deliveries not yet done
	deliveries       []*delivery          // set while building or recovering
	dedupKey         string               // FIFO: the cache key to remember
	dedupExpires     int64                // and when it expires (Unix ms)
	sigs             signatures           // computed once, shared by the deliveries (sign.go)
	envs             envelopeCache        // built once, shared by the deliveries (envelope.go)
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

// dedupEntry is what the deduplication cache remembers of r.
func (r *record) dedupEntry() DedupEntry {
	return DedupEntry{Key: r.dedupKey, MessageID: r.MessageID, Sequence: r.Sequence, Expires: r.dedupExpires}
}

// commitRecords writes records with their deliveries and their dedup
// entries, plus the deletion of expired dedup entries, in one write of the
// Outbox, and returns once it is durable.
func (s *Service) commitRecords(recs []*record, expired []dedupItem) error {
	var w OutboxWrite
	for _, r := range recs {
		if len(r.deliveries) > 0 {
			v, err := json.Marshal(r)
			if err != nil {
				return err
			}
			e := OutboxEntry{ID: r.ID, Record: v, Deliveries: make([]OutboxDelivery, len(r.deliveries))}
			for i, d := range r.deliveries {
				e.Deliveries[i] = OutboxDelivery{Index: d.index, Subscription: d.sub}
			}
			w.Publishes = append(w.Publishes, e)
		}
		if r.dedupKey != "" {
			w.Dedup = append(w.Dedup, r.dedupEntry())
		}
		if r.Sequence != "" { // the last of a FIFO topic's, in order
			if w.Sequences == nil {
				w.Sequences = map[string]string{}
			}
			w.Sequences[r.TopicARN] = r.Sequence
		}
	}
	for _, it := range expired {
		w.Expired = append(w.Expired, DedupEntry{Key: it.key, Expires: it.expires})
	}
	if len(w.Publishes)+len(w.Dedup)+len(w.Expired) == 0 {
		return nil
	}
	return s.outbox.PutOutbox(w)
}

// done removes a finished delivery from the outbox, and its record with the
// last one.
func (s *Service) done(d *delivery) { s.doneAll(d.rec, []*delivery{d}) }

// doneAll removes finished deliveries of r from the outbox in one write,
// and r with the last ones.
func (s *Service) doneAll(r *record, ds []*delivery) {
	if len(ds) == 0 {
		return
	}
	last := r.remaining.Add(-int32(len(ds))) == 0
	indexes := make([]uint32, len(ds))
	for i, d := range ds {
		indexes[i] = d.index
	}
	if err := s.outbox.DeliveryDone(r.ID, indexes, last); err != nil {
		// The deliveries happened; at worst they are repeated after a restart.
		s.log.Error("sns: remove finished deliveries from the outbox", "message_id", r.MessageID, "deliveries", len(ds), "err", err)
	}
}

// loadOutbox reads what the outbox holds: the FIFO dedup entries still
// live, and the records with deliveries left, oldest first.
func (s *Service) loadOutbox() ([]*record, error) {
	load := s.outbox.LoadOutbox
	if s.opt.NodeID != "" { // shared: nothing is a leftover while other nodes publish
		load = func(nowMs int64) ([]OutboxEntry, []DedupEntry, error) { return s.state.scanOutbox(nowMs, false) }
	}
	entries, dedup, err := load(s.opt.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	for _, e := range dedup {
		s.dedup.add(e)
	}
	// The dedup queue must be in expiry order.
	sort.SliceStable(s.dedup.order, func(i, j int) bool { return s.dedup.order[i].expires < s.dedup.order[j].expires })
	out := make([]*record, 0, len(entries))
	for _, e := range entries {
		r := &record{}
		if err := json.Unmarshal(e.Record, r); err != nil {
			return nil, fmt.Errorf("sns: outbox: record %d: %w", e.ID, err)
		}
		r.ID = e.ID
		for _, d := range e.Deliveries {
			r.deliveries = append(r.deliveries, &delivery{rec: r, index: d.Index, sub: d.Subscription})
		}
		r.remaining.Store(int32(len(r.deliveries)))
		s.nextRecord = max(s.nextRecord, e.ID)
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
