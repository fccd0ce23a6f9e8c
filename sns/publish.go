package sns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tidemq/tidemq"
)

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
func (s *Service) checkPublish(t *Topic, in *PublishParams) (map[string]string, error) {
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
	if in.Subject != "" || in.SubjectSet {
		if in.Subject == "" || len(in.Subject) >= 100 || strings.ContainsAny(in.Subject, "\r\n") {
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
		for _, proto := range []string{"sqs", "http", "https"} {
			if v, ok := m[proto].(string); ok {
				structured[proto] = v
			}
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
	invalid := func(msg string) error {
		return &tidemq.Error{Code: tidemq.ErrSNSParameterValueInvalid, Message: msg}
	}
	bad := func(reason string) error { return invalid("The message attribute '" + name + "' " + reason) }
	if problem := attributeNameProblem(name); problem != "" {
		return invalid(problem)
	}
	switch {
	case a.DataType == "":
		return bad("must contain non-empty message attribute type.")
	case strings.HasPrefix(a.DataType, "Binary"):
		if a.StringValue != "" {
			return bad("with type 'Binary' must use field 'Binary'.")
		}
		if len(a.BinaryValue) == 0 {
			return bad("must contain non-empty message attribute value for message attribute type 'Binary'.")
		}
	case strings.HasPrefix(a.DataType, "String") || strings.HasPrefix(a.DataType, "Number"):
		typ := "String"
		if strings.HasPrefix(a.DataType, "Number") {
			typ = "Number"
		}
		if len(a.BinaryValue) > 0 {
			return bad("with type '" + typ + "' must use field 'String'.")
		}
		if a.StringValue == "" {
			return bad("must contain non-empty message attribute value for message attribute type '" + typ + "'.")
		}
		switch {
		case strings.HasPrefix(a.DataType, "String.Array"):
			var arr []any
			if json.Unmarshal([]byte(a.StringValue), &arr) != nil {
				return bad("has an invalid message attribute value for type String.Array.")
			}
		case typ == "Number":
			if _, err := strconv.ParseFloat(a.StringValue, 64); err != nil {
				return bad("has an invalid message attribute value for type Number.")
			}
		}
	default:
		return bad("has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.")
	}
	return nil
}

// attributeNameProblem checks a message attribute name as AWS does: under
// 256 bytes, of letters, digits, '-', '_' and '.', not beginning or ending
// with '.' nor holding two in a row. It returns AWS's wording of the
// problem, or "".
func attributeNameProblem(name string) string {
	if name == "" {
		return "The message attribute name must not be empty."
	}
	if len(name) >= 256 {
		return "Length of message attribute name must be less than 256 bytes."
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return fmt.Sprintf("Invalid non-alphanumeric character '#x%X' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.", r)
		}
	}
	switch {
	case strings.HasPrefix(name, "."):
		return "Invalid message attribute name starting with character '.' was found."
	case strings.HasSuffix(name, "."):
		return "Invalid message attribute name ending with character '.' was found."
	case strings.Contains(name, ".."):
		return "Message attribute name can not have successive '.' character."
	}
	return ""
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

// Publish publishes a message to every confirmed subscription whose filter
// policy matches. It answers once the publish is durably recorded in the
// outbox and every SQS delivery has been made (or, on a standard topic,
// handed to a background retry; a FIFO topic retries before answering, to
// keep its order);
// HTTP/HTTPS deliveries run in the background. A FIFO topic answers a
// duplicate (same deduplication id within DedupWindow) with the original
// MessageId and SequenceNumber and delivers nothing.
func (s *Service) Publish(ctx context.Context, in PublishParams) (*PublishResult, error) {
	t, err := s.topic("TopicArn", in.TopicARN)
	if err != nil {
		return nil, err
	}
	res, errs, err := s.publish(ctx, t, []PublishParams{in})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return &res[0], nil
}

// PublishBatchEntry is one entry of PublishBatch.
type PublishBatchEntry struct {
	ID string
	PublishParams
}

// PublishBatchResult is the outcome of one entry: Err nil on success.
type PublishBatchResult struct {
	ID string
	PublishResult
	Err *tidemq.Error
}

// PublishBatch publishes entries in order, recording them in the outbox in
// one batch. An entry that is not valid fails the whole request, as on AWS;
// the caller checks the batch itself (ids, count, total size).
func (s *Service) PublishBatch(ctx context.Context, p PublishBatchParams) ([]PublishBatchResult, error) {
	topicARN, entries := p.TopicARN, p.Entries
	t, err := s.topic("TopicArn", topicARN)
	if err != nil {
		return nil, err
	}
	ins := make([]PublishParams, len(entries))
	for i, e := range entries {
		ins[i] = e.PublishParams
		ins[i].TopicARN = topicARN
		// AWS rejects the whole request for an entry that is not valid
		// (its MessageGroupId, Subject, attributes...), not that entry.
		check := ins[i]
		if _, err := s.checkPublish(t, &check); err != nil {
			return nil, err
		}
	}
	res, errs, err := s.publish(ctx, t, ins)
	if err != nil {
		return nil, err
	}
	out := make([]PublishBatchResult, len(entries))
	for i, e := range entries {
		out[i].ID = e.ID
		if errs[i] != nil {
			out[i].Err = AsError(errs[i])
			continue
		}
		out[i].PublishResult = res[i]
	}
	return out, nil
}

// publish validates, deduplicates and numbers messages, records them in
// the outbox (one synced batch) and delivers them in order.
func (s *Service) publish(_ context.Context, t *Topic, ins []PublishParams) ([]PublishResult, []error, error) {
	leave, err := s.enter()
	if err != nil {
		return nil, nil, err
	}
	defer leave()
	if t.FIFO {
		// FIFO publishes are deduplicated, numbered and delivered in order,
		// across the nodes (fifo.go).
		unlock, err := s.lockFIFO(t.ARN)
		if err == nil {
			defer unlock()
			err = s.raiseSequence(t.ARN)
		}
		if err != nil {
			s.log.Error("sns: take a FIFO topic's lock", "topic", t.ARN, "err", err)
			return nil, nil, NotDurable()
		}
	}
	now := s.opt.Now()
	nowMs := now.UnixMilli()
	var expired []dedupItem
	if t.FIFO {
		s.dedupMu.Lock()
		expired = s.dedup.expire(nowMs)
		s.dedupMu.Unlock()
	}
	subs := s.store.topicSubscriptions(t.ARN)
	results := make([]PublishResult, len(ins))
	errs := make([]error, len(ins))
	var recs []*record
	inBatch := map[string]int{} // dedup key -> entry
	for i := range ins {
		in := &ins[i]
		structured, err := s.checkPublish(t, in)
		if err != nil {
			errs[i] = err
			continue
		}
		var key string
		if t.FIFO {
			key = dedupKey(t, in.MessageGroupID, in.MessageDeduplicationID)
			e, dup, err := s.findDedup(key, nowMs)
			if err != nil {
				s.log.Error("sns: look a deduplication id up", "topic", t.ARN, "err", err)
				return nil, nil, NotDurable()
			}
			if dup {
				results[i] = PublishResult{MessageID: e.MessageID, SequenceNumber: e.Sequence}
				s.stats.duplicates.Add(1)
				continue
			}
			if j, dup := inBatch[key]; dup {
				results[i] = results[j]
				s.stats.duplicates.Add(1)
				continue
			}
			inBatch[key] = i
		}
		id, err := s.newRecordID()
		if err != nil {
			s.log.Error("sns: number a publish", "topic", t.ARN, "err", err)
			return nil, nil, NotDurable()
		}
		r := &record{
			ID: id, Node: s.opt.NodeID, TopicARN: t.ARN, FIFO: t.FIFO, SignatureVersion: t.Attributes["SignatureVersion"],
			MessageID: uuid.NewString(), Timestamp: now.UTC().Format("2006-01-02T15:04:05.000Z"),
			Subject: in.Subject, Message: in.Message, Structured: structured, Attributes: in.Attributes,
			GroupID: in.MessageGroupID, DedupID: in.MessageDeduplicationID,
			BaseURL: strings.TrimRight(in.BaseURL, "/"), Client: in.Client,
		}
		if in.TraceHeader != "" && tidemq.ValidateTraceHeader(in.TraceHeader) == nil {
			r.TraceHeader = in.TraceHeader
		}
		if r.BaseURL == "" {
			r.BaseURL = strings.TrimRight(s.opt.PublicURL, "/")
		}
		if t.FIFO {
			r.Sequence = s.nextSequence()
			r.dedupKey, r.dedupExpires = key, now.Add(DedupWindow).UnixMilli()
		}
		for _, sub := range subs {
			if sub.Pending {
				continue
			}
			if p := sub.Attributes["FilterPolicy"]; p != "" {
				fp, err := s.filters.compile(p, sub.Attributes["FilterPolicyScope"])
				if err != nil || !fp.Match(r.message(sub.Protocol), in.Attributes) {
					continue
				}
			}
			r.deliveries = append(r.deliveries, &delivery{rec: r, index: uint32(len(r.deliveries)), sub: sub.ARN})
		}
		r.remaining.Store(int32(len(r.deliveries)))
		recs = append(recs, r)
		results[i] = PublishResult{MessageID: r.MessageID, SequenceNumber: r.Sequence}
	}
	if t.FIFO {
		// In order: recorded with its dedup entries, then delivered.
		if err := s.commitRecords(recs, expired); err != nil {
			s.log.Error("sns: record a publish in the outbox", "topic", t.ARN, "err", err)
			return nil, nil, NotDurable()
		}
		s.dedupMu.Lock()
		for _, r := range recs {
			s.dedup.add(r.dedupEntry())
		}
		s.dedupMu.Unlock()
		for _, r := range recs {
			s.deliverRecord(r, true)
		}
		return results, errs, nil
	}
	// A standard topic's publish whose one delivery goes to an SQS queue
	// is delivered at once, without the outbox: once the queue has it
	// durably there is no fan-out left to lose, and a crash before that
	// loses only a publish that was not acknowledged. Only if that attempt
	// fails is the publish recorded, before it is answered, so that its
	// retries and dead-lettering survive a crash. So is a fan-out whose
	// deliveries all go to SQS queues, when the broker can put them in
	// their queues in one write, all or nothing (together.go): there is no
	// half-way fan-out to finish; if the broker refuses any of them, the
	// publish takes the recorded path. Any other publish is recorded
	// first, so that a crash can only repeat its deliveries.
	var recorded, direct, together []*record
	for _, r := range recs {
		switch {
		case len(r.deliveries) == 1 && protocolOf(subs, r.deliveries[0].sub) == "sqs":
			direct = append(direct, r)
		case len(r.deliveries) > 1 && allSQS(subs, r) && !s.noTogether.Load():
			together = append(together, r)
		default:
			recorded = append(recorded, r)
		}
	}
	if len(direct) > 1 && !s.noTogether.Load() {
		// A PublishBatch's single deliveries: one write too, rather than
		// one after the other.
		together, direct = append(together, direct...), nil
	}
	if len(together) > 0 && !s.deliverTogether(together) {
		recorded = append(recorded, together...)
	}
	s.presign(recorded, subs) // signed while the record is made durable
	if err := s.commitRecords(recorded, nil); err != nil {
		s.log.Error("sns: record a publish in the outbox", "topic", t.ARN, "err", err)
		return nil, nil, NotDurable()
	}
	var directErr error
	for _, r := range direct {
		if directErr = s.deliverDirect(r); directErr != nil {
			break
		}
	}
	// The recorded publishes are delivered whatever became of the direct
	// ones: they are in the outbox under this node, which no other node
	// redelivers while this one lives.
	for _, r := range recorded {
		s.deliverRecord(r, true)
	}
	if directErr != nil {
		s.log.Error("sns: record a publish in the outbox", "topic", t.ARN, "err", directErr)
		return nil, nil, NotDurable()
	}
	return results, errs, nil
}

// protocolOf returns the protocol of the subscription arn among subs.
func protocolOf(subs []*Subscription, arn string) string {
	for _, sub := range subs {
		if sub.ARN == arn {
			return sub.Protocol
		}
	}
	return ""
}

// newRecordID numbers outbox records in publish order: from
// Options.RecordIDs when the store is shared, else in this process.
func (s *Service) newRecordID() (uint64, error) {
	if s.opt.RecordIDs != nil {
		return s.opt.RecordIDs()
	}
	s.recordMu.Lock()
	defer s.recordMu.Unlock()
	s.nextRecord++
	return s.nextRecord, nil
}
