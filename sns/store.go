package sns

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// state is what the store persists.
type state struct {
	Topics        []*Topic
	Subscriptions []*Subscription
	// Unsubscribed are HTTP/HTTPS subscriptions deleted recently, kept
	// until their token expires so that the UnsubscribeConfirmation's
	// SubscribeURL can restore them.
	Unsubscribed []*Subscription `json:",omitempty"`
}

// store keeps topics and subscriptions in memory and, when path is set,
// rewrites a JSON file atomically after every change.
type store struct {
	mu           sync.RWMutex
	path         string
	topics       map[string]*Topic        // by ARN
	subs         map[string]*Subscription // by ARN
	unsubscribed map[string]*Subscription // by token
}

// stateFile is the file name of the topic store in the data directory.
const stateFile = "sns-topics.json"

func openStore(dir string) (*store, error) {
	s := &store{topics: map[string]*Topic{}, subs: map[string]*Subscription{}, unsubscribed: map[string]*Subscription{}}
	if dir == "" {
		return s, nil
	}
	s.path = filepath.Join(dir, stateFile)
	b, err := os.ReadFile(s.path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sns: read %s: %w", s.path, err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("sns: parse %s: %w", s.path, err)
	}
	for _, t := range st.Topics {
		s.topics[t.ARN] = t
	}
	for _, sub := range st.Subscriptions {
		s.subs[sub.ARN] = sub
	}
	for _, sub := range st.Unsubscribed {
		s.unsubscribed[sub.Token] = sub
	}
	return s, nil
}

// saveLocked writes the state file atomically: a temporary file, fsync,
// rename, fsync of the directory. The caller holds mu for writing.
func (s *store) saveLocked() error {
	if s.path == "" {
		return nil
	}
	st := state{Topics: make([]*Topic, 0, len(s.topics)), Subscriptions: make([]*Subscription, 0, len(s.subs))}
	for _, t := range s.topics {
		st.Topics = append(st.Topics, t)
	}
	for _, sub := range s.subs {
		st.Subscriptions = append(st.Subscriptions, sub)
	}
	for _, sub := range s.unsubscribed {
		st.Unsubscribed = append(st.Unsubscribed, sub)
	}
	sort.Slice(st.Unsubscribed, func(i, j int) bool { return st.Unsubscribed[i].Token < st.Unsubscribed[j].Token })
	sort.Slice(st.Topics, func(i, j int) bool { return st.Topics[i].ARN < st.Topics[j].ARN })
	sort.Slice(st.Subscriptions, func(i, j int) bool { return st.Subscriptions[i].ARN < st.Subscriptions[j].ARN })
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(s.path, b, 0o600)
}

func writeFileAtomic(path string, b []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
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
	s.topics[t.ARN] = t
	if err := s.saveLocked(); err != nil {
		delete(s.topics, t.ARN)
		return nil, err
	}
	return t.clone(), nil
}

func (s *store) deleteTopic(arn string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.topics[arn]
	if !ok {
		return nil // DeleteTopic of a missing topic succeeds
	}
	delete(s.topics, arn)
	var removed []*Subscription
	for k, sub := range s.subs {
		if sub.TopicARN == arn {
			removed = append(removed, sub)
			delete(s.subs, k)
		}
	}
	if err := s.saveLocked(); err != nil {
		s.topics[arn] = t
		for _, sub := range removed {
			s.subs[sub.ARN] = sub
		}
		return err
	}
	return nil
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
	s.topics[arn] = t
	if err := s.saveLocked(); err != nil {
		s.topics[arn] = old
		return err
	}
	return nil
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
	s.subs[sub.ARN] = sub
	if err := s.saveLocked(); err != nil {
		delete(s.subs, sub.ARN)
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
	sub, ok := s.subs[arn]
	if !ok {
		return NotFound("Subscription does not exist")
	}
	delete(s.subs, arn)
	if tombstone != nil {
		s.unsubscribed[tombstone.Token] = tombstone
	}
	if err := s.saveLocked(); err != nil {
		s.subs[arn] = sub
		if tombstone != nil {
			delete(s.unsubscribed, tombstone.Token)
		}
		return err
	}
	return nil
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
	for _, sub := range s.subs {
		if sub.Token == token && sub.TopicARN == topicARN {
			found = sub
			break
		}
	}
	if found == nil {
		if t, ok := s.unsubscribed[token]; ok && t.TopicARN == topicARN && t.TokenExpires >= nowMs {
			restored := t.clone()
			restored.Pending = true
			for _, old := range s.subs { // subscribed again meanwhile
				if old.TopicARN == t.TopicARN && old.Protocol == t.Protocol && old.Endpoint == t.Endpoint {
					delete(s.subs, old.ARN)
				}
			}
			delete(s.unsubscribed, token)
			found = restored
			s.subs[restored.ARN] = restored
		}
	}
	if found == nil || found.TokenExpires < nowMs {
		return nil, InvalidParameter("Token", "")
	}
	if !found.Pending {
		return found.clone(), nil
	}
	old := found.clone()
	found.Pending = false
	found.ConfirmedAnonymously = anonymous
	found.AuthenticateOnUnsubscribe = authOnUnsubscribe && !anonymous
	if err := s.saveLocked(); err != nil {
		s.subs[found.ARN] = old
		return nil, err
	}
	return found.clone(), nil
}

// purgeExpired drops pending subscriptions and unsubscribe tombstones whose
// token has expired.
func (s *store) purgeExpired(nowMs int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for arn, sub := range s.subs {
		if sub.Pending && sub.TokenExpires < nowMs {
			delete(s.subs, arn)
			changed = true
		}
	}
	for tok, sub := range s.unsubscribed {
		if sub.TokenExpires < nowMs {
			delete(s.unsubscribed, tok)
			changed = true
		}
	}
	if changed {
		_ = s.saveLocked() // retried by the next change if it fails
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
	s.subs[arn] = sub
	if err := s.saveLocked(); err != nil {
		s.subs[arn] = old
		return err
	}
	return nil
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
