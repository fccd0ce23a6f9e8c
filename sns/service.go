// Package sns is tidemq's topic service: SNS topics, their subscriptions
// (SQS queues, and HTTP/HTTPS endpoints with the confirmation handshake),
// and publishing with fan-out through a tidemq.Broker.
//
// Topics and subscriptions are kept in memory and written through to the
// service's store (state.go: what is kept; keys.go: where). Publishing is
// crash-safe: a publish is first recorded durably in an outbox
// (outbox.go; a standard topic's publish whose one delivery goes to a queue
// needs no record unless that delivery fails), then delivered — to SQS queues before Publish
// answers, to HTTP/HTTPS endpoints in the background with retries
// (retry.go) — and removed from the outbox delivery by delivery. What cannot
// be delivered goes to the subscription's dead-letter queue (redrive.go) or
// is logged and counted (stats.go). FIFO topics deduplicate publishes
// (dedup.go).
//
// Lock order: a topic's FIFO locks (topicLock, then the Outbox's: fifo.go),
// then dedupMu, then the topic store's mutex. closeMu is held for reading
// by every operation that writes the outbox, and for writing only by Close.
package sns

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/mem"
)

// Options configure a Service.
type Options struct {
	Broker    tidemq.Broker
	Region    string // default us-east-1
	AccountID string // default 000000000000
	Logger    *slog.Logger
	// Store keeps the service's state — topics, subscriptions, the signing
	// key and the outbox of publishes not yet fully delivered — under the
	// keys beginning with Namespace, and nothing else of it is touched:
	// `tidemq serve` gives the one store it shares with the engine. nil
	// means a store in memory. The service owns it from Open on: Close (or
	// a failed Open) closes it.
	Store storage.Store
	// Clock drives retry timers, deduplication windows and token expiry;
	// nil means the system clock.
	Clock tidemq.Clock
	// Now is the clock of notification timestamps; nil means Clock.Now.
	Now func() time.Time
	// PublicURL is the scheme and host of SubscribeURL and UnsubscribeURL
	// when the caller does not give one (e.g. "http://localhost:9324").
	PublicURL string
	// HTTPClient posts to HTTP/HTTPS subscriptions; nil means a client
	// with HTTPTimeout.
	HTTPClient *http.Client
	// HTTPTimeout bounds one HTTP delivery attempt; 0 means 15 seconds
	// (AWS's limit for an endpoint's answer).
	HTTPTimeout time.Duration
	// HTTPRetry is the retry policy of HTTP/HTTPS deliveries that neither
	// the topic's nor the subscription's DeliveryPolicy overrides; nil
	// means DefaultHTTPRetryPolicy.
	HTTPRetry *RetryPolicy
	// SQSRetry is the retry policy of SQS deliveries that fail for a
	// server-side reason; nil means DefaultSQSRetryPolicy.
	SQSRetry *RetryPolicy
	// FIFORetryWait bounds how long (real time) a FIFO Publish waits for
	// its retried SQS deliveries before it answers; they go on in the
	// background after that (the publish is recorded, so it is delivered
	// in the end), and a later publish may then overtake it. 0 means 20
	// seconds.
	FIFORetryWait time.Duration
	// MaxPendingHTTP bounds the deliveries to one HTTP/HTTPS subscription
	// held in memory while they are tried and retried: beyond it, a
	// message for that endpoint is dead-lettered at once (or, without a
	// RedrivePolicy, dropped, logged and counted), so that an endpoint
	// that is down under a high publish rate cannot exhaust memory. 0
	// means 10,000.
	MaxPendingHTTP int
	// MaxConcurrentPosts bounds HTTP requests in flight; 0 means 64.
	MaxConcurrentPosts int
	// DeliveryCheck, when set, is asked before each delivery into a queue
	// (the subscription's or its dead-letter queue) whether the topic may
	// send there; an error (a *tidemq.Error of the Sender fault, such as
	// AccessDenied) fails the delivery for good: it is dead-lettered or
	// dropped, logged and counted, like a delivery to a deleted queue. An
	// error of the Receiver fault (ServiceUnavailable: the queue's policy
	// could not be read) is retried as any failed attempt.
	// nil: every delivery is allowed (tidemq serve without --auth).
	DeliveryCheck func(ctx context.Context, topicARN, queueARN string) error

	// Signing says which notification envelopes carry a signature: every
	// one of a standard topic (SignAll, the default, as AWS), or only those
	// posted to HTTP/HTTPS endpoints (SignHTTPOnly; sign.go).
	Signing SignMode

	// Several nodes on one shared Store (cluster.go). NodeID names this
	// node in the outbox records it writes; when it is set, Open does not
	// deliver what the outbox holds (the records of live nodes are theirs,
	// those of dead nodes go to the one node running Redeliver).
	NodeID string
	// RecordIDs numbers outbox records: unique across the nodes sharing
	// the Store and increasing in publish order. nil means a counter of
	// this process (one node).
	RecordIDs func() (uint64, error)
	// Reload, when positive, reloads topics and subscriptions from the
	// Store that often, so that other nodes' changes become visible
	// within it.
	Reload time.Duration
}

// Service manages topics and subscriptions and publishes messages. Its
// calls have the Broker's shape (tidemq.Broker): a context and a params
// struct named after the SNS action (CreateTopic(ctx, CreateTopicParams),
// Subscribe(ctx, SubscribeParams), ...), the transport (api/sns) filling
// the params from the request and passing the request's context. The
// topic store's calls are short and are not cancelled by the context; it
// is there so that a call can be, as the Broker's are.
type Service struct {
	opt        Options
	httpRetry  RetryPolicy
	sqsRetry   RetryPolicy
	state      kvState // the Store: Registry, Outbox and KeyStore
	store      *store
	signer     *signer
	log        *slog.Logger
	seq        atomic.Uint64
	locks      sync.Map // topic ARN -> *sync.Mutex, serializing FIFO publishes
	filters    filterCache
	httpQueued sync.Map // subscription ARN -> *atomic.Int64: HTTP deliveries held in memory
	outbox     Outbox
	nextRecord uint64 // guarded by recordMu
	recordMu   sync.Mutex
	dedupMu    sync.Mutex
	dedup      *dedupCache
	stats      counters
	posts      chan struct{} // semaphore of HTTP requests in flight
	signPool   signPool      // semaphore of signatures computed at once
	lanes      lanes         // SQS deliveries gathered per queue (lanes.go)
	// noTogether is set once the broker answered that it cannot send to
	// several queues in one write (together.go).
	noTogether atomic.Bool

	ctx     context.Context // canceled by Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup // background deliveries
	closeMu sync.RWMutex
	closed  bool // guarded by closeMu
}

// Open loads the service's state from o.Store (or starts one in memory)
// and delivers what the outbox still holds from before a crash or
// shutdown: SQS deliveries before Open returns, HTTP/HTTPS ones in the
// background.
func Open(o Options) (*Service, error) {
	s, err := open(o)
	if err != nil && o.Store != nil {
		o.Store.Close()
	}
	return s, err
}

func open(o Options) (*Service, error) {
	if o.Region == "" {
		o.Region = tidemq.DefaultRegion
	}
	if o.AccountID == "" {
		o.AccountID = tidemq.DefaultAccountID
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Clock == nil {
		o.Clock = tidemq.SystemClock{}
	}
	if o.Now == nil {
		o.Now = o.Clock.Now
	}
	if o.MaxPendingHTTP <= 0 {
		o.MaxPendingHTTP = 10000
	}
	if o.FIFORetryWait <= 0 {
		o.FIFORetryWait = 20 * time.Second
	}
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = 15 * time.Second
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: o.HTTPTimeout}
	}
	if o.MaxConcurrentPosts <= 0 {
		o.MaxConcurrentPosts = 64
	}
	if o.Store == nil {
		o.Store = mem.New()
	}
	if o.Signing == "" {
		o.Signing = SignAll
	}
	state := newKVState(o.Store)
	st, err := openStore(state)
	if err != nil {
		return nil, err
	}
	st.shared = o.Reload > 0
	sg, err := loadSigner(state)
	if err != nil {
		return nil, err
	}
	s := &Service{opt: o, state: state, store: st, signer: sg, log: o.Logger, outbox: state, dedup: newDedupCache(),
		httpRetry: DefaultHTTPRetryPolicy, sqsRetry: DefaultSQSRetryPolicy, posts: make(chan struct{}, o.MaxConcurrentPosts),
		signPool: newSignPool()}
	if o.HTTPRetry != nil {
		s.httpRetry = *o.HTTPRetry
	}
	if o.SQSRetry != nil {
		s.sqsRetry = *o.SQSRetry
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.seq.Store(uint64(time.Now().UnixNano()))
	recs, err := s.loadOutbox()
	if err != nil {
		s.cancel()
		return nil, err
	}
	if o.NodeID != "" {
		recs = nil // Redeliver's, on the node that runs it
	}
	if len(recs) > 0 {
		s.log.Info("sns: delivering publishes left in the outbox", "publishes", len(recs))
	}
	if o.Reload > 0 {
		s.spawn(s.reloadLoop)
	}
	for _, r := range recs {
		s.stats.recovered.Add(uint64(len(r.deliveries)))
		s.deliverRecord(r, false)
	}
	return s, nil
}

// Close stops background deliveries (what they had not finished stays in
// the outbox for the next Open), waits for them and closes the store.
// Publishing after Close fails.
func (s *Service) Close() error {
	s.cancel()
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.wg.Wait()
	return s.state.Close()
}

// enter guards an operation that writes the outbox against Close; the
// caller calls the returned function when done.
func (s *Service) enter() (func(), error) {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return nil, InternalError("The topic service is shutting down.")
	}
	return s.closeMu.RUnlock, nil
}

// spawn runs f in the background, tracked by Close.
func (s *Service) spawn(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Region and AccountID are the service's.
func (s *Service) Region() string    { return s.opt.Region }
func (s *Service) AccountID() string { return s.opt.AccountID }

// CertificatePEM is the self-signed certificate notifications are signed
// with.
func (s *Service) CertificatePEM() []byte { return s.signer.certPEM }

// TopicARN returns the ARN of a topic name of the service's account.
func (s *Service) TopicARN(name string) string {
	return s.TopicARNIn("", name)
}

// TopicARNIn returns the ARN of a topic name of account ("" is the
// service's): topics are per account, as queues are.
func (s *Service) TopicARNIn(account, name string) string {
	if account == "" {
		account = s.opt.AccountID
	}
	return "arn:aws:sns:" + s.opt.Region + ":" + account + ":" + name
}

// OwnerOf is the account that owns a topic (or a subscription of it): its
// ARN's.
func (s *Service) OwnerOf(arn string) string {
	if a, ok := tidemq.ParseARN(arn); ok && tidemq.ValidAccount(a.Account) {
		return a.Account
	}
	return s.opt.AccountID
}

// topic resolves a TopicArn parameter.
func (s *Service) topic(param, arn string) (*Topic, error) {
	if arn == "" {
		return nil, InvalidParameter(param, "")
	}
	if n := len(strings.Split(arn, ":")); n < 6 {
		return nil, ShortARN(param, n)
	}
	t, ok, err := s.store.readTopic(arn)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, NotFound("Topic does not exist")
	}
	return t, nil
}

// Topic attributes that SetTopicAttributes and CreateTopic accept.
var settableTopicAttrs = map[string]bool{
	"DisplayName": true, "Policy": true, "DeliveryPolicy": true, "KmsMasterKeyId": true,
	"SignatureVersion": true, "TracingConfig": true, "ContentBasedDeduplication": true,
	"FifoThroughputScope": true, "ArchivePolicy": true, "DataProtectionPolicy": true,
}

func checkTopicAttr(fifo bool, name, value string) error {
	if !settableTopicAttrs[name] {
		return InvalidParameter("AttributeName", "")
	}
	switch name {
	case "SignatureVersion":
		if value != "1" && value != "2" {
			return InvalidParameter("Attributes", "SignatureVersion: Invalid value ["+value+"]")
		}
	case "ContentBasedDeduplication":
		if !fifo {
			return InvalidParameter("Attributes", "Content based deduplication can only be set for FIFO topics")
		}
		if value != "true" && value != "false" {
			return InvalidParameter("Attributes", "ContentBasedDeduplication: Invalid value ["+value+"]")
		}
	case "FifoThroughputScope":
		if !fifo {
			return InvalidParameter("Attributes", "FifoThroughputScope can only be set for FIFO topics")
		}
		if value != "Topic" && value != "MessageGroup" {
			return InvalidParameter("Attributes", "FifoThroughputScope: Invalid value ["+value+"]")
		}
	case "DisplayName":
		if len(value) > 100 {
			return InvalidParameter("DisplayName", "DisplayName must be at most 100 characters")
		}
	case "Policy":
		if value != "" && !json.Valid([]byte(value)) {
			return InvalidParameter("Attributes", name+": must be a JSON object")
		}
	case "DeliveryPolicy":
		if value != "" {
			return checkTopicDeliveryPolicy(value)
		}
	}
	return nil
}

// CreateTopic creates a topic, or returns the existing topic of that name.
func (s *Service) CreateTopic(_ context.Context, p CreateTopicParams) (*Topic, error) {
	name, attrs, tags := p.Name, p.Attributes, p.Tags
	fifo := false
	if v, ok := attrs["FifoTopic"]; ok {
		switch strings.ToLower(v) {
		case "true":
			fifo = true
		case "false":
		default:
			return nil, InvalidParameter("Attributes", "FifoTopic: Invalid value ["+v+"]")
		}
	}
	if !validTopicName(name, fifo) {
		if strings.HasSuffix(name, ".fifo") && !fifo {
			return nil, InvalidParameter("Topic Name", "Fifo Topic names must end with .fifo and they must have FifoTopic attribute set to true")
		}
		if fifo {
			return nil, InvalidParameter("Topic Name", "Fifo Topic names must end with .fifo")
		}
		return nil, InvalidParameter("Topic Name", "")
	}
	if err := checkTags(tags); err != nil {
		return nil, err
	}
	if len(tags) > MaxTags {
		return nil, TagLimitExceeded()
	}
	if p.Account != "" && !tidemq.ValidAccount(p.Account) {
		return nil, InvalidParameter("Account", p.Account)
	}
	t := &Topic{Name: name, ARN: s.TopicARNIn(p.Account, name), FIFO: fifo, Tags: copyMap(tags)}
	for k, v := range attrs {
		if k == "FifoTopic" {
			continue
		}
		if err := checkTopicAttr(fifo, k, v); err != nil {
			return nil, err
		}
		if t.Attributes == nil {
			t.Attributes = map[string]string{}
		}
		t.Attributes[k] = v
	}
	// Idempotent, unless the call asks for attributes or tags the topic
	// (as the registry has it) lacks.
	return s.store.createTopic(t, func(old *Topic) error { return sameTopic(old, fifo, attrs, tags) })
}

// DeleteTopic deletes a topic and its subscriptions. Deleting a missing
// topic succeeds.
func (s *Service) DeleteTopic(_ context.Context, p DeleteTopicParams) error {
	arn := p.TopicARN
	// A topic this node has not seen yet may exist on another's: the
	// registry decides.
	if _, err := s.topic("TopicArn", arn); err != nil && !tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
		return err
	}
	s.locks.Delete(arn)
	return s.store.deleteTopic(arn)
}

// ListTopics lists every topic, ordered by ARN.
func (s *Service) ListTopics(context.Context) []*Topic { return s.store.listTopics() }

// GetTopicAttributes returns a topic's attributes.
func (s *Service) GetTopicAttributes(_ context.Context, p GetTopicAttributesParams) (map[string]string, error) {
	arn := p.TopicARN
	t, err := s.topic("TopicArn", arn)
	if err != nil {
		return nil, err
	}
	s.store.purgeExpired(s.opt.Now().UnixMilli())
	confirmed, pending := 0, 0
	for _, sub := range s.store.listSubscriptions(arn) {
		if sub.Pending {
			pending++
		} else {
			confirmed++
		}
	}
	out := map[string]string{
		"TopicArn":                t.ARN,
		"Owner":                   s.OwnerOf(t.ARN),
		"DisplayName":             "",
		"Policy":                  s.defaultPolicy(t.ARN),
		"SubscriptionsConfirmed":  strconv.Itoa(confirmed),
		"SubscriptionsPending":    strconv.Itoa(pending),
		"SubscriptionsDeleted":    "0",
		"EffectiveDeliveryPolicy": defaultDeliveryPolicy,
	}
	if t.FIFO {
		// FifoThroughputScope is shown only once set, as AWS does.
		out["FifoTopic"] = "true"
		out["ContentBasedDeduplication"] = "false"
	}
	for k, v := range t.Attributes {
		out[k] = v
	}
	if p, ok := t.Attributes["DeliveryPolicy"]; ok {
		out["EffectiveDeliveryPolicy"] = p
	}
	return out, nil
}

const defaultDeliveryPolicy = `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`

// TopicPolicy returns the policy that decides calls on a topic (package
// authz): its Policy attribute, or AWS's default topic policy while it has
// none of its own, as GetTopicAttributes shows it. NotFound when there is
// no such topic.
func (s *Service) TopicPolicy(arn string) (string, error) {
	t, err := s.topic("TopicArn", arn)
	if err != nil {
		return "", err
	}
	if p := t.Attributes["Policy"]; p != "" {
		return p, nil
	}
	return s.defaultPolicy(t.ARN), nil
}

func (s *Service) defaultPolicy(arn string) string {
	return `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"` +
		arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"` + s.OwnerOf(arn) + `"}}}]}`
}

// SetTopicAttributes sets one topic attribute.
func (s *Service) SetTopicAttributes(_ context.Context, p SetTopicAttributesParams) error {
	arn, name, value := p.TopicARN, p.AttributeName, p.AttributeValue
	t, err := s.topic("TopicArn", arn)
	if err != nil {
		return err
	}
	if err := checkTopicAttr(t.FIFO, name, value); err != nil {
		return err
	}
	return s.store.updateTopic(arn, func(t *Topic) error {
		if t.Attributes == nil {
			t.Attributes = map[string]string{}
		}
		t.Attributes[name] = value
		return nil
	})
}

// Subscription attributes that Subscribe and SetSubscriptionAttributes
// accept.
var settableSubAttrs = map[string]bool{
	"RawMessageDelivery": true, "FilterPolicy": true, "FilterPolicyScope": true,
	"RedrivePolicy": true, "DeliveryPolicy": true,
}

// checkSubAttrs validates subscription attributes after a change (for a
// subscription to t) and normalises RawMessageDelivery.
func (s *Service) checkSubAttrs(t *Topic, endpoint string, attrs map[string]string) error {
	for k, v := range attrs {
		if !settableSubAttrs[k] {
			return InvalidParameter("AttributeName", "Invalid attribute name: "+k)
		}
		switch k {
		case "RawMessageDelivery":
			switch strings.ToLower(v) {
			case "true", "false":
				attrs[k] = strings.ToLower(v)
			default:
				return &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: RawMessageDelivery: Invalid value [" + v + "]. Must be true or false."}
			}
		case "RedrivePolicy":
			if v != "" {
				// A FIFO topic's subscription needs a FIFO dead-letter
				// queue only when its own queue is FIFO.
				if _, err := s.checkRedrivePolicy(v, s.OwnerOf(t.ARN), t.FIFO && strings.HasSuffix(endpoint, ".fifo")); err != nil {
					return err
				}
			}
		case "DeliveryPolicy":
			if v != "" {
				if err := checkSubscriptionDeliveryPolicy(v); err != nil {
					return err
				}
			}
		}
	}
	if p := attrs["FilterPolicy"]; p != "" {
		if _, err := CompileFilterPolicy(p, attrs["FilterPolicyScope"]); err != nil {
			return err
		}
	} else if sc := attrs["FilterPolicyScope"]; sc != "" && sc != ScopeMessageAttributes && sc != ScopeMessageBody {
		return InvalidParameter("Attributes", "FilterPolicyScope: Invalid value ["+sc+"]. Please use either MessageBody or MessageAttributes")
	}
	return nil
}

// awsProtocols are the subscription protocols AWS knows; tidemq answers
// sqs, http and https.
var awsProtocols = map[string]bool{"sqs": true, "http": true, "https": true, "email": true, "email-json": true,
	"sms": true, "application": true, "lambda": true, "firehose": true}

// Subscribe subscribes an endpoint to a topic: an SQS queue (Protocol
// sqs, Endpoint its ARN) or an HTTP/HTTPS URL. An SQS subscription is
// confirmed at once. An HTTP/HTTPS subscription is pending until confirmed:
// a SubscriptionConfirmation message is posted to the endpoint in the
// background. Subscribing the same endpoint again returns the existing
// subscription (and, while it is pending, sends the confirmation again).
func (s *Service) Subscribe(_ context.Context, in SubscribeParams) (*Subscription, error) {
	leave, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	t, err := s.topic("TopicArn", in.TopicARN)
	if err != nil {
		return nil, err
	}
	sub := &Subscription{TopicARN: in.TopicARN, Protocol: in.Protocol, Endpoint: in.Endpoint}
	switch in.Protocol {
	case "":
		return nil, InvalidParameter("Protocol", "")
	case "sqs":
		a, ok := tidemq.ParseARN(in.Endpoint)
		if !ok || a.Service != "sqs" || strings.Contains(a.Resource, ":") {
			return nil, InvalidParameter("SQS endpoint ARN", "")
		}
		if !tidemq.ValidAccount(a.Account) || a.Region != s.opt.Region {
			return nil, InvalidParameter("SQS endpoint ARN", "the queue must be in this tidemq's region")
		}
		if s.opt.DeliveryCheck == nil && a.Account != s.OwnerOf(t.ARN) {
			// Without access control no queue policy can let a topic
			// into another account's queue (and without --auth every
			// name is the server account's, so it is a mistyped ARN):
			// refused now rather than failing every delivery.
			return nil, InvalidParameter("SQS endpoint ARN", "the queue must be in the topic's region and account")
		}
		if !t.FIFO && strings.HasSuffix(a.Resource, ".fifo") {
			// AWS's wording, "Invalid parameter: " twice.
			return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics"}
		}
	case "http", "https":
		if t.FIFO {
			return nil, InvalidParameter("Protocol", "FIFO topics can only have sqs subscriptions, not "+in.Protocol)
		}
		if err := checkHTTPEndpoint(in.Protocol, in.Endpoint); err != nil {
			return nil, err
		}
		sub.Pending = true
		sub.Token = newToken()
		sub.TokenExpires = s.opt.Now().Add(TokenLifetime).UnixMilli()
		sub.BaseURL = strings.TrimRight(in.BaseURL, "/")
		if sub.BaseURL == "" {
			sub.BaseURL = strings.TrimRight(s.opt.PublicURL, "/")
		}
	default:
		if !awsProtocols[in.Protocol] {
			return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid parameter: Amazon SNS does not support this protocol string: " + in.Protocol}
		}
		return nil, InvalidParameter("Protocol", "tidemq supports the sqs, http and https protocols, not "+in.Protocol)
	}
	attrs := copyMap(in.Attributes)
	if attrs == nil {
		attrs = map[string]string{}
	}
	if err := s.checkSubAttrs(t, in.Endpoint, attrs); err != nil {
		return nil, subscribeAttributeError(err)
	}
	for k, v := range attrs {
		if v == "" {
			delete(attrs, k)
		}
	}
	if len(attrs) == 0 {
		attrs = nil
	}
	sub.Attributes = attrs
	s.store.purgeExpired(s.opt.Now().UnixMilli())
	got, existed, err := s.store.subscribe(sub)
	if err != nil {
		return nil, err
	}
	if existed && len(in.Attributes) > 0 && !sameMap(withoutDefaults(got.Attributes), withoutDefaults(attrs)) {
		return nil, InvalidParameter("Attributes", "Subscription already exists with different attributes")
	}
	if got.Pending {
		s.sendConfirmation(t, got, typeSubscriptionConfirmation)
	}
	return got, nil
}

// subscribeAttributeError words a FilterPolicy or RawMessageDelivery
// problem for Subscribe as AWS does: what SetSubscriptionAttributes
// answers "Invalid parameter: X", Subscribe answers "Invalid parameter:
// Attributes Reason: X". (A RedrivePolicy problem is worded the same by
// both.)
func subscribeAttributeError(err error) error {
	const p = "Invalid parameter: "
	var e *tidemq.Error
	if !errors.As(err, &e) || e.Code != tidemq.ErrSNSInvalidParameter {
		return err
	}
	for _, attr := range []string{"FilterPolicy:", "Filter policy scope", "RawMessageDelivery:"} {
		if strings.HasPrefix(e.Message, p+attr) {
			return &tidemq.Error{Code: e.Code, Message: p + "Attributes Reason: " + strings.TrimPrefix(e.Message, p)}
		}
	}
	return err
}

// withoutDefaults returns subscription attributes without those whose
// value is the default (RawMessageDelivery "false", FilterPolicyScope
// MessageAttributes): AWS takes a Subscribe that repeats them, or leaves
// them out, for the same subscription.
func withoutDefaults(attrs map[string]string) map[string]string {
	out := make(map[string]string, len(attrs))
	for k, v := range attrs {
		if v == "" || (k == "RawMessageDelivery" && v == "false") || (k == "FilterPolicyScope" && v == ScopeMessageAttributes) {
			continue
		}
		out[k] = v
	}
	return out
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func (s *Service) subscription(arn string) (*Subscription, error) {
	if arn == "" {
		return nil, InvalidParameter("SubscriptionArn", "")
	}
	if n := len(strings.Split(arn, ":")); n < 6 {
		return nil, ShortARN("SubscriptionArn", n)
	}
	sub, ok := s.store.getSubscription(arn)
	if !ok {
		return nil, SubscriptionNotFound()
	}
	return sub, nil
}

// Unsubscribe deletes a subscription. An HTTP/HTTPS endpoint is sent an
// UnsubscribeConfirmation whose SubscribeURL restores the subscription.
func (s *Service) Unsubscribe(_ context.Context, in UnsubscribeParams) error {
	arn, anonymous := in.SubscriptionARN, in.Anonymous
	leave, err := s.enter()
	if err != nil {
		return err
	}
	defer leave()
	sub, err := s.subscription(arn)
	if tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
		return nil // AWS answers a second Unsubscribe (or one of an unknown subscription) with success
	}
	if err != nil {
		return err
	}
	if anonymous && sub.AuthenticateOnUnsubscribe {
		return AuthorizationError("This subscription was confirmed with AuthenticateOnUnsubscribe: Unsubscribe needs an AWS signature.")
	}
	var tomb *Subscription
	if sub.IsHTTP() && !sub.Pending {
		tomb = sub.clone()
		tomb.Token = newToken()
		tomb.TokenExpires = s.opt.Now().Add(TokenLifetime).UnixMilli()
	}
	if err := s.store.unsubscribe(arn, tomb); err != nil {
		return err
	}
	if tomb != nil {
		if t, ok := s.store.getTopic(sub.TopicARN); ok {
			s.sendConfirmation(t, tomb, typeUnsubscribeConfirmation)
		}
	}
	return nil
}

// ConfirmSubscription confirms a pending HTTP/HTTPS subscription with the
// token sent to its endpoint (or restores an unsubscribed one with the
// token of its UnsubscribeConfirmation) and returns it. anonymous says
// that the request carried no AWS signature; authenticateOnUnsubscribe
// (honoured only when it did) forbids anonymous unsubscribes.
//
// As on AWS: a token that is not of a token's shape is answered "Invalid
// token"; a valid token confirms its subscription even when the TopicArn
// names a topic of this region that does not exist; any other unknown
// token is InvalidParameter Token (400, not NotFound).
func (s *Service) ConfirmSubscription(_ context.Context, p ConfirmSubscriptionParams) (*Subscription, error) {
	topicARN, token, anonymous, authenticateOnUnsubscribe := p.TopicARN, p.Token, p.Anonymous, p.AuthenticateOnUnsubscribe
	if token == "" {
		return nil, InvalidParameter("Token", "")
	}
	if !tokenShaped(token) {
		return nil, &tidemq.Error{Code: tidemq.ErrSNSInvalidParameter, Message: "Invalid token"}
	}
	_, err := s.topic("TopicArn", topicARN)
	if tidemq.HasCode(err, tidemq.ErrSNSNotFound) {
		a, ok := tidemq.ParseARN(topicARN)
		if !ok || a.Region != s.opt.Region {
			return nil, InvalidParameter("Token", "")
		}
		for _, sub := range s.store.listSubscriptions("") {
			if sub.Token == token {
				return s.store.confirm(sub.TopicARN, token, s.opt.Now().UnixMilli(), anonymous, authenticateOnUnsubscribe)
			}
		}
		return nil, InvalidParameter("Token", "")
	}
	if err != nil {
		return nil, err
	}
	return s.store.confirm(topicARN, token, s.opt.Now().UnixMilli(), anonymous, authenticateOnUnsubscribe)
}

// tokenShaped reports whether a confirmation token has the shape of one:
// at least 64 hexadecimal digits (tidemq's are 256, AWS's about as many).
func tokenShaped(token string) bool {
	if len(token) < 64 {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ListSubscriptions lists the subscriptions of a topic, or of every topic
// when topicARN is "". Pending ones have Pending set.
func (s *Service) ListSubscriptions(_ context.Context, p ListSubscriptionsParams) ([]*Subscription, error) {
	topicARN := p.TopicARN
	if topicARN != "" {
		if _, err := s.topic("TopicArn", topicARN); err != nil {
			return nil, err
		}
	}
	s.store.purgeExpired(s.opt.Now().UnixMilli())
	return s.store.listSubscriptions(topicARN), nil
}

// GetSubscriptionAttributes returns a subscription's attributes.
func (s *Service) GetSubscriptionAttributes(_ context.Context, p GetSubscriptionAttributesParams) (map[string]string, error) {
	arn := p.SubscriptionARN
	sub, err := s.subscription(arn)
	if err != nil {
		return nil, err
	}
	out := map[string]string{
		"SubscriptionArn":              sub.ARN,
		"TopicArn":                     sub.TopicARN,
		"Owner":                        s.OwnerOf(sub.TopicARN),
		"Protocol":                     sub.Protocol,
		"Endpoint":                     sub.Endpoint,
		"PendingConfirmation":          strconv.FormatBool(sub.Pending),
		"ConfirmationWasAuthenticated": strconv.FormatBool(!sub.Pending && !sub.ConfirmedAnonymously),
		"RawMessageDelivery":           "false",
		"SubscriptionPrincipal":        "arn:aws:iam::" + s.OwnerOf(sub.TopicARN) + ":root",
	}
	// AWS shows EffectiveDeliveryPolicy only for HTTP/HTTPS subscriptions,
	// and FilterPolicyScope only with a FilterPolicy.
	if sub.IsHTTP() {
		policy, contentType := s.httpPolicy(s.topicDeliveryPolicy(sub.TopicARN), sub.Attributes["DeliveryPolicy"])
		out["EffectiveDeliveryPolicy"] = effectiveDeliveryPolicy(policy, contentType)
	}
	for k, v := range sub.Attributes {
		out[k] = v
	}
	if _, ok := sub.Attributes["FilterPolicy"]; ok {
		if _, ok := sub.Attributes["FilterPolicyScope"]; !ok {
			out["FilterPolicyScope"] = ScopeMessageAttributes
		}
	} else {
		delete(out, "FilterPolicyScope")
	}
	return out, nil
}

// SetSubscriptionAttribute sets (or, with "", clears) one subscription
// attribute.
func (s *Service) SetSubscriptionAttributes(_ context.Context, p SetSubscriptionAttributesParams) error {
	arn, name, value := p.SubscriptionARN, p.AttributeName, p.AttributeValue
	sub, err := s.subscription(arn)
	if err != nil {
		return err
	}
	if !settableSubAttrs[name] {
		return InvalidParameter("AttributeName", "Invalid attribute name: "+name)
	}
	t, err := s.topic("TopicArn", sub.TopicARN)
	if err != nil {
		return err
	}
	return s.store.updateSubscription(arn, func(sub *Subscription) error {
		attrs := copyMap(sub.Attributes)
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[name] = value
		if err := s.checkSubAttrs(t, sub.Endpoint, attrs); err != nil {
			return err
		}
		if value == "" {
			delete(attrs, name)
		}
		if len(attrs) == 0 {
			attrs = nil
		}
		sub.Attributes = attrs
		return nil
	})
}

// topicDeliveryPolicy returns a topic's DeliveryPolicy attribute, or "".
func (s *Service) topicDeliveryPolicy(arn string) string {
	if t, ok := s.store.getTopic(arn); ok {
		return t.Attributes["DeliveryPolicy"]
	}
	return ""
}
