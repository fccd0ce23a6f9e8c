package sqs

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
)

// output is an action's result. The JSON protocol marshals it with
// encoding/json (the json tags are the AWS member names); the Query protocol
// asks it to write the members of its <XResult> element. A nil output is an
// action without output: {} in JSON, no Result element in XML.
type output interface {
	writeXML(x *xmlWriter)
}

// writeOutput answers a successful request in its protocol.
func (c *call) writeOutput(w http.ResponseWriter, out output) int {
	if c.proto == protoJSON {
		return c.writeJSONOutput(w, out)
	}
	if c.queryJSON {
		return c.writeQueryJSONOutput(w, out)
	}
	return c.writeXMLOutput(w, out)
}

// writeXMLMap writes a map as flattened entries, sorted by key:
// <entry><key>k</key><value>v</value></entry>...
func writeXMLMap(x *xmlWriter, m map[string]string, entry, key, value string) {
	for _, k := range sortedKeys(m) {
		x.open(entry)
		x.elem(key, k)
		x.elem(value, m[k])
		x.close(entry)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// queueURLOutput is the output of CreateQueue and GetQueueUrl.
type queueURLOutput struct {
	QueueURL string `json:"QueueUrl"`
}

func (o *queueURLOutput) writeXML(x *xmlWriter) { x.elem("QueueUrl", o.QueueURL) }

type listQueuesOutput struct {
	QueueURLs []string `json:"QueueUrls,omitempty"`
	NextToken string   `json:"NextToken,omitempty"`
}

func (o *listQueuesOutput) writeXML(x *xmlWriter) {
	for _, u := range o.QueueURLs {
		x.elem("QueueUrl", u)
	}
	x.optional("NextToken", o.NextToken)
}

// listDeadLetterSourceQueuesOutput differs from listQueuesOutput only in the
// JSON member name, which is lower-case in the model.
type listDeadLetterSourceQueuesOutput struct {
	QueueURLs []string `json:"queueUrls"`
	NextToken string   `json:"NextToken,omitempty"`
}

func (o *listDeadLetterSourceQueuesOutput) writeXML(x *xmlWriter) {
	for _, u := range o.QueueURLs {
		x.elem("QueueUrl", u)
	}
	x.optional("NextToken", o.NextToken)
}

type getQueueAttributesOutput struct {
	Attributes map[string]string `json:"Attributes,omitempty"`
}

func (o *getQueueAttributesOutput) writeXML(x *xmlWriter) {
	writeXMLMap(x, o.Attributes, "Attribute", "Name", "Value")
}

type listQueueTagsOutput struct {
	Tags map[string]string `json:"Tags,omitempty"`
}

func (o *listQueueTagsOutput) writeXML(x *xmlWriter) { writeXMLMap(x, o.Tags, "Tag", "Key", "Value") }

// sendResult is SendMessage's output and a SendMessageBatch success entry
// (which adds the Id).
type sendResult struct {
	ID                           string `json:"Id,omitempty"`
	MessageID                    string `json:"MessageId,omitempty"`
	MD5OfMessageBody             string `json:"MD5OfMessageBody,omitempty"`
	MD5OfMessageAttributes       string `json:"MD5OfMessageAttributes,omitempty"`
	MD5OfMessageSystemAttributes string `json:"MD5OfMessageSystemAttributes,omitempty"`
	SequenceNumber               string `json:"SequenceNumber,omitempty"`
}

// writeXML writes the members in the order SQS does: SendMessageResult has
// the digests first, a batch result entry its Id and MessageId first.
func (o *sendResult) writeXML(x *xmlWriter) {
	if o.ID != "" {
		x.elem("Id", o.ID)
		x.elem("MessageId", o.MessageID)
	}
	x.optional("MD5OfMessageBody", o.MD5OfMessageBody)
	x.optional("MD5OfMessageAttributes", o.MD5OfMessageAttributes)
	x.optional("MD5OfMessageSystemAttributes", o.MD5OfMessageSystemAttributes)
	if o.ID == "" {
		x.elem("MessageId", o.MessageID)
	}
	x.optional("SequenceNumber", o.SequenceNumber)
}

// batchError is a BatchResultErrorEntry.
type batchError struct {
	ID          string `json:"Id"`
	SenderFault bool   `json:"SenderFault"`
	Code        string `json:"Code"`
	Message     string `json:"Message,omitempty"`
}

func (e *batchError) writeXML(x *xmlWriter) {
	x.elem("Id", e.ID)
	x.elem("SenderFault", strconv.FormatBool(e.SenderFault))
	x.elem("Code", e.Code)
	x.optional("Message", e.Message)
}

func writeXMLBatchErrors(x *xmlWriter, failed []batchError) {
	for i := range failed {
		x.open("BatchResultErrorEntry")
		failed[i].writeXML(x)
		x.close("BatchResultErrorEntry")
	}
}

type sendMessageBatchOutput struct {
	Successful []sendResult `json:"Successful,omitempty"`
	Failed     []batchError `json:"Failed,omitempty"`
}

func (o *sendMessageBatchOutput) writeXML(x *xmlWriter) {
	for i := range o.Successful {
		x.open("SendMessageBatchResultEntry")
		o.Successful[i].writeXML(x)
		x.close("SendMessageBatchResultEntry")
	}
	writeXMLBatchErrors(x, o.Failed)
}

// batchIDEntry is a DeleteMessageBatch or ChangeMessageVisibilityBatch
// success entry.
type batchIDEntry struct {
	ID string `json:"Id"`
}

// batchIDOutput is the output of DeleteMessageBatch and
// ChangeMessageVisibilityBatch; entry is the XML element name of a success.
type batchIDOutput struct {
	Successful []batchIDEntry `json:"Successful,omitempty"`
	Failed     []batchError   `json:"Failed,omitempty"`
	entry      string
}

func (o *batchIDOutput) writeXML(x *xmlWriter) {
	for _, s := range o.Successful {
		x.open(o.entry)
		x.elem("Id", s.ID)
		x.close(o.entry)
	}
	writeXMLBatchErrors(x, o.Failed)
}

// wireAttribute is a MessageAttributeValue in a response.
type wireAttribute struct {
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
	DataType    string `json:"DataType"`
}

// wireMessage is a received Message.
type wireMessage struct {
	MessageID              string                   `json:"MessageId"`
	ReceiptHandle          string                   `json:"ReceiptHandle"`
	MD5OfBody              string                   `json:"MD5OfBody"`
	Body                   string                   `json:"Body"`
	Attributes             map[string]string        `json:"Attributes,omitempty"`
	MD5OfMessageAttributes string                   `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]wireAttribute `json:"MessageAttributes,omitempty"`
}

func (m *wireMessage) writeXML(x *xmlWriter) {
	x.elem("MessageId", m.MessageID)
	x.elem("ReceiptHandle", m.ReceiptHandle)
	x.elem("MD5OfBody", m.MD5OfBody)
	x.elem("Body", m.Body)
	writeXMLMap(x, m.Attributes, "Attribute", "Name", "Value")
	x.optional("MD5OfMessageAttributes", m.MD5OfMessageAttributes)
	for _, name := range sortedKeys(m.MessageAttributes) {
		a := m.MessageAttributes[name]
		x.open("MessageAttribute")
		x.elem("Name", name)
		x.open("Value")
		if a.BinaryValue != nil {
			x.elem("BinaryValue", base64.StdEncoding.EncodeToString(a.BinaryValue))
		} else {
			x.elem("StringValue", a.StringValue)
		}
		x.elem("DataType", a.DataType)
		x.close("Value")
		x.close("MessageAttribute")
	}
}

type receiveMessageOutput struct {
	Messages []wireMessage `json:"Messages,omitempty"`
}

func (o *receiveMessageOutput) writeXML(x *xmlWriter) {
	for i := range o.Messages {
		x.open("Message")
		o.Messages[i].writeXML(x)
		x.close("Message")
	}
}
