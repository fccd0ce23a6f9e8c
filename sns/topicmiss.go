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
// registry before answering that there is no such topic. It holds mu for
// writing across the read and the copy into memory, as reload does, so
// that this node's own change cannot fall between them.
func (s *store) readTopic(arn string) (*Topic, bool, error) {
	if t, ok := s.getTopic(arn); ok || !s.shared {
		return t, ok, nil
	}
	r, ok := s.reg.(TopicReader)
	if !ok {
		return nil, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.topics[arn]; ok {
		return t.clone(), true, nil
	}
	t, subs, err := r.ReadTopic(arn)
	if err != nil || t == nil {
		return nil, false, err
	}
	s.applyMemLocked(RegistryChange{PutTopics: []*Topic{t}, PutSubscriptions: subs})
	return t.clone(), true, nil
}
