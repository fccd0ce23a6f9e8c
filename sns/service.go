// Package sns is tidemq's topic store: SNS topics, their SQS subscriptions,
// and publishing with fan-out into queues through a tidemq.Broker.
//
// Topics and subscriptions are kept in memory and, unless the service is
// opened without a directory, in a JSON file rewritten atomically on every
// change. Fan-out is synchronous and best effort: a Publish answers once every
// matching subscription has been tried; a delivery that fails (a deleted
// queue, say) is logged and dropped.
package sns

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
)

// Options configure a Service.
type Options struct {
	Broker    tidemq.Broker
	Region    string // default us-east-1
	AccountID string // default 000000000000
	// Dir is the data directory of the topic store and signing key; ""
	// keeps everything in memory.
	Dir    string
	Logger *slog.Logger
	// Now is the clock of notification timestamps; nil means time.Now.
	Now func() time.Time
}

// Service manages topics and subscriptions and publishes messages.
type Service struct {
	opt    Options
	store  *store
	signer *signer
	log    *slog.Logger
	seq    atomic.Uint64
	locks  sync.Map // topic ARN -> *sync.Mutex, serializing FIFO publishes
}

// Open opens the topic store in o.Dir (or in memory).
func Open(o Options) (*Service, error) {
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.AccountID == "" {
		o.AccountID = "000000000000"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("sns: %w", err)
		}
	}
	st, err := openStore(o.Dir)
	if err != nil {
		return nil, err
	}
	sg, err := loadSigner(o.Dir)
	if err != nil {
		return nil, err
	}
	s := &Service{opt: o, store: st, signer: sg, log: o.Logger}
	s.seq.Store(uint64(time.Now().UnixNano()))
	return s, nil
}

// Region and AccountID are the service's.
func (s *Service) Region() string    { return s.opt.Region }
func (s *Service) AccountID() string { return s.opt.AccountID }

// CertificatePEM is the self-signed certificate notifications are signed
// with.
func (s *Service) CertificatePEM() []byte { return s.signer.certPEM }

// TopicARN returns the ARN of a topic name.
func (s *Service) TopicARN(name string) string {
	return "arn:aws:sns:" + s.opt.Region + ":" + s.opt.AccountID + ":" + name
}

// topic resolves a TopicArn parameter.
func (s *Service) topic(param, arn string) (*Topic, error) {
	if arn == "" {
		return nil, InvalidParameter(param, "")
	}
	if n := len(strings.Split(arn, ":")); n < 6 {
		return nil, InvalidParameter(param, fmt.Sprintf("An ARN must have at least 6 elements, not %d", n))
	}
	t, ok := s.store.getTopic(arn)
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
	case "Policy", "DeliveryPolicy":
		if value != "" && !json.Valid([]byte(value)) {
			return InvalidParameter("Attributes", name+": must be a JSON object")
		}
	}
	return nil
}

// CreateTopic creates a topic, or returns the existing topic of that name.
func (s *Service) CreateTopic(name string, attrs, tags map[string]string) (*Topic, error) {
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
	t := &Topic{Name: name, ARN: s.TopicARN(name), FIFO: fifo, Tags: copyMap(tags)}
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
	return s.store.createTopic(t)
}

// DeleteTopic deletes a topic and its subscriptions. Deleting a missing
// topic succeeds.
func (s *Service) DeleteTopic(arn string) error {
	if _, err := s.topic("TopicArn", arn); err != nil {
		if e, ok := err.(*Error); ok && e.Code == "NotFound" {
			return nil
		}
		return err
	}
	s.locks.Delete(arn)
	return s.store.deleteTopic(arn)
}

// ListTopics lists every topic, ordered by ARN.
func (s *Service) ListTopics() []*Topic { return s.store.listTopics() }

// GetTopicAttributes returns a topic's attributes.
func (s *Service) GetTopicAttributes(arn string) (map[string]string, error) {
	t, err := s.topic("TopicArn", arn)
	if err != nil {
		return nil, err
	}
	subs := s.store.listSubscriptions(arn)
	out := map[string]string{
		"TopicArn":                t.ARN,
		"Owner":                   s.opt.AccountID,
		"DisplayName":             "",
		"Policy":                  s.defaultPolicy(t.ARN),
		"SubscriptionsConfirmed":  strconv.Itoa(len(subs)),
		"SubscriptionsPending":    "0",
		"SubscriptionsDeleted":    "0",
		"EffectiveDeliveryPolicy": defaultDeliveryPolicy,
	}
	if t.FIFO {
		out["FifoTopic"] = "true"
		out["ContentBasedDeduplication"] = "false"
		out["FifoThroughputScope"] = "Topic"
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

func (s *Service) defaultPolicy(arn string) string {
	return `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"` +
		arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"` + s.opt.AccountID + `"}}}]}`
}

// SetTopicAttribute sets one topic attribute.
func (s *Service) SetTopicAttribute(arn, name, value string) error {
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

// checkSubAttrs validates subscription attributes after a change and
// normalises RawMessageDelivery.
func checkSubAttrs(attrs map[string]string) error {
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
				return InvalidParameter("Attributes", "RawMessageDelivery: Invalid value ["+v+"]. Must be true or false.")
			}
		case "RedrivePolicy", "DeliveryPolicy":
			if v != "" && !json.Valid([]byte(v)) {
				return InvalidParameter("Attributes", k+": must be a JSON object")
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

// Subscribe subscribes an SQS queue (Protocol sqs, Endpoint its ARN) to a
// topic. The subscription is confirmed at once. Subscribing the same
// endpoint again returns the existing subscription.
func (s *Service) Subscribe(topicARN, protocol, endpoint string, attrs map[string]string) (*Subscription, error) {
	t, err := s.topic("TopicArn", topicARN)
	if err != nil {
		return nil, err
	}
	if protocol == "" {
		return nil, InvalidParameter("Protocol", "")
	}
	if protocol != "sqs" {
		return nil, InvalidParameter("Protocol", "tidemq supports only the sqs protocol, not "+protocol)
	}
	a, ok := tidemq.ParseARN(endpoint)
	if !ok || a.Service != "sqs" || strings.Contains(a.Resource, ":") {
		return nil, InvalidParameter("SQS endpoint ARN", "")
	}
	if a.Account != s.opt.AccountID || a.Region != s.opt.Region {
		return nil, InvalidParameter("SQS endpoint ARN", "the queue must be in this tidemq's region and account")
	}
	if !t.FIFO && strings.HasSuffix(a.Resource, ".fifo") {
		return nil, InvalidParameter("Endpoint", "FIFO SQS Queues can not be subscribed to standard SNS topics")
	}
	attrs = copyMap(attrs)
	if err := checkSubAttrs(attrs); err != nil {
		return nil, err
	}
	for k, v := range attrs {
		if v == "" {
			delete(attrs, k)
		}
	}
	if len(attrs) == 0 {
		attrs = nil
	}
	sub, existed, err := s.store.subscribe(&Subscription{TopicARN: topicARN, Protocol: protocol, Endpoint: endpoint, Attributes: attrs})
	if err != nil {
		return nil, err
	}
	if existed && !sameMap(sub.Attributes, attrs) {
		return nil, InvalidParameter("Attributes", "Subscription already exists with different attributes")
	}
	return sub, nil
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
		return nil, InvalidParameter("SubscriptionArn", fmt.Sprintf("An ARN must have at least 6 elements, not %d", n))
	}
	sub, ok := s.store.getSubscription(arn)
	if !ok {
		return nil, NotFound("Subscription does not exist")
	}
	return sub, nil
}

// Unsubscribe deletes a subscription.
func (s *Service) Unsubscribe(arn string) error {
	if _, err := s.subscription(arn); err != nil {
		return err
	}
	return s.store.unsubscribe(arn)
}

// ListSubscriptions lists the subscriptions of a topic, or of every topic
// when topicARN is "".
func (s *Service) ListSubscriptions(topicARN string) ([]*Subscription, error) {
	if topicARN != "" {
		if _, err := s.topic("TopicArn", topicARN); err != nil {
			return nil, err
		}
	}
	return s.store.listSubscriptions(topicARN), nil
}

// GetSubscriptionAttributes returns a subscription's attributes.
func (s *Service) GetSubscriptionAttributes(arn string) (map[string]string, error) {
	sub, err := s.subscription(arn)
	if err != nil {
		return nil, err
	}
	out := map[string]string{
		"SubscriptionArn":              sub.ARN,
		"TopicArn":                     sub.TopicARN,
		"Owner":                        s.opt.AccountID,
		"Protocol":                     sub.Protocol,
		"Endpoint":                     sub.Endpoint,
		"PendingConfirmation":          "false",
		"ConfirmationWasAuthenticated": "true",
		"RawMessageDelivery":           "false",
		"SubscriptionPrincipal":        "arn:aws:iam::" + s.opt.AccountID + ":root",
		"EffectiveDeliveryPolicy":      defaultDeliveryPolicy,
	}
	for k, v := range sub.Attributes {
		out[k] = v
	}
	if _, ok := sub.Attributes["FilterPolicy"]; ok {
		if _, ok := sub.Attributes["FilterPolicyScope"]; !ok {
			out["FilterPolicyScope"] = ScopeMessageAttributes
		}
	}
	return out, nil
}

// SetSubscriptionAttribute sets (or, with "", clears) one subscription
// attribute.
func (s *Service) SetSubscriptionAttribute(arn, name, value string) error {
	if _, err := s.subscription(arn); err != nil {
		return err
	}
	if !settableSubAttrs[name] {
		return InvalidParameter("AttributeName", "Invalid attribute name: "+name)
	}
	return s.store.updateSubscription(arn, func(sub *Subscription) error {
		attrs := copyMap(sub.Attributes)
		if attrs == nil {
			attrs = map[string]string{}
		}
		attrs[name] = value
		if err := checkSubAttrs(attrs); err != nil {
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

// PublishInput is one message to publish.
type PublishInput struct {
	TopicARN               string
	Message                string
	Subject                string
	MessageStructure       string
	Attributes             map[string]Attribute
	MessageGroupID         string
	MessageDeduplicationID string
	// BaseURL is the scheme and host of SigningCertURL and UnsubscribeURL,
	// e.g. "http://localhost:9324".
	BaseURL string
	Client  tidemq.ClientInfo
}

// PublishResult is the outcome of a publish.
type PublishResult struct {
	MessageID      string
	SequenceNumber string // FIFO topics only
}

// MaxMessageSize is SNS's limit on a message and its attributes.
const MaxMessageSize = 262144

// checkPublish validates a publish against its topic and fills in the FIFO
// deduplication id. It returns the per-protocol messages of a
// MessageStructure=json publish.
func (s *Service) checkPublish(t *Topic, in *PublishInput) (map[string]string, error) {
	if in.Message == "" {
		return nil, InvalidParameter("Empty message", "")
	}
	if !utf8.ValidString(in.Message) {
		return nil, InvalidParameter("Message", "Message must be valid UTF-8")
	}
	size := len(in.Message)
	for name, a := range in.Attributes {
		if err := checkAttribute(name, a); err != nil {
			return nil, err
		}
		size += len(name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	if size > MaxMessageSize {
		return nil, InvalidParameter("Message too long", "")
	}
	if in.Subject != "" {
		if len(in.Subject) >= 100 || strings.ContainsAny(in.Subject, "\r\n") {
			return nil, InvalidParameter("Subject", "")
		}
	}
	var structured map[string]string
	switch in.MessageStructure {
	case "":
	case "json":
		var m map[string]any
		if err := json.Unmarshal([]byte(in.Message), &m); err != nil {
			return nil, InvalidParameter("Message Structure - JSON message body failed to parse", "")
		}
		def, ok := m["default"].(string)
		if !ok {
			return nil, InvalidParameter("Message Structure - No default entry in JSON message body", "")
		}
		structured = map[string]string{"default": def}
		if sq, ok := m["sqs"].(string); ok {
			structured["sqs"] = sq
		}
	default:
		return nil, InvalidParameter("MessageStructure", "")
	}
	if t.FIFO {
		if in.MessageGroupID == "" {
			return nil, InvalidParameter("The MessageGroupId parameter is required for FIFO topics", "")
		}
		if err := tidemq.ValidateFIFOToken("MessageGroupId", in.MessageGroupID); err != nil {
			return nil, InvalidParameter("MessageGroupId", "")
		}
		if in.MessageDeduplicationID == "" {
			if t.Attributes["ContentBasedDeduplication"] != "true" {
				return nil, InvalidParameter("The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly", "")
			}
			msg := in.Message
			if structured != nil {
				msg = structured["default"]
			}
			h := sha256.Sum256([]byte(msg))
			in.MessageDeduplicationID = hex.EncodeToString(h[:])
		} else if err := tidemq.ValidateFIFOToken("MessageDeduplicationId", in.MessageDeduplicationID); err != nil {
			return nil, InvalidParameter("MessageDeduplicationId", "")
		}
	} else if in.MessageGroupID != "" {
		if err := tidemq.ValidateFIFOToken("MessageGroupId", in.MessageGroupID); err != nil {
			return nil, InvalidParameter("MessageGroupId", "")
		}
	}
	return structured, nil
}

func checkAttribute(name string, a Attribute) error {
	bad := func(reason string) error {
		return InvalidParameter("MessageAttributes", "The message attribute '"+name+"' "+reason)
	}
	if name == "" || len(name) > 256 {
		return InvalidParameter("MessageAttributes", "message attribute name is invalid")
	}
	switch {
	case a.DataType == "":
		return bad("must contain non-empty message attribute type.")
	case strings.HasPrefix(a.DataType, "Binary"):
		if len(a.BinaryValue) == 0 {
			return bad("must contain non-empty message attribute value for message attribute type '" + a.DataType + "'.")
		}
	case strings.HasPrefix(a.DataType, "String.Array"):
		var arr []any
		if json.Unmarshal([]byte(a.StringValue), &arr) != nil {
			return bad("has an invalid message attribute value for type String.Array.")
		}
	case strings.HasPrefix(a.DataType, "Number"):
		if _, err := strconv.ParseFloat(a.StringValue, 64); err != nil {
			return bad("has an invalid message attribute value for type Number.")
		}
	case strings.HasPrefix(a.DataType, "String"):
		if a.StringValue == "" {
			return bad("must contain non-empty message attribute value for message attribute type 'String'.")
		}
	default:
		return bad("has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.")
	}
	return nil
}

// nextSequence returns a FIFO sequence number, increasing across the
// process and, as it starts from the clock, across restarts.
func (s *Service) nextSequence() string {
	for {
		old := s.seq.Load()
		n := max(old+1, uint64(time.Now().UnixNano()))
		if s.seq.CompareAndSwap(old, n) {
			return fmt.Sprintf("%020d", n)
		}
	}
}

func (s *Service) topicLock(arn string) *sync.Mutex {
	m, _ := s.locks.LoadOrStore(arn, &sync.Mutex{})
	return m.(*sync.Mutex)
}

// Publish publishes a message and delivers it to every subscription whose
// filter policy matches.
func (s *Service) Publish(ctx context.Context, in PublishInput) (*PublishResult, error) {
	t, err := s.topic("TopicArn", in.TopicARN)
	if err != nil {
		return nil, err
	}
	return s.publish(ctx, t, in)
}

// publish validates, numbers and fans out one message.
func (s *Service) publish(ctx context.Context, t *Topic, in PublishInput) (*PublishResult, error) {
	structured, err := s.checkPublish(t, &in)
	if err != nil {
		return nil, err
	}
	res := &PublishResult{MessageID: uuid.NewString()}
	if t.FIFO {
		// FIFO publishes are numbered and delivered in order.
		mu := s.topicLock(t.ARN)
		mu.Lock()
		defer mu.Unlock()
		res.SequenceNumber = s.nextSequence()
	}
	n := notification{
		messageID: res.MessageID, sequence: res.SequenceNumber, topic: t,
		subject: in.Subject, timestamp: s.opt.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		attrs: in.Attributes, baseURL: strings.TrimRight(in.BaseURL, "/"),
	}
	for _, sub := range s.store.listSubscriptions(t.ARN) {
		msg := in.Message
		if structured != nil {
			msg = structured["default"]
			if sq, ok := structured["sqs"]; ok {
				msg = sq
			}
		}
		if p := sub.Attributes["FilterPolicy"]; p != "" {
			fp, err := CompileFilterPolicy(p, sub.Attributes["FilterPolicyScope"])
			if err != nil || !fp.Match(msg, in.Attributes) {
				continue
			}
		}
		s.deliver(ctx, sub, &n, msg, in)
	}
	return res, nil
}

// PublishBatchEntry is one entry of PublishBatch.
type PublishBatchEntry struct {
	ID string
	PublishInput
}

// PublishBatchResult is the outcome of one entry: Err nil on success.
type PublishBatchResult struct {
	ID string
	PublishResult
	Err *Error
}

// PublishBatch publishes entries in order. Entry problems are reported per
// entry; the caller checks the batch itself (ids, count, total size).
func (s *Service) PublishBatch(ctx context.Context, topicARN string, entries []PublishBatchEntry) ([]PublishBatchResult, error) {
	t, err := s.topic("TopicArn", topicARN)
	if err != nil {
		return nil, err
	}
	out := make([]PublishBatchResult, len(entries))
	for i, e := range entries {
		e.TopicARN = topicARN
		out[i].ID = e.ID
		r, err := s.publish(ctx, t, e.PublishInput)
		if err != nil {
			out[i].Err = AsError(err)
			continue
		}
		out[i].PublishResult = *r
	}
	return out, nil
}

// notification is what every subscription of one publish shares.
type notification struct {
	messageID, sequence string
	topic               *Topic
	subject, timestamp  string
	attrs               map[string]Attribute
	baseURL             string
}

func (s *Service) deliver(ctx context.Context, sub *Subscription, n *notification, msg string, in PublishInput) {
	a, ok := tidemq.ParseARN(sub.Endpoint)
	if !ok {
		return
	}
	queue := a.Resource
	entry := tidemq.SendEntry{ID: "0", MessageGroupID: in.MessageGroupID}
	if strings.HasSuffix(queue, ".fifo") {
		entry.MessageDeduplicationID = in.MessageDeduplicationID
		if entry.MessageDeduplicationID == "" {
			h := sha256.Sum256([]byte(msg))
			entry.MessageDeduplicationID = hex.EncodeToString(h[:])
		}
	}
	if sub.Attributes["RawMessageDelivery"] == "true" {
		entry.Body = msg
		if len(n.attrs) > 0 {
			entry.Attributes = make(map[string]tidemq.MessageAttributeValue, len(n.attrs))
			for name, v := range n.attrs {
				entry.Attributes[name] = tidemq.MessageAttributeValue{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
			}
		}
	} else {
		body, err := s.envelope(n, sub, msg)
		if err != nil {
			s.log.Error("sns: build envelope", "subscription", sub.ARN, "err", err)
			return
		}
		entry.Body = body
	}
	res, err := s.opt.Broker.SendMessages(ctx, tidemq.SendMessagesParams{Queue: queue, Entries: []tidemq.SendEntry{entry}, Client: in.Client})
	if err == nil && len(res) == 1 && res[0].Err != nil {
		err = res[0].Err
	}
	if err != nil {
		s.log.Warn("sns: delivery failed; message dropped for this subscription",
			"topic", n.topic.ARN, "subscription", sub.ARN, "queue", queue, "message_id", n.messageID, "err", err)
	}
}

// envelope builds the JSON notification in AWS's field order.
func (s *Service) envelope(n *notification, sub *Subscription, msg string) (string, error) {
	var b bytes.Buffer
	first := true
	field := func(k string, v any) {
		if !first {
			b.WriteString(",\n")
		}
		first = false
		b.WriteString("  ")
		writeJSON(&b, k)
		b.WriteString(" : ")
		writeJSON(&b, v)
	}
	b.WriteString("{\n")
	field("Type", "Notification")
	field("MessageId", n.messageID)
	if n.topic.FIFO {
		field("SequenceNumber", n.sequence)
	}
	field("TopicArn", n.topic.ARN)
	if n.subject != "" {
		field("Subject", n.subject)
	}
	field("Message", msg)
	field("Timestamp", n.timestamp)
	if !n.topic.FIFO {
		version := n.topic.Attributes["SignatureVersion"]
		if version == "" {
			version = "1"
		}
		sig, err := s.signer.sign(version, stringToSign(msg, n.messageID, n.subject, n.timestamp, n.topic.ARN, "Notification"))
		if err != nil {
			return "", err
		}
		field("SignatureVersion", version)
		field("Signature", sig)
		field("SigningCertURL", n.baseURL+CertPath)
	}
	field("UnsubscribeURL", n.baseURL+"/?Action=Unsubscribe&SubscriptionArn="+url.QueryEscape(sub.ARN))
	if len(n.attrs) > 0 {
		names := make([]string, 0, len(n.attrs))
		for name := range n.attrs {
			names = append(names, name)
		}
		sort.Strings(names)
		type attr struct {
			Type  string
			Value string
		}
		m := make(map[string]attr, len(names))
		for _, name := range names {
			a := n.attrs[name]
			m[name] = attr{Type: a.DataType, Value: a.envelopeValue()}
		}
		field("MessageAttributes", m)
	}
	b.WriteString("\n}")
	return b.String(), nil
}

// writeJSON writes v as JSON without HTML escaping (as SNS does).
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode's newline
}
