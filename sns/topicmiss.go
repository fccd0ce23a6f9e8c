package sns

import (
	"encoding/json"
	"fmt"
)

// A topic this node has not seen yet. With several nodes (Options.Reload
// set) a node's memory lags the registry by the time an announcement
// takes to arrive (cluster.go), so a topic created on another node a
// moment ago is missing here. Before a node answers NotFound it reads the
// topic, and its subscriptions, from the registry itself, and keeps what
// it found: a Subscribe, Publish or GetTopicAttributes right after a
// CreateTopic on another node succeeds. Alone, memory is the registry and
// a miss is final.

// TopicReader is a Registry that can read one topic and its
// subscriptions as they are now, without taking the registry's update
// lock (kvState).
type TopicReader interface {
	ReadTopic(arn string) (*Topic, []*Subscription, error)
}

func (s kvState) ReadTopic(arn string) (*Topic, []*Subscription, error) {
	var t *Topic
	key := string(stringKey(prefixTopic, arn))
	if err := s.kv.Scan([]byte(key), func(k, v []byte) error {
		if string(k) != key {
			return nil // a longer ARN with this one as its prefix
		}
		t = new(Topic)
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("sns: %s%q: %w", Namespace, k, err)
		}
		return nil
	}); err != nil || t == nil {
		return nil, nil, err
	}
	var subs []*Subscription
	err := scanJSON(s.kv, prefixSubscription+arn+":", func(sub *Subscription) {
		if sub.TopicARN == arn {
			subs = append(subs, sub)
		}
	})
	return t, subs, err
}

// readTopic is getTopic that, on a miss in a shared registry, reads the
// registry before answering that there is no such topic. The read is made
// without mu, so that a client asking again and again for a topic that
// does not exist holds up no other call behind the registry's round
// trips. A topic it found is copied into memory under mu for writing
// unless memory changed since the miss (changes): that change may be
// this node's own (a DeleteTopic) made after the read, which the copy
// would undo, so the registry is then read again under mu, as reload
// does.
func (s *store) readTopic(arn string) (*Topic, bool, error) {
	if !s.shared {
		t, ok := s.getTopic(arn)
		return t, ok, nil
	}
	s.mu.RLock()
	t, ok := s.topics[arn]
	seen := s.changes
	s.mu.RUnlock()
	if ok {
		return t.clone(), true, nil
	}
	r, ok := s.reg.(TopicReader)
	if !ok {
		return nil, false, nil
	}
	t, subs, err := r.ReadTopic(arn)
	if err != nil || t == nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.topics[arn]; ok {
		return t.clone(), true, nil
	}
	if s.changes != seen {
		if t, subs, err = r.ReadTopic(arn); err != nil || t == nil {
			return nil, false, err
		}
	}
	s.applyMemLocked(RegistryChange{PutTopics: []*Topic{t}, PutSubscriptions: subs})
	return t.clone(), true, nil
}
