package sns

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
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
// its Registry, which is the truth: every change is computed by
// Registry.UpdateRegistry from the registry's current state (never from
// this memory, which another node's change may have made stale) and made
// in memory once it is durable. So a node whose memory is stale can answer
// a read from it (until the change is announced and reloaded, cluster.go),
// but can never write it back: a deletion is final, a change of one
// attribute keeps every other attribute as the registry has it, and two
// Subscribes of one (topic, protocol, endpoint) on two nodes get one
// subscription.
type store struct {
	// mu is held for writing across a registry update and its copy into
	// memory, and across a reload, so that a reload cannot fall between
	// the two and bring back what the update changed.
	mu  sync.RWMutex
	reg Registry
	// The values of topics and subs are never changed in place: a change
	// replaces them whole (applyMemLocked, reload), so a reader may keep
	// one it got under mu without copying it (subscription).
	topics       map[string]*Topic        // by ARN
	subs         map[string]*Subscription // by ARN
	unsubscribed map[string]*Subscription // by token
	// invalidated asks the reload loop to reload now (Invalidate).
	invalidated chan struct{}
	// changes counts the changes made in memory (applyMemLocked, reload),
	// under mu: a read of the registry made without mu is copied into
	// memory only if none came between (topicmiss.go).
	changes uint64
	// shared is true when other nodes change the registry too: a topic
	// missing from memory is then looked for in the registry
	// (topicmiss.go).
	shared bool
}

func openStore(reg Registry) (*store, error) {
	r, err := reg.LoadRegistry()
	if err != nil {
		return nil, fmt.Errorf("sns: load topics and subscriptions: %w", err)
	}
	s := &store{reg: reg, topics: map[string]*Topic{}, subs: map[string]*Subscription{}, unsubscribed: map[string]*Subscription{},
		invalidated: make(chan struct{}, 1)}
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

// updateLocked runs f in Registry.UpdateRegistry and, once its change is
// durable, makes the change in memory, then mem: what f learnt about the
// registry (entries it found gone, or newer than memory) even when f
// failed. The values put become the store's own. The caller holds mu for
// writing.
func (s *store) updateLocked(f func(v RegistryView, mem *RegistryChange) (RegistryChange, error)) error {
	var mem RegistryChange
	err := s.reg.UpdateRegistry(func(v RegistryView) (RegistryChange, error) {
		mem = RegistryChange{}
		c, err := f(v, &mem)
		if err == nil {
			mem = mergeChange(c, mem)
		}
		return c, err
	})
	var refused *tidemq.Error // f read the registry, and refused the change
	if err == nil || errors.As(err, &refused) {
		s.applyMemLocked(mem)
	}
	return err
}

// mergeChange is a then b.
func mergeChange(a, b RegistryChange) RegistryChange {
	a.DeleteTopics = append(a.DeleteTopics, b.DeleteTopics...)
	a.DeleteSubscriptions = append(a.DeleteSubscriptions, b.DeleteSubscriptions...)
	a.DeleteUnsubscribed = append(a.DeleteUnsubscribed, b.DeleteUnsubscribed...)
	a.PutTopics = append(a.PutTopics, b.PutTopics...)
	a.PutSubscriptions = append(a.PutSubscriptions, b.PutSubscriptions...)
	a.PutUnsubscribed = append(a.PutUnsubscribed, b.PutUnsubscribed...)
	return a
}

// applyMemLocked makes c in memory: deletes, then puts.
func (s *store) applyMemLocked(c RegistryChange) {
	s.changes++
	for _, arn := range c.DeleteTopics {
		delete(s.topics, arn)
		for k, sub := range s.subs {
			if sub.TopicARN == arn {
				delete(s.subs, k)
			}
		}
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
}

// topicIn returns the topic from v, noting in mem when it is gone.
func topicIn(v RegistryView, mem *RegistryChange, arn string) (*Topic, error) {
	t, err := v.Topic(arn)
	if err == nil && t == nil {
		mem.DeleteTopics = append(mem.DeleteTopics, arn)
		err = NotFound("Topic does not exist")
	}
	return t, err
}

// subscriptionIn returns the subscription from v, noting in mem when it
// is gone.
func subscriptionIn(v RegistryView, mem *RegistryChange, arn string) (*Subscription, error) {
	sub, err := v.Subscription(arn)
	if err == nil && sub == nil {
		mem.DeleteSubscriptions = append(mem.DeleteSubscriptions, arn)
		err = SubscriptionNotFound()
	}
	return sub, err
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
// returns the existing one (CreateTopic is idempotent) if same accepts it,
// and same's error if not.
func (s *store) createTopic(t *Topic, same func(old *Topic) error) (*Topic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := t
	err := s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		old, err := v.Topic(t.ARN)
		if err != nil || old == nil {
			return RegistryChange{PutTopics: []*Topic{t}}, err
		}
		got = old
		mem.PutTopics = append(mem.PutTopics, old)
		return RegistryChange{}, same(old.clone())
	})
	if err != nil {
		return nil, err
	}
	return got.clone(), nil
}

// deleteTopic deletes a topic and its subscriptions, as the registry has
// them. Deleting a missing topic succeeds.
func (s *store) deleteTopic(arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		t, err := v.Topic(arn)
		if err != nil {
			return RegistryChange{}, err
		}
		subs, err := v.Subscriptions(arn)
		if err != nil {
			return RegistryChange{}, err
		}
		if t == nil && len(subs) == 0 { // gone already: nothing to write or announce
			mem.DeleteTopics = append(mem.DeleteTopics, arn)
			return RegistryChange{}, nil
		}
		c := RegistryChange{DeleteTopics: []string{arn}}
		for _, sub := range subs {
			c.DeleteSubscriptions = append(c.DeleteSubscriptions, sub.ARN)
		}
		return c, nil
	})
}

// updateTopic applies f to the topic as the registry has it and stores
// the result.
func (s *store) updateTopic(arn string, f func(t *Topic) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		t, err := topicIn(v, mem, arn)
		if err != nil {
			return RegistryChange{}, err
		}
		if err := f(t); err != nil {
			return RegistryChange{}, err
		}
		return RegistryChange{PutTopics: []*Topic{t}}, nil
	})
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
// The registry is the judge of both: the topic must exist there, and the
// existing subscription is looked for there, so that two nodes subscribing
// the same endpoint at once make one subscription.
func (s *store) subscribe(sub *Subscription) (*Subscription, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got, existed := sub, false
	err := s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		got, existed = sub, false
		if _, err := topicIn(v, mem, sub.TopicARN); err != nil {
			return RegistryChange{}, err
		}
		subs, err := v.Subscriptions(sub.TopicARN)
		if err != nil {
			return RegistryChange{}, err
		}
		for _, old := range subs {
			if old.Protocol == sub.Protocol && old.Endpoint == sub.Endpoint {
				got, existed = old, true
				mem.PutSubscriptions = append(mem.PutSubscriptions, old)
				return RegistryChange{}, nil
			}
		}
		sub.ARN = sub.TopicARN + ":" + uuid.NewString()
		return RegistryChange{PutSubscriptions: []*Subscription{sub}}, nil
	})
	if err != nil {
		return nil, false, err
	}
	return got.clone(), existed, nil
}

// unsubscribe deletes a subscription. A non-nil tombstone (the deleted
// subscription with a fresh token) is kept so that its token can restore
// it.
func (s *store) unsubscribe(arn string, tombstone *Subscription) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		if _, err := subscriptionIn(v, mem, arn); err != nil {
			return RegistryChange{}, err
		}
		c := RegistryChange{DeleteSubscriptions: []string{arn}}
		if tombstone != nil {
			c.PutUnsubscribed = []*Subscription{tombstone}
		}
		return c, nil
	})
}

// confirm confirms the subscription to topicARN that token was sent for,
// or restores an unsubscribed one. Confirming a confirmed subscription
// again returns it unchanged.
func (s *store) confirm(topicARN, token string, nowMs int64, anonymous, authOnUnsubscribe bool) (*Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found *Subscription
	err := s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		found = nil
		var c RegistryChange
		if _, err := topicIn(v, mem, topicARN); err != nil {
			return c, err
		}
		subs, err := v.Subscriptions(topicARN)
		if err != nil {
			return c, err
		}
		for _, sub := range subs {
			if sub.Token == token {
				found = sub
				break
			}
		}
		if found == nil {
			t, err := v.Unsubscribed(token)
			if err != nil {
				return c, err
			}
			if t != nil && t.TopicARN == topicARN && t.TokenExpires >= nowMs {
				found = t.clone()
				found.Pending = true
				for _, old := range subs { // subscribed again meanwhile
					if old.Protocol == t.Protocol && old.Endpoint == t.Endpoint {
						c.DeleteSubscriptions = append(c.DeleteSubscriptions, old.ARN)
					}
				}
				c.DeleteUnsubscribed = []string{token}
			}
		}
		if found == nil || found.TokenExpires < nowMs {
			return RegistryChange{}, InvalidParameter("Token", "")
		}
		if !found.Pending {
			mem.PutSubscriptions = append(mem.PutSubscriptions, found)
			return RegistryChange{}, nil
		}
		found.Pending = false
		found.ConfirmedAnonymously = anonymous
		found.AuthenticateOnUnsubscribe = authOnUnsubscribe && !anonymous
		c.PutSubscriptions = []*Subscription{found}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return found.clone(), nil
}

// purgeExpired drops pending subscriptions and unsubscribe tombstones whose
// token has expired: those memory holds, as the registry has them (one
// confirmed meanwhile on another node is kept).
func (s *store) purgeExpired(nowMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var subs, toks []string
	for arn, sub := range s.subs {
		if sub.Pending && sub.TokenExpires < nowMs {
			subs = append(subs, arn)
		}
	}
	for tok, sub := range s.unsubscribed {
		if sub.TokenExpires < nowMs {
			toks = append(toks, tok)
		}
	}
	if len(subs)+len(toks) == 0 {
		return
	}
	_ = s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		var c RegistryChange
		for _, arn := range subs {
			sub, err := v.Subscription(arn)
			if err != nil {
				return c, err
			}
			if sub == nil || sub.Pending && sub.TokenExpires < nowMs {
				c.DeleteSubscriptions = append(c.DeleteSubscriptions, arn)
			} else {
				mem.PutSubscriptions = append(mem.PutSubscriptions, sub)
			}
		}
		for _, tok := range toks {
			t, err := v.Unsubscribed(tok)
			if err != nil {
				return c, err
			}
			if t == nil || t.TokenExpires < nowMs {
				c.DeleteUnsubscribed = append(c.DeleteUnsubscribed, tok)
			}
		}
		return c, nil
	}) // tried again by the next purge if it fails
}

// subscription returns the subscription of arn as the store keeps it,
// not a copy: the caller reads it and must not change it. The store never
// changes a subscription in place (applyMemLocked replaces it whole with
// the registry's), so what it returns stays as it was. Deliveries read the
// subscription of every one of a publish's deliveries; getSubscription's
// copy (its attributes map) cost an allocation or two each.
func (s *store) subscription(arn string) (*Subscription, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sub, ok := s.subs[arn]
	return sub, ok
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

// updateSubscription applies f to the subscription as the registry has it
// and stores the result.
func (s *store) updateSubscription(arn string, f func(sub *Subscription) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateLocked(func(v RegistryView, mem *RegistryChange) (RegistryChange, error) {
		sub, err := subscriptionIn(v, mem, arn)
		if err != nil {
			return RegistryChange{}, err
		}
		if err := f(sub); err != nil {
			return RegistryChange{}, err
		}
		return RegistryChange{PutSubscriptions: []*Subscription{sub}}, nil
	})
}

// listSubscriptions lists the subscriptions of one topic, or of all topics
// when topicARN is "", ordered by ARN: copies the caller may change.
func (s *store) listSubscriptions(topicARN string) []*Subscription {
	out := s.topicSubscriptions(topicARN)
	for i, sub := range out {
		out[i] = sub.clone()
	}
	return out
}

// topicSubscriptions is listSubscriptions without the copies: the
// subscriptions as the store keeps them, to read and not to change (see
// subscription). Every publish reads its topic's.
func (s *store) topicSubscriptions(topicARN string) []*Subscription {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*Subscription
	for _, sub := range s.subs {
		if topicARN == "" || sub.TopicARN == topicARN {
			out = append(out, sub)
		}
	}
	slices.SortFunc(out, func(a, b *Subscription) int { return strings.Compare(a.ARN, b.ARN) })
	return out
}
