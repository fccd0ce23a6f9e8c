package dlq

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"
)

// Record is one line of an export: a message in JSON Lines. Body is the
// body exactly as sent (SQS bodies are Unicode text, which a JSON string
// holds byte for byte); binary attribute values are base64.
type Record struct {
	MessageID              string                `json:"MessageId"`
	Body                   string                `json:"Body"`
	MessageAttributes      map[string]RecordAttr `json:"MessageAttributes,omitempty"`
	MessageGroupID         string                `json:"MessageGroupId,omitempty"`
	MessageDeduplicationID string                `json:"MessageDeduplicationId,omitempty"`
	// Attributes are the system attributes at export time (informational;
	// import sends only AWSTraceHeader).
	Attributes map[string]string `json:"Attributes,omitempty"`
	// History is the message's history on tidemq (informational).
	History []HistoryEvent `json:"History,omitempty"`
	// DelaySeconds and VisibleAt (RFC 3339) describe a message still
	// delayed at export time: the delay it was sent with and when it
	// becomes receivable (tidemq; informational, import sends at once).
	DelaySeconds int    `json:"DelaySeconds,omitempty"`
	VisibleAt    string `json:"VisibleAt,omitempty"`
}

// RecordAttr is a typed message attribute in a Record.
type RecordAttr struct {
	DataType    string  `json:"DataType"`
	StringValue *string `json:"StringValue,omitempty"`
	BinaryValue []byte  `json:"BinaryValue,omitempty"`
}

// ExportOptions are the options of Export.
type ExportOptions struct {
	// Max is the most messages to export; 0 means 1000 (a tidemq peek's
	// maximum).
	Max             int
	IncludeInflight bool
	// AllowReceive allows exporting from AWS, where it takes a receive.
	AllowReceive bool
	Visibility   int32
	Filter       *Filter
}

// Export writes the messages of a queue to w as JSON Lines without
// consuming them (on AWS: received and made visible again).
func (c *Client) Export(ctx context.Context, queue string, w io.Writer, o ExportOptions) (int, error) {
	q, err := c.resolve(ctx, queue)
	if err != nil {
		return 0, err
	}
	max := o.Max
	if max <= 0 {
		max = 1000
	}
	visibility := o.Visibility
	if visibility <= 0 {
		visibility = 300
	}
	msgs, err := c.look(ctx, q, max, o.IncludeInflight, o.AllowReceive, visibility)
	if err != nil {
		return 0, err
	}
	msgs = o.Filter.Select(msgs)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, m := range msgs {
		if err := enc.Encode(recordOf(m)); err != nil {
			return 0, err
		}
	}
	if len(msgs) == max {
		c.warnf("exported %d messages, the maximum: there may be more (raise -n)", max)
	}
	fmt.Fprintf(c.errw(), "exported %d messages from %s\n", len(msgs), q.Name)
	return len(msgs), nil
}

func recordOf(m *Message) Record {
	r := Record{MessageID: m.MessageID, Body: m.Body, Attributes: m.Attributes, History: m.History,
		MessageGroupID: m.GroupID(), MessageDeduplicationID: m.Attributes["MessageDeduplicationId"]}
	if !m.DelayedUntil.IsZero() {
		r.DelaySeconds = int(m.Delay() / time.Second)
		r.VisibleAt = m.DelayedUntil.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if len(m.MessageAttributes) > 0 {
		r.MessageAttributes = make(map[string]RecordAttr, len(m.MessageAttributes))
		for k, v := range m.MessageAttributes {
			r.MessageAttributes[k] = RecordAttr{DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
		}
	}
	return r
}

// ImportOptions are the options of Import.
type ImportOptions struct {
	// KeepDedupID sends each record's own deduplication id to a FIFO queue
	// (by default each send gets a new one, so that re-importing a file is
	// not swallowed by deduplication).
	KeepDedupID bool
	// Group is the message group for records without one, into a FIFO queue.
	Group string
}

// Import sends each JSON Lines record of r to queue: the body as it is, the
// message attributes, the trace header, and into a FIFO queue the group.
func (c *Client) Import(ctx context.Context, queue string, r io.Reader, o ImportOptions) (int, error) {
	q, err := c.resolve(ctx, queue)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	n, line := 0, 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal([]byte(text), &rec); err != nil {
			return n, fmt.Errorf("line %d: %w", line, err)
		}
		in := &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(rec.Body)}
		if len(rec.MessageAttributes) > 0 {
			in.MessageAttributes = make(map[string]types.MessageAttributeValue, len(rec.MessageAttributes))
			for k, v := range rec.MessageAttributes {
				in.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
			}
		}
		if t := rec.Attributes["AWSTraceHeader"]; t != "" {
			in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
				"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(t)}}
		}
		if q.FIFO {
			g := rec.MessageGroupID
			if g == "" {
				g = o.Group
			}
			if g == "" {
				return n, fmt.Errorf("line %d: message %s has no MessageGroupId and %s is a FIFO queue: pass --group", line, rec.MessageID, q.Name)
			}
			in.MessageGroupId = aws.String(g)
			dedup := uuid.NewString()
			if o.KeepDedupID && rec.MessageDeduplicationID != "" {
				dedup = rec.MessageDeduplicationID
			}
			in.MessageDeduplicationId = aws.String(dedup)
		}
		if _, err := c.SQS.SendMessage(ctx, in); err != nil {
			return n, fmt.Errorf("line %d: send: %w", line, err)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return n, err
	}
	fmt.Fprintf(c.Out, "imported %d messages into %s\n", n, q.Name)
	return n, nil
}
