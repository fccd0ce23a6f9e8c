package sqs

import (
	"strconv"
	"strings"

	"github.com/tidemq/tidemq"
)

// ReceiveMessage: the choice of which attributes each received message
// shows. (The broker checks the request's bounds.)

// Message system attribute names (the MessageSystemAttributeName enum).
const (
	sysAll                              = "All"
	sysSenderID                         = "SenderId"
	sysSentTimestamp                    = "SentTimestamp"
	sysApproximateReceiveCount          = "ApproximateReceiveCount"
	sysApproximateFirstReceiveTimestamp = "ApproximateFirstReceiveTimestamp"
	sysSequenceNumber                   = "SequenceNumber"
	sysMessageDeduplicationID           = "MessageDeduplicationId"
	sysMessageGroupID                   = "MessageGroupId"
	sysAWSTraceHeader                   = "AWSTraceHeader"
	sysDeadLetterQueueSourceArn         = "DeadLetterQueueSourceArn"
)

func (c *call) receiveMessage(in *receiveMessageInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	p := tidemq.ReceiveMessagesParams{
		Queue:                   name,
		MaxNumberOfMessages:     in.MaxNumberOfMessages,
		VisibilityTimeout:       in.VisibilityTimeout,
		WaitTimeSeconds:         in.WaitTimeSeconds,
		ReceiveRequestAttemptID: in.ReceiveRequestAttemptID,
		Client:                  c.client(),
	}
	msgs, err := c.broker().ReceiveMessages(c.r.Context(), p)
	if err != nil {
		return nil, err
	}
	sys := wantedNames(in.AttributeNames, in.MessageSystemAttributeNames)
	out := &receiveMessageOutput{}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		attrs := selectMessageAttributes(m.Attributes, in.MessageAttributeNames)
		wm := wireMessage{
			MessageID:              m.MessageID,
			ReceiptHandle:          m.ReceiptHandle,
			MD5OfBody:              tidemq.MD5OfBody(m.Body),
			Body:                   m.Body,
			Attributes:             systemAttributes(m, sys),
			MD5OfMessageAttributes: tidemq.MD5OfAttributes(attrs),
		}
		if len(attrs) > 0 {
			wm.MessageAttributes = wireAttributes(attrs)
		}
		out.Messages = append(out.Messages, wm)
	}
	return out, nil
}

// wireAttributes are message attributes as ReceiveMessage (and the
// PeekMessages extension) answer them: a binary value always present,
// empty rather than absent, a string value otherwise.
func wireAttributes(attrs map[string]tidemq.MessageAttributeValue) map[string]wireAttribute {
	out := make(map[string]wireAttribute, len(attrs))
	for n, v := range attrs {
		wa := wireAttribute{DataType: v.DataType}
		if v.IsBinary() {
			wa.BinaryValue = v.BinaryValue
			if wa.BinaryValue == nil {
				wa.BinaryValue = []byte{}
			}
		} else {
			wa.StringValue = v.StringValue
		}
		out[n] = wa
	}
	return out
}

// wantedNames merges the deprecated AttributeNames with
// MessageSystemAttributeNames.
func wantedNames(lists ...[]string) map[string]bool {
	want := make(map[string]bool)
	for _, l := range lists {
		for _, n := range l {
			want[n] = true
		}
	}
	return want
}

// systemAttributes returns the system attributes a receive asked for, among
// those that apply to the message. Timestamps are epoch milliseconds.
func systemAttributes(m *tidemq.Message, want map[string]bool) map[string]string {
	if len(want) == 0 {
		return nil
	}
	all := want[sysAll]
	out := make(map[string]string)
	put := func(name, value string) {
		if value != "" && (all || want[name]) {
			out[name] = value
		}
	}
	put(sysSenderID, m.SenderID)
	if !m.SentTimestamp.IsZero() {
		put(sysSentTimestamp, strconv.FormatInt(m.SentTimestamp.UnixMilli(), 10))
	}
	put(sysApproximateReceiveCount, strconv.Itoa(m.ApproximateReceiveCount))
	if !m.FirstReceiveTimestamp.IsZero() {
		put(sysApproximateFirstReceiveTimestamp, strconv.FormatInt(m.FirstReceiveTimestamp.UnixMilli(), 10))
	}
	put(sysSequenceNumber, m.SequenceNumber)
	put(sysMessageDeduplicationID, m.MessageDeduplicationID)
	put(sysMessageGroupID, m.MessageGroupID)
	if v, ok := m.SystemAttributes[sysAWSTraceHeader]; ok {
		put(sysAWSTraceHeader, v.StringValue)
	}
	put(sysDeadLetterQueueSourceArn, m.DeadLetterQueueSourceARN)
	if len(out) == 0 {
		return nil
	}
	return out
}

// selectMessageAttributes returns the message attributes a receive asked
// for: "All", "*" or ".*" for every one, "prefix.*" for those whose name
// starts with "prefix" (as on SQS: "Hel.*" selects Hello and Help.Me), and
// exact names.
func selectMessageAttributes(attrs map[string]tidemq.MessageAttributeValue, names []string) map[string]tidemq.MessageAttributeValue {
	if len(attrs) == 0 || len(names) == 0 {
		return nil
	}
	var prefixes []string
	exact := make(map[string]bool)
	for _, n := range names {
		if n == "All" || n == "*" || n == ".*" {
			return attrs
		}
		if p, ok := strings.CutSuffix(n, ".*"); ok {
			prefixes = append(prefixes, p)
			continue
		}
		exact[n] = true
	}
	out := make(map[string]tidemq.MessageAttributeValue)
	for name, v := range attrs {
		if exact[name] {
			out[name] = v
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				out[name] = v
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
