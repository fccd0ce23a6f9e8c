package sns

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/tidemq/tidemq/storage"
)

// kvState keeps the Registry, the Outbox and the KeyStore in a
// storage.Store, in the key layout of keys.go. Every method writes one
// batch and waits until it is durable.
type kvState struct {
	kv storage.Store // the store's Namespace
}

var (
	_ Registry = kvState{}
	_ Outbox   = kvState{}
	_ KeyStore = kvState{}
)

// newKVState keeps the state in st, under Namespace.
func newKVState(st storage.Store) kvState { return kvState{kv: storage.Prefix(st, Namespace)} }

// scanJSON decodes every value under prefix into a new T.
func scanJSON[T any](kv interface {
	Scan([]byte, func(k, v []byte) error) error
}, prefix string, add func(*T)) error {
	return kv.Scan([]byte(prefix), func(k, v []byte) error {
		x := new(T)
		if err := json.Unmarshal(v, x); err != nil {
			return fmt.Errorf("sns: %s%q: %w", Namespace, k, err)
		}
		add(x)
		return nil
	})
}

func (s kvState) LoadRegistry() (Registrations, error) {
	var r Registrations
	if err := scanJSON(s.kv, prefixTopic, func(t *Topic) { r.Topics = append(r.Topics, t) }); err != nil {
		return r, err
	}
	if err := scanJSON(s.kv, prefixSubscription, func(sub *Subscription) { r.Subscriptions = append(r.Subscriptions, sub) }); err != nil {
		return r, err
	}
	err := scanJSON(s.kv, prefixUnsubscribed, func(sub *Subscription) { r.Unsubscribed = append(r.Unsubscribed, sub) })
	return r, err
}

// RegistryLock is the storage.Update lock of every registry change: a
// store shared by several nodes announces changes under this name.
const RegistryLock = "sns"

func (s kvState) UpdateRegistry(fn func(RegistryView) (RegistryChange, error)) error {
	return storage.Update(s.kv, RegistryLock, func(tx storage.Txn) error {
		c, err := fn(txView{tx})
		if err != nil {
			return err
		}
		return putRegistry(tx, c)
	})
}

// txView is a RegistryView of a storage.Txn.
type txView struct{ tx storage.Txn }

// getJSON decodes the value of key into a new T, or returns nil.
func getJSON[T any](tx storage.Txn, key []byte) (*T, error) {
	v, ok, err := tx.Get(key)
	if err != nil || !ok {
		return nil, err
	}
	x := new(T)
	if err := json.Unmarshal(v, x); err != nil {
		return nil, fmt.Errorf("sns: %s%q: %w", Namespace, key, err)
	}
	return x, nil
}

func (v txView) Topic(arn string) (*Topic, error) {
	return getJSON[Topic](v.tx, stringKey(prefixTopic, arn))
}

func (v txView) Subscription(arn string) (*Subscription, error) {
	return getJSON[Subscription](v.tx, stringKey(prefixSubscription, arn))
}

func (v txView) Unsubscribed(token string) (*Subscription, error) {
	return getJSON[Subscription](v.tx, stringKey(prefixUnsubscribed, token))
}

// Subscriptions scans the subscriptions whose ARN begins with the topic's
// ARN and a colon: a subscription's ARN is its topic's and a UUID, and a
// topic name has no colon, so these are exactly the topic's.
func (v txView) Subscriptions(topicARN string) ([]*Subscription, error) {
	var out []*Subscription
	err := scanJSON(v.tx, prefixSubscription+topicARN+":", func(sub *Subscription) {
		if sub.TopicARN == topicARN {
			out = append(out, sub)
		}
	})
	return out, err
}

// putRegistry adds c to b (a storage.Batch or storage.Txn).
func putRegistry(b interface {
	Set(k, v []byte)
	Delete(k []byte)
}, c RegistryChange) error {
	for _, arn := range c.DeleteTopics {
		b.Delete(stringKey(prefixTopic, arn))
	}
	for _, arn := range c.DeleteSubscriptions {
		b.Delete(stringKey(prefixSubscription, arn))
	}
	for _, tok := range c.DeleteUnsubscribed {
		b.Delete(stringKey(prefixUnsubscribed, tok))
	}
	set := func(k []byte, x any) error {
		v, err := json.Marshal(x)
		if err == nil {
			b.Set(k, v)
		}
		return err
	}
	for _, t := range c.PutTopics {
		if err := set(stringKey(prefixTopic, t.ARN), t); err != nil {
			return err
		}
	}
	for _, sub := range c.PutSubscriptions {
		if err := set(stringKey(prefixSubscription, sub.ARN), sub); err != nil {
			return err
		}
	}
	for _, sub := range c.PutUnsubscribed {
		if err := set(stringKey(prefixUnsubscribed, sub.Token), sub); err != nil {
			return err
		}
	}
	return nil
}

func (s kvState) PutOutbox(w OutboxWrite) error {
	b := s.kv.NewBatch()
	putOutbox(b, w)
	return storage.CommitSync(b)
}

// putOutbox adds w to b.
func putOutbox(b storage.Batch, w OutboxWrite) {
	for _, e := range w.Publishes {
		b.Set(recordKey(e.ID), e.Record)
		for _, d := range e.Deliveries {
			b.Set(deliveryKey(e.ID, d.Index), []byte(d.Subscription))
		}
	}
	for _, e := range w.Dedup {
		v, _ := json.Marshal(e) // strings and a number: cannot fail
		b.Set(dedupStoreKey(e.Key, e.Expires), v)
		b.Set(dedupByKey(e.Key, e.Expires), v)
	}
	for _, e := range w.Expired {
		b.Delete(dedupStoreKey(e.Key, e.Expires))
		b.Delete(dedupByKey(e.Key, e.Expires))
	}
	for topic, seq := range w.Sequences {
		b.Set(stringKey(prefixFIFOSequence, topic), []byte(seq))
	}
}

func (s kvState) LockFIFO(topicARN string) (func(), error) {
	return storage.Lock(s.kv, "sns-fifo/"+topicARN)
}

func (s kvState) FindDedup(key string, nowMs int64) (DedupEntry, bool, error) {
	prefix := append(append([]byte(prefixDedupByKey), key...), 0)
	var found DedupEntry
	ok := false
	err := s.kv.Scan(prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 { // another key's, with this one as its prefix
			return nil
		}
		var e DedupEntry
		if json.Unmarshal(v, &e) == nil && e.Expires > nowMs && (!ok || e.Expires > found.Expires) {
			e.Key = key
			found, ok = e, true
		}
		return nil
	})
	return found, ok, err
}

func (s kvState) LastSequence(topicARN string) (string, error) {
	key := stringKey(prefixFIFOSequence, topicARN)
	var seq string
	err := s.kv.Scan(key, func(k, v []byte) error {
		if string(k) == string(key) {
			seq = string(v)
		}
		return nil
	})
	return seq, err
}

func (s kvState) DeliveryDone(id uint64, indexes []uint32, last bool) error {
	b := s.kv.NewBatch()
	for _, index := range indexes {
		b.Delete(deliveryKey(id, index))
	}
	if last {
		b.Delete(recordKey(id))
	}
	return storage.CommitSync(b)
}

func (s kvState) LoadOutbox(nowMs int64) ([]OutboxEntry, []DedupEntry, error) {
	return s.scanOutbox(nowMs, true)
}

// scanOutbox is LoadOutbox; without clean it deletes nothing: on a store
// shared with other nodes, a publish that commits between the scan of the
// records and that of the deliveries would have its deliveries taken for
// leftovers.
func (s kvState) scanOutbox(nowMs int64, clean bool) ([]OutboxEntry, []DedupEntry, error) {
	recs := map[uint64]*OutboxEntry{}
	err := s.kv.Scan([]byte(prefixRecord), func(k, v []byte) error {
		if len(k) != len(prefixRecord)+8 {
			return fmt.Errorf("sns: outbox: bad record key %q", k)
		}
		id := binary.BigEndian.Uint64(k[len(prefixRecord):])
		recs[id] = &OutboxEntry{ID: id, Record: append([]byte(nil), v...)}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	cleanup := s.kv.NewBatch()
	err = s.kv.Scan([]byte(prefixDelivery), func(k, v []byte) error {
		if len(k) != len(prefixDelivery)+12 {
			return fmt.Errorf("sns: outbox: bad delivery key %q", k)
		}
		r, ok := recs[binary.BigEndian.Uint64(k[len(prefixDelivery):])]
		if !ok { // its record is gone: nothing to deliver
			cleanup.Delete(append([]byte(nil), k...))
			return nil
		}
		r.Deliveries = append(r.Deliveries, OutboxDelivery{Index: binary.BigEndian.Uint32(k[len(prefixDelivery)+8:]), Subscription: string(v)})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var dedup []DedupEntry // in key order, which is expiry order
	err = s.kv.Scan([]byte(prefixDedup), func(k, v []byte) error {
		var e DedupEntry
		if len(k) < len(prefixDedup)+8 || json.Unmarshal(v, &e) != nil || e.Expires <= nowMs {
			cleanup.Delete(append([]byte(nil), k...))
			return nil
		}
		e.Key = string(k[len(prefixDedup)+8:])
		dedup = append(dedup, e)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = s.kv.Scan([]byte(prefixDedupByKey), func(k, v []byte) error {
		if len(k) < len(prefixDedupByKey)+9 || int64(binary.BigEndian.Uint64(k[len(k)-8:])) <= nowMs {
			cleanup.Delete(append([]byte(nil), k...)) // expired: whichever node wrote it
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]OutboxEntry, 0, len(recs))
	for id, r := range recs {
		if len(r.Deliveries) == 0 {
			cleanup.Delete(recordKey(id))
			continue
		}
		out = append(out, *r)
	}
	if !clean {
		cleanup = s.kv.NewBatch()
	}
	if err := storage.CommitSync(cleanup); err != nil {
		return nil, nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, dedup, nil
}

func (s kvState) SigningKey() ([]byte, error) {
	var key []byte
	err := s.kv.Scan([]byte(keySigning), func(k, v []byte) error {
		if string(k) == keySigning {
			key = append([]byte(nil), v...)
		}
		return nil
	})
	return key, err
}

func (s kvState) StoreSigningKey(key []byte) ([]byte, error) {
	// The service is the store's one writer of this key, and stores it
	// once, at Open: reading first is enough.
	old, err := s.SigningKey()
	if err != nil || old != nil {
		return old, err
	}
	b := s.kv.NewBatch()
	b.Set([]byte(keySigning), key)
	if err := storage.CommitSync(b); err != nil {
		return nil, err
	}
	return key, nil
}

// maxRecordID returns the highest outbox record id, or 0.
func (s kvState) maxRecordID() (uint64, error) {
	var max uint64
	err := s.kv.Scan([]byte(prefixRecord), func(k, _ []byte) error {
		if len(k) == len(prefixRecord)+8 {
			max = binary.BigEndian.Uint64(k[len(prefixRecord):])
		}
		return nil
	})
	return max, err
}

// Close closes the store.
func (s kvState) Close() error { return s.kv.Close() }
