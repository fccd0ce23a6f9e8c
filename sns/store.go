package sns

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// Topic is an SNS topic.
type Topic struct {
	Name       string
	ARN        string
	FIFO       bool
	Attributes map[string]string `json:",omitempty"` // settable attributes only
	Tags       map[string]string `json:",omitempty"`
}

// Subscription is a subscription of an SQS queue (protocol sqs, confirmed
// at once) or an HTTP/HTTPS endpoint (pending until confirmed) to a topic.
type Subscription struct {
	ARN        string
	TopicARN   string
	Protocol   string
	Endpoint   string
	Attributes map[string]string `json:",omitempty"` // settable attributes only
	// Pending is true until an HTTP/HTTPS subscription is confirmed with
	// Token (ConfirmSubscription or a GET of the SubscribeURL). Token stays
	// valid until TokenExpires (Unix milliseconds), so confirming again is
	// harmless.
	Pending      bool   `json:",omitempty"`
	Token        string `json:",omitempty"`
	TokenExpires int64  `json:",omitempty"`
	// ConfirmedAnonymously is true when the confirmation carried no AWS
	// signature (ConfirmationWasAuthenticated "false").
	ConfirmedAnonymously bool `json:",omitempty"`
	// AuthenticateOnUnsubscribe forbids unauthenticated Unsubscribe calls.
	AuthenticateOnUnsubscribe bool `json:",omitempty"`
	// BaseURL is the scheme and host of the SubscribeURL and UnsubscribeURL
	// sent to an HTTP/HTTPS endpoint.
	BaseURL string `json:",omitempty"`
}

// IsHTTP reports whether the subscription delivers to an HTTP/HTTPS
// endpoint.
func (s *Subscription) IsHTTP() bool { return s.Protocol == "http" || s.Protocol == "https" }

// store keeps topics and subscriptions in memory, for answering, and in
// its Registry: a change is written to the Registry, durably, before it is
// made in memory, so that what the service answers from has always been
// acknowledged by the Registry.
type store struct {
	// mu is held for writing across the Registry write, so that changes
	// reach the Registry in the order they are made in memory.
	mu           sync.RWMutex
	reg          Registry
	topics       map[string]*Topic        // by ARN
	subs         map[string]*Subscription // by ARN
	unsubscribed map[string]*Subscription // by token
}

func openStore(reg Registry) (*store, error) {
	r, err := reg.LoadRegistry()
	if err != nil {
		return nil, fmt.Errorf("sns: load topics and subscriptions: %w", err)
	}
	s := &store{reg: reg, topics: map[string]*Topic{}, subs: map[string]*Subscription{}, unsubscribed: map[string]*Subscription{}}
	for _, t := range r.Topics {
		s.topics[t.ARN] = t
	}
	for _, sub := range r.Subscriptions {
		s.subs[sub.ARN] = sub
	}
	for _, sub := range r.Unsubscribed {
		s.unsubscribed[sub.Token] = sub
	}
	return s, nil
}

// applyLocked writes c to the Registry and, once it is durable, to memory.
// The values put become the store's own. The caller holds mu for writing.
func (s *store) applyLocked(c RegistryChange) error {
	if err := s.reg.ApplyRegistry(c); err != nil {
		return err
	}
	for _, arn := range c.DeleteTopics {
		delete(s.topics, arn)
	}
	for _, arn := range c.DeleteSubscriptions {
		delete(s.subs, arn)
	}
	for _, tok := range c.DeleteUnsubscribed {
		delete(s.unsubscribed, tok)
	}
	for _, t := range c.PutTopics {
		s.topics[t.ARN] = t
	}
	for _, sub := range c.PutSubscriptions {
		s.subs[sub.ARN] = sub
	}
	for _, sub := range c.PutUnsubscribed {
		s.unsubscribed[sub.Token] = sub
	}
	return nil
}

var topicNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// validTopicName checks a topic name: 1–256 of [A-Za-z0-9_-], FIFO names
// ending in .fifo.
func validTopicName(name string, fifo bool) bool {
	base := name
	if fifo {
		var ok bool
		if base, ok = strings.CutSuffix(name, ".fifo"); !ok {
			return false
		}
	}
	return len(name) <= 256 && topicNamePattern.MatchString(base)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func (t *Topic) clone() *Topic {
	c := *t
	c.Attributes = copyMap(t.Attributes)
	c.Tags = copyMap(t.Tags)
	return &c
}

func (s *Subscription) clone() *Subscription {
	c := *s
	c.Attributes = copyMap(s.Attributes)
	return &c
}

func (s *store) getTopic(arn string) (*Topic, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, ok := s.topics[arn]
	if !ok {
		return nil, false
	}
	return t.clone(), true
}

// createTopic creates t unless a topic of that ARN exists, in which case it
// returns the existing one (CreateTopic is idempotent).
func (s *store) createTopic(t *Topic) (*Topic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.topics[t.ARN]; ok {
		return old.clone(), nil
	}
	if err := s.applyLocked(RegistryChange{PutTopics: []*Topic{t}}); err != nil {
		return nil, err
	}
	return t.clone(), nil
}

func (s *store) deleteTopic(arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.topics[arn]; !ok {
		return nil // DeleteTopic of a missing topic succeeds
	}
	c := RegistryChange{DeleteTopics: []string{arn}}
	for k, sub := range s.subs {
		if sub.TopicARN == arn {
			c.DeleteSubscriptions = append(c.DeleteSubscriptions, k)
		}
	}
	return s.applyLocked(c)
}

// updateTopic applies f to a copy of the topic and stores it.
func (s *store) updateTopic(arn string, f func(t *Topic) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.topics[arn]
	if !ok {
		return NotFound("Topic does not exist")
	}
	t := old.clone()
	if err := f(t); err != nil {
		return err
	}
	return s.applyLocked(RegistryChange{PutTopics: []*Topic{t}})
}

func (s *store) listTopics() []*Topic {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Topic, 0, len(s.topics))
	for _, t := range s.topics {
		out = append(out, t.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ARN < out[j].ARN })
	return out
}

// subscribe adds a subscription, or returns the existing one for the same
// topic, protocol and endpoint. It reports whether the subscription existed.
func (s *store) subscribe(sub *Subscription) (*Subscription, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.topics[sub.TopicARN]; !ok {
		return nil, false, NotFound("Topic does not exist")
	}
	for _, old := range s.subs {
		if old.TopicARN == sub.TopicARN && old.Protocol == sub.Protocol && old.Endpoint == sub.Endpoint {
			return old.clone(), true, nil
		}
	}
	sub.ARN = sub.TopicARN + ":" + uuid.NewString()
	if err := s.applyLocked(RegistryChange{PutSubscriptions: []*Subscription{sub}}); err != nil {
		return nil, false, err
	}
	return sub.clone(), false, nil
}

// unsubscribe deletes a subscription. A non-nil tombstone (the deleted
// subscription with a fresh token) is kept so that its token can restore
// it.
func (s *store) unsubscribe(arn string, tombstone *Subscription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.subs[arn]; !ok {
		return NotFound("Subscription does not exist")
	}
	c := RegistryChange{DeleteSubscriptions: []string{arn}}
	if tombstone != nil {
		c.PutUnsubscribed = []*Subscription{tombstone}
	}
	return s.applyLocked(c)
}

// confirm confirms the subscription to topicARN that token was sent for,
// or restores an unsubscribed one. Confirming a confirmed subscription
// again returns it unchanged.
func (s *store) confirm(topicARN, token string, nowMs int64, anonymous, authOnUnsubscribe bool) (*Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.topics[topicARN]; !ok {
		return nil, NotFound("Topic does not exist")
	}
	var found *Subscription
	var c RegistryChange
	for _, sub := range s.subs {
		if sub.Token == token && sub.TopicARN == topicARN {
			found = sub.clone()
			break
		}
	}
	if found == nil {
		if t, ok := s.unsubscribed[token]; ok && t.TopicARN == topicARN && t.TokenExpires >= nowMs {
			found = t.clone()
			found.Pending = true
			for _, old := range s.subs { // subscribed again meanwhile
				if old.TopicARN == t.TopicARN && old.Protocol == t.Protocol && old.Endpoint == t.Endpoint {
					c.DeleteSubscriptions = append(c.DeleteSubscriptions, old.ARN)
				}
			}
			c.DeleteUnsubscribed = []string{token}
		}
	}
	if found == nil || found.TokenExpires < nowMs {
		return nil, InvalidParameter("Token", "")
	}
	if !found.Pending {
		return found, nil
	}
	found.Pending = false
	found.ConfirmedAnonymously = anonymous
	found.AuthenticateOnUnsubscribe = authOnUnsubscribe && !anonymous
	c.PutSubscriptions = []*Subscription{found}
	if err := s.applyLocked(c); err != nil {
		return nil, err
	}
	return found.clone(), nil
}

// purgeExpired drops pending subscriptions and unsubscribe tombstones whose
// token has expired.
func (s *store) purgeExpired(nowMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c RegistryChange
	for arn, sub := range s.subs {
		if sub.Pending && sub.TokenExpires < nowMs {
			c.DeleteSubscriptions = append(c.DeleteSubscriptions, arn)
		}
	}
	for tok, sub := range s.unsubscribed {
		if sub.TokenExpires < nowMs {
			c.DeleteUnsubscribed = append(c.DeleteUnsubscribed, tok)
		}
	}
	if len(c.DeleteSubscriptions)+len(c.DeleteUnsubscribed) > 0 {
		_ = s.applyLocked(c) // tried again by the next purge if it fails
	}
}

func (s *store) getSubscription(arn string) (*Subscription, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.subs[arn]
	if !ok {
		return nil, false
	}
	return sub.clone(), true
}

func (s *store) updateSubscription(arn string, f func(sub *Subscription) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.subs[arn]
	if !ok {
		return NotFound("Subscription does not exist")
	}
	sub := old.clone()
	if err := f(sub); err != nil {
		return err
	}
	return s.applyLocked(RegistryChange{PutSubscriptions: []*Subscription{sub}})
}

// listSubscriptions lists the subscriptions of one topic, or of all topics
// when topicARN is "", ordered by ARN.
func (s *store) listSubscriptions(topicARN string) []*Subscription {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Subscription
	for _, sub := range s.subs {
		if topicARN == "" || sub.TopicARN == topicARN {
			out = append(out, sub.clone())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ARN < out[j].ARN })
	return out
}
