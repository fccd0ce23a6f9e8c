package sqs

import (
	"fmt"

	"github.com/tidemq/tidemq"
)

// The message actions. Single sends, deletes and visibility changes call the
// broker's batch-shaped methods with one entry and turn that entry's error
// into the response's error; the batch actions say they are batches. The
// broker judges the requests (entry Ids, sizes, required members).

// client identifies the caller to the broker (SenderId, dead-letter stories),
// within tidemq.NewClientInfo's bounds.
func (c *call) client() tidemq.ClientInfo {
	return tidemq.NewClientInfo(c.r.RemoteAddr, c.r.UserAgent(), c.accessKey)
}

// errBrokerResults is the internal error for a broker that answered a batch
// with the wrong number of results.
func errBrokerResults(want, got int) error {
	return fmt.Errorf("broker returned %d results for %d entries", got, want)
}

func toAttributes(m map[string]attributeValue) map[string]tidemq.MessageAttributeValue {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]tidemq.MessageAttributeValue, len(m))
	for name, v := range m {
		out[name] = tidemq.MessageAttributeValue{DataType: v.DataType, StringValue: string(v.StringValue), BinaryValue: v.BinaryValue}
	}
	return out
}

func toSendEntry(id string, f *messageFields) tidemq.SendEntry {
	return tidemq.SendEntry{
		ID:                     id,
		Body:                   string(f.MessageBody),
		DelaySeconds:           f.DelaySeconds,
		Attributes:             toAttributes(f.MessageAttributes),
		SystemAttributes:       toAttributes(f.MessageSystemAttributes),
		MessageGroupID:         strValue(f.MessageGroupID),
		MessageDeduplicationID: strValue(f.MessageDeduplicationID),
	}
}

func strValue(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkGivenIDs refuses a MessageGroupId or MessageDeduplicationId that is
// given but empty, as SQS does ("Value  for parameter MessageGroupId is
// invalid. Reason: MessageGroupId can only include alphanumeric and
// punctuation characters. 1 to 128 in length."). The broker sees "" as
// left out, so this is the transport's to tell; it fails the whole
// request, a batch included.
func checkGivenIDs(f *messageFields) error {
	if f.MessageGroupID != nil && *f.MessageGroupID == "" {
		return tidemq.ValidateFIFOToken("MessageGroupId", "")
	}
	if f.MessageDeduplicationID != nil && *f.MessageDeduplicationID == "" {
		return tidemq.ValidateFIFOToken("MessageDeduplicationId", "")
	}
	return nil
}

// sendResultFor builds the digests and ids of one sent message. The digests
// are taken over what the client sent, which is what SDKs check them
// against: sentSys are the system attributes in the request (not an
// AWSTraceHeader taken from the X-Amzn-Trace-Id header).
func sendResultFor(e *tidemq.SendEntry, r *tidemq.SendResult, sentSys map[string]attributeValue) sendResult {
	var sysDigest string
	if len(sentSys) > 0 {
		sysDigest = tidemq.MD5OfAttributes(e.SystemAttributes)
	}
	return sendResult{
		ID:                           e.ID,
		MessageID:                    r.MessageID,
		MD5OfMessageBody:             tidemq.MD5OfBody(e.Body),
		MD5OfMessageAttributes:       tidemq.MD5OfAttributes(e.Attributes),
		MD5OfMessageSystemAttributes: sysDigest,
		SequenceNumber:               r.SequenceNumber,
	}
}

// traceHeader is the HTTP header whose value SQS stores as a message's
// AWSTraceHeader system attribute when the request sets none.
const traceHeader = "X-Amzn-Trace-Id"

// withTraceHeader adds the request's X-Amzn-Trace-Id header to e as its
// AWSTraceHeader, unless e has one. The broker checks it like one the
// client set (AWS refuses a malformed header, e.g. Root=dummy).
func (c *call) withTraceHeader(e *tidemq.SendEntry) {
	h := c.r.Header.Get(traceHeader)
	if h == "" {
		return
	}
	if _, ok := e.SystemAttributes[sysAWSTraceHeader]; ok {
		return
	}
	sys := make(map[string]tidemq.MessageAttributeValue, len(e.SystemAttributes)+1)
	for k, v := range e.SystemAttributes {
		sys[k] = v
	}
	sys[sysAWSTraceHeader] = tidemq.MessageAttributeValue{DataType: "String", StringValue: h}
	e.SystemAttributes = sys
}

// batchErrorFor turns one entry's error into a BatchResultErrorEntry, with
// the legacy (Query) code as AWS reports it in both protocols.
func (c *call) batchErrorFor(id string, err error) batchError {
	e := tidemq.AsError(err)
	if e.Code == tidemq.ErrInternalFailure && !tidemq.HasCode(err, tidemq.ErrInternalFailure) {
		c.h.log.Error("sqs: internal error in a batch entry", "action", c.action, "request_id", c.requestID, "id", id, "err", err)
	}
	return batchError{ID: id, SenderFault: e.Code.Fault == tidemq.Sender, Code: e.Code.Code, Message: e.Message}
}

func (c *call) sendMessage(in *sendMessageInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	if err := checkGivenIDs(&in.messageFields); err != nil {
		return nil, err
	}
	entry := toSendEntry("", &in.messageFields)
	c.withTraceHeader(&entry)
	res, err := c.broker().SendMessages(c.r.Context(), tidemq.SendMessagesParams{
		Queue: name, Entries: []tidemq.SendEntry{entry}, Client: c.client(),
	})
	if err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, errBrokerResults(1, len(res))
	}
	if res[0].Err != nil {
		return nil, res[0].Err
	}
	out := sendResultFor(&entry, &res[0], in.MessageSystemAttributes)
	return &out, nil
}

func (c *call) sendMessageBatch(in *sendMessageBatchInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	entries := make([]tidemq.SendEntry, len(in.Entries))
	for i := range in.Entries {
		if err := checkGivenIDs(&in.Entries[i].messageFields); err != nil {
			return nil, err
		}
		entries[i] = toSendEntry(in.Entries[i].ID, &in.Entries[i].messageFields)
		c.withTraceHeader(&entries[i])
	}
	res, err := c.broker().SendMessages(c.r.Context(), tidemq.SendMessagesParams{
		Queue: name, Entries: entries, Batch: true, Client: c.client(),
	})
	if err != nil {
		return nil, err
	}
	if len(res) != len(entries) {
		return nil, errBrokerResults(len(entries), len(res))
	}
	out := &sendMessageBatchOutput{}
	for i := range res {
		if res[i].Err != nil {
			out.Failed = append(out.Failed, c.batchErrorFor(entries[i].ID, res[i].Err))
			continue
		}
		out.Successful = append(out.Successful, sendResultFor(&entries[i], &res[i], in.Entries[i].MessageSystemAttributes))
	}
	return out, nil
}

func (c *call) deleteMessage(in *deleteMessageInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	errs, err := c.broker().DeleteMessages(c.r.Context(), tidemq.DeleteMessagesParams{
		Queue: name, Entries: []tidemq.DeleteEntry{{ReceiptHandle: in.ReceiptHandle}},
	})
	if err != nil {
		return nil, err
	}
	if len(errs) != 1 {
		return nil, errBrokerResults(1, len(errs))
	}
	return nil, errs[0]
}

func (c *call) deleteMessageBatch(in *deleteMessageBatchInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	entries := make([]tidemq.DeleteEntry, len(in.Entries))
	for i, e := range in.Entries {
		entries[i] = tidemq.DeleteEntry{ID: e.ID, ReceiptHandle: e.ReceiptHandle}
	}
	errs, err := c.broker().DeleteMessages(c.r.Context(), tidemq.DeleteMessagesParams{Queue: name, Entries: entries, Batch: true})
	if err != nil {
		return nil, err
	}
	return c.batchIDResults("DeleteMessageBatchResultEntry", len(entries), func(i int) string { return entries[i].ID }, errs)
}

func (c *call) changeVisibility(in *changeVisibilityInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	errs, err := c.broker().ChangeMessageVisibility(c.r.Context(), tidemq.ChangeVisibilityParams{
		Queue: name, Entries: []tidemq.ChangeVisibilityEntry{{ReceiptHandle: in.ReceiptHandle, VisibilityTimeout: in.VisibilityTimeout}},
	})
	if err != nil {
		return nil, err
	}
	if len(errs) != 1 {
		return nil, errBrokerResults(1, len(errs))
	}
	return nil, errs[0]
}

func (c *call) changeVisibilityBatch(in *changeVisibilityBatchInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	entries := make([]tidemq.ChangeVisibilityEntry, len(in.Entries))
	for i, e := range in.Entries {
		entries[i] = tidemq.ChangeVisibilityEntry{ID: e.ID, ReceiptHandle: e.ReceiptHandle, VisibilityTimeout: e.VisibilityTimeout}
	}
	errs, err := c.broker().ChangeMessageVisibility(c.r.Context(), tidemq.ChangeVisibilityParams{Queue: name, Entries: entries, Batch: true})
	if err != nil {
		return nil, err
	}
	return c.batchIDResults("ChangeMessageVisibilityBatchResultEntry", len(entries), func(i int) string { return entries[i].ID }, errs)
}

// batchIDResults splits the per-entry errors of n entries, id(i) being the
// Id of entry i, into Successful and Failed.
func (c *call) batchIDResults(entry string, n int, id func(i int) string, errs []error) (output, error) {
	if len(errs) != n {
		return nil, errBrokerResults(n, len(errs))
	}
	out := &batchIDOutput{entry: entry}
	for i, err := range errs {
		if err != nil {
			out.Failed = append(out.Failed, c.batchErrorFor(id(i), err))
			continue
		}
		out.Successful = append(out.Successful, batchIDEntry{ID: id(i)})
	}
	return out, nil
}
