package dlq

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Message is a message as the toolkit sees it: peeked (no receipt handle)
// or received.
type Message struct {
	MessageID     string
	ReceiptHandle string // "" when peeked
	Body          string
	// Attributes are the system attributes (SentTimestamp,
	// ApproximateReceiveCount, DeadLetterQueueSourceArn, MessageGroupId...).
	Attributes map[string]string
	// MessageAttributes are the sender's typed attributes.
	MessageAttributes map[string]types.MessageAttributeValue
	// History is tidemq's record of what happened to the message; empty on
	// AWS.
	History []HistoryEvent
	// DelayedUntil is when a delayed message becomes receivable, and
	// InvisibleUntil when an in-flight one's visibility timeout ends
	// (tidemq's peek only; zero otherwise).
	DelayedUntil, InvisibleUntil time.Time
}

// Delay is the delay a message still delayed was sent with (0 for one
// that is not delayed).
func (m *Message) Delay() time.Duration {
	if m.DelayedUntil.IsZero() || m.Sent().IsZero() {
		return 0
	}
	return m.DelayedUntil.Sub(m.Sent()).Round(time.Second)
}

// HistoryEvent is one entry of a message's history (tidemq only).
type HistoryEvent struct {
	Time   int64      `json:"Time"` // epoch ms
	Kind   string     `json:"Kind"`
	Queue  string     `json:"Queue,omitempty"`
	Client *Requester `json:"Client,omitempty"`
	Detail string     `json:"Detail,omitempty"`
}

// Requester is who made a request, in a history event.
type Requester struct {
	Addr      string `json:"Addr,omitempty"`
	UserAgent string `json:"UserAgent,omitempty"`
	AccessKey string `json:"AccessKey,omitempty"`
}

func (m *Message) intAttr(name string) int {
	n, _ := strconv.Atoi(m.Attributes[name])
	return n
}

// ReceiveCount is ApproximateReceiveCount.
func (m *Message) ReceiveCount() int { return m.intAttr("ApproximateReceiveCount") }

// Sent is SentTimestamp.
func (m *Message) Sent() time.Time {
	ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// GroupID is MessageGroupId ("" on standard queues).
func (m *Message) GroupID() string { return m.Attributes["MessageGroupId"] }

// SourceARN is DeadLetterQueueSourceArn.
func (m *Message) SourceARN() string { return m.Attributes["DeadLetterQueueSourceArn"] }

// extAttribute is a message attribute in an extension answer.
type extAttribute struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
}

type extMessage struct {
	MessageID         string                  `json:"MessageId"`
	Body              string                  `json:"Body"`
	Attributes        map[string]string       `json:"Attributes"`
	MessageAttributes map[string]extAttribute `json:"MessageAttributes"`
	History           []HistoryEvent          `json:"History"`
	DelayedUntil      int64                   `json:"DelayedUntil"`
	InvisibleUntil    int64                   `json:"InvisibleUntil"`
}

func toSDKAttributes(m map[string]extAttribute) map[string]types.MessageAttributeValue {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(m))
	for k, v := range m {
		a := types.MessageAttributeValue{DataType: aws.String(v.DataType)}
		if v.BinaryValue != nil {
			a.BinaryValue = v.BinaryValue
		} else {
			a.StringValue = aws.String(v.StringValue)
		}
		out[k] = a
	}
	return out
}

// peekTidemq peeks through the tidemq extension: nothing about the messages
// changes.
func (c *Client) peekTidemq(ctx context.Context, q *queueRef, max int, inflight bool) ([]*Message, error) {
	var out struct {
		Messages []extMessage `json:"Messages"`
	}
	// Delayed messages are in the queue (a consumer's backoff): always
	// shown, with when they become receivable.
	in := map[string]any{"QueueUrl": q.URL, "MaxNumberOfMessages": max, "IncludeInflight": inflight, "IncludeDelayed": true}
	if err := c.ext(ctx, "PeekMessages", in, &out); err != nil {
		return nil, err
	}
	msgs := make([]*Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msg := &Message{MessageID: m.MessageID, Body: m.Body, Attributes: m.Attributes,
			MessageAttributes: toSDKAttributes(m.MessageAttributes), History: m.History}
		if m.DelayedUntil > 0 {
			msg.DelayedUntil = time.UnixMilli(m.DelayedUntil)
		}
		if m.InvisibleUntil > 0 {
			msg.InvisibleUntil = time.UnixMilli(m.InvisibleUntil)
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// receiveBatch receives up to 10 messages with every attribute.
func (c *Client) receiveBatch(ctx context.Context, q *queueRef, max int32, visibility, wait int32) ([]*Message, error) {
	out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(q.URL),
		MaxNumberOfMessages:         max,
		VisibilityTimeout:           visibility,
		WaitTimeSeconds:             wait,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, err
	}
	msgs := make([]*Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, &Message{MessageID: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: m.MessageAttributes})
	}
	return msgs, nil
}

// inspect returns up to max messages of q without consuming them. On tidemq
// it peeks. On AWS it has to receive them (their receive counts go up) with
// a visibility timeout that keeps them from being seen twice, and makes them
// visible again at the end.
func (c *Client) inspect(ctx context.Context, q *queueRef, max int, inflight bool, visibility int32) ([]*Message, error) {
	tide, err := c.IsTidemq(ctx)
	if err != nil {
		return nil, err
	}
	if tide {
		return c.peekTidemq(ctx, q, max, inflight)
	}
	var msgs []*Message
	seen := make(map[string]*Message)
	defer func() { c.release(context.WithoutCancel(ctx), q, msgs) }()
	for empty := 0; len(msgs) < max && empty < c.emptyPolls(); {
		n := int32(min(10, max-len(msgs)))
		wait := int32(0)
		if empty > 0 {
			wait = c.PollWait
		}
		got, err := c.receiveBatch(ctx, q, n, visibility, wait)
		if err != nil {
			return msgs, err
		}
		fresh := 0
		for _, m := range got {
			if old := seen[m.MessageID]; old != nil {
				old.ReceiptHandle = m.ReceiptHandle // only the newest handle is sure to work
				continue
			}
			seen[m.MessageID] = m
			msgs = append(msgs, m)
			fresh++
		}
		if fresh == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return msgs, nil
}

func (c *Client) emptyPolls() int {
	if c.EmptyPolls > 0 {
		return c.EmptyPolls
	}
	return 3
}

// release makes received messages visible again at once.
func (c *Client) release(ctx context.Context, q *queueRef, msgs []*Message) {
	for batch := range slices.Chunk(msgs, 10) {
		var entries []types.ChangeMessageVisibilityBatchRequestEntry
		for i, m := range batch {
			if m.ReceiptHandle == "" {
				continue
			}
			entries = append(entries, types.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: 0})
		}
		if len(entries) == 0 {
			continue
		}
		out, err := c.SQS.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		if err != nil {
			c.warnf("could not make %d messages visible again (they will be when their visibility timeout ends): %v", len(entries), err)
			continue
		}
		for _, f := range out.Failed {
			c.warnf("could not make a message visible again: %s %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
}

// attrString renders a message attribute's value.
func attrString(v types.MessageAttributeValue) string {
	if v.BinaryValue != nil {
		return fmt.Sprintf("<%d bytes>", len(v.BinaryValue))
	}
	return aws.ToString(v.StringValue)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
