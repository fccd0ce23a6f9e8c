package trigger

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tidemq/tidemq"
)

// Event is the Lambda SQS event. Its fields are structs, not maps, so that
// they are encoded in the order Lambda delivers them.
type Event struct {
	Records []Record `json:"Records"`
}

// Record is one message of an Event.
type Record struct {
	MessageID              string                      `json:"messageId"`
	ReceiptHandle          string                      `json:"receiptHandle"`
	Body                   string                      `json:"body"`
	Attributes             RecordAttributes            `json:"attributes"`
	MessageAttributes      map[string]MessageAttribute `json:"messageAttributes"`
	MD5OfMessageAttributes string                      `json:"md5OfMessageAttributes,omitempty"`
	MD5OfBody              string                      `json:"md5OfBody"`
	EventSource            string                      `json:"eventSource"`
	EventSourceARN         string                      `json:"eventSourceARN"`
	AWSRegion              string                      `json:"awsRegion"`
}

// RecordAttributes are the system attributes of a Record, as strings. The
// FIFO ones, AWSTraceHeader and DeadLetterQueueSourceArn appear only when
// set (where AWS puts the last two is unverified).
type RecordAttributes struct {
	ApproximateReceiveCount          string `json:"ApproximateReceiveCount"`
	SentTimestamp                    string `json:"SentTimestamp"`
	SenderID                         string `json:"SenderId"`
	ApproximateFirstReceiveTimestamp string `json:"ApproximateFirstReceiveTimestamp"`
	SequenceNumber                   string `json:"SequenceNumber,omitempty"`
	MessageGroupID                   string `json:"MessageGroupId,omitempty"`
	MessageDeduplicationID           string `json:"MessageDeduplicationId,omitempty"`
	AWSTraceHeader                   string `json:"AWSTraceHeader,omitempty"`
	DeadLetterQueueSourceArn         string `json:"DeadLetterQueueSourceArn,omitempty"`
}

// MessageAttribute is a message attribute as Lambda shows it: stringValue
// or binaryValue (base64), both list fields always empty arrays.
type MessageAttribute struct {
	StringValue      *string  `json:"stringValue,omitempty"`
	BinaryValue      []byte   `json:"binaryValue,omitempty"`
	StringListValues []string `json:"stringListValues"`
	BinaryListValues []string `json:"binaryListValues"`
	DataType         string   `json:"dataType"`
}

func millis(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// NewRecord turns a received message into a Record of the queue with the
// given ARN.
func NewRecord(m *tidemq.Message, queueARN string) Record {
	region := ""
	if a, ok := tidemq.ParseARN(queueARN); ok {
		region = a.Region
	}
	r := Record{
		MessageID:     m.MessageID,
		ReceiptHandle: m.ReceiptHandle,
		Body:          m.Body,
		Attributes: RecordAttributes{
			ApproximateReceiveCount:          strconv.Itoa(m.ApproximateReceiveCount),
			SentTimestamp:                    millis(m.SentTimestamp),
			SenderID:                         m.SenderID,
			ApproximateFirstReceiveTimestamp: millis(m.FirstReceiveTimestamp),
			SequenceNumber:                   m.SequenceNumber,
			DeadLetterQueueSourceArn:         m.DeadLetterQueueSourceARN,
		},
		MessageAttributes:      make(map[string]MessageAttribute, len(m.Attributes)),
		MD5OfMessageAttributes: tidemq.MD5OfAttributes(m.Attributes),
		MD5OfBody:              tidemq.MD5OfBody(m.Body),
		EventSource:            "aws:sqs",
		EventSourceARN:         queueARN,
		AWSRegion:              region,
	}
	if m.SequenceNumber != "" {
		r.Attributes.MessageGroupID = m.MessageGroupID
		r.Attributes.MessageDeduplicationID = m.MessageDeduplicationID
	}
	if th, ok := m.SystemAttributes["AWSTraceHeader"]; ok {
		r.Attributes.AWSTraceHeader = th.StringValue
	}
	for name, v := range m.Attributes {
		a := MessageAttribute{StringListValues: []string{}, BinaryListValues: []string{}, DataType: v.DataType}
		if v.IsBinary() {
			a.BinaryValue = v.BinaryValue
		} else {
			s := v.StringValue
			a.StringValue = &s
		}
		r.MessageAttributes[name] = a
	}
	return r
}

// encodeEvent returns the event JSON of records.
func encodeEvent(records []Record) ([]byte, error) {
	return json.Marshal(Event{Records: records})
}
