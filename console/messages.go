package console

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/dlq"
)

// DefaultPeek is how many messages the browser shows without ?max.
const DefaultPeek = 20

// messageView is one peeked message, ready to show.
type messageView struct {
	MessageID string `json:"messageId"`
	Body      string `json:"body"`
	// Pretty is the body indented when it is JSON, else the body.
	Pretty   string        `json:"pretty"`
	Size     int           `json:"size"`
	Envelope *envelopeView `json:"envelope,omitempty"`
	// SentMillis and FirstReceiveMillis are Unix milliseconds (0: never).
	SentMillis int64 `json:"sent"`
	// DelayedUntil (while the send delay runs) and InvisibleUntil (while
	// in flight) are Unix milliseconds; 0 for a receivable message.
	DelayedUntilMillis   int64  `json:"delayedUntil,omitempty"`
	InvisibleUntilMillis int64  `json:"invisibleUntil,omitempty"`
	FirstReceiveMillis   int64  `json:"firstReceive,omitempty"`
	ReceiveCount         int    `json:"receiveCount"`
	SourceARN            string `json:"sourceArn,omitempty"`
	SourceQueue          string `json:"sourceQueue,omitempty"`
	GroupID              string `json:"groupId,omitempty"`
	DeduplicationID      string `json:"deduplicationId,omitempty"`
	SequenceNumber       string `json:"sequenceNumber,omitempty"`
	TraceHeader          string `json:"traceHeader,omitempty"`
	// Attributes are the sender's message attributes, by name; binary
	// values in base64.
	Attributes []attributeView `json:"attributes,omitempty"`
	History    []historyView   `json:"history,omitempty"`
	// Explain sums up why the message was dead-lettered ("" if it was
	// not), as `tidemq dlq peek` prints it.
	Explain string `json:"explain,omitempty"`
}

// envelopeView is an SNS envelope found in a body, unwrapped one level.
type envelopeView struct {
	Kind      string `json:"kind"` // "sns" or "wrapped"
	TopicARN  string `json:"topicArn,omitempty"`
	Subject   string `json:"subject,omitempty"`
	MessageID string `json:"messageId,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	// Message is the inner message, indented when it is JSON.
	Message string `json:"message"`
}

type attributeView struct {
	Name     string `json:"name"`
	DataType string `json:"dataType"`
	Value    string `json:"value"`
}

type historyView struct {
	TimeMillis int64              `json:"time"`
	Kind       string             `json:"kind"`
	Queue      string             `json:"queue,omitempty"`
	Client     *tidemq.ClientInfo `json:"client,omitempty"`
	Detail     string             `json:"detail,omitempty"`
}

type messagesView struct {
	Queue    string        `json:"queue"`
	Messages []messageView `json:"messages"`
}

func (c *Console) messages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	// Delayed messages are in the queue (a consumer's backoff): always
	// shown, with when they become receivable.
	p := tidemq.PeekMessagesParams{Queue: q.Get("queue"), IncludeInflight: q.Get("inflight") == "1" || q.Get("inflight") == "true",
		IncludeDelayed: true}
	max := DefaultPeek
	if s := q.Get("max"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			writeError(w, tidemq.Errorf(tidemq.ErrInvalidParameterValue, "max must be a number, not %q.", s))
			return
		}
		max = n
	}
	p.Max = &max
	if err := requireQueue(p.Queue); err != nil {
		writeError(w, err)
		return
	}
	msgs, err := c.o.Broker.PeekMessages(r.Context(), p)
	if err != nil {
		writeError(w, err)
		return
	}
	out := messagesView{Queue: p.Queue, Messages: make([]messageView, 0, len(msgs))}
	for _, m := range msgs {
		out.Messages = append(out.Messages, c.viewMessage(m))
	}
	writeJSON(w, http.StatusOK, out)
}

func requireQueue(name string) error {
	if name == "" {
		return tidemq.Errorf(tidemq.ErrMissingParameter, "The queue is missing: give its name.")
	}
	return nil
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// viewMessage renders a message for the browser: the body pretty-printed
// and unwrapped (dlq.Unwrap, dlq.Pretty) and the dead-letter story
// explained as `tidemq dlq peek` explains it (dlq.Explain).
func (c *Console) viewMessage(m *tidemq.Message) messageView {
	v := messageView{
		MessageID: m.MessageID, Body: m.Body, Pretty: dlq.Pretty(m.Body), Size: tidemq.MessageSize(m.Body, m.Attributes),
		SentMillis: millis(m.SentTimestamp), FirstReceiveMillis: millis(m.FirstReceiveTimestamp),
		DelayedUntilMillis: millis(m.DelayedUntil), InvisibleUntilMillis: millis(m.InvisibleUntil),
		ReceiveCount: m.ApproximateReceiveCount, SourceARN: m.DeadLetterQueueSourceARN,
		GroupID: m.MessageGroupID, DeduplicationID: m.MessageDeduplicationID, SequenceNumber: m.SequenceNumber,
	}
	if m.DeadLetterQueueSourceARN != "" {
		v.SourceQueue = c.queueName(m.DeadLetterQueueSourceARN)
	}
	if t, ok := m.SystemAttributes["AWSTraceHeader"]; ok {
		v.TraceHeader = t.StringValue
	}
	if env, ok := dlq.Unwrap(m.Body); ok {
		v.Envelope = &envelopeView{Kind: env.Kind, TopicARN: env.TopicArn, Subject: env.Subject,
			MessageID: env.MessageID, Timestamp: env.Timestamp, Message: dlq.Pretty(env.Message)}
	}
	for name, a := range m.Attributes {
		val := a.StringValue
		if a.IsBinary() {
			val = base64.StdEncoding.EncodeToString(a.BinaryValue)
		}
		v.Attributes = append(v.Attributes, attributeView{Name: name, DataType: a.DataType, Value: val})
	}
	sort.Slice(v.Attributes, func(i, j int) bool { return v.Attributes[i].Name < v.Attributes[j].Name })
	story := &dlq.Message{Attributes: map[string]string{}}
	for _, ev := range m.History {
		h := historyView{TimeMillis: ev.Time.UnixMilli(), Kind: ev.Kind, Queue: ev.Queue, Detail: ev.Detail}
		var who *dlq.Requester
		if ev.Client != (tidemq.ClientInfo{}) {
			cl := ev.Client
			h.Client = &cl
			who = &dlq.Requester{Addr: cl.Addr, UserAgent: cl.UserAgent, AccessKey: cl.AccessKey}
		}
		v.History = append(v.History, h)
		story.History = append(story.History, dlq.HistoryEvent{Time: h.TimeMillis, Kind: ev.Kind, Queue: ev.Queue, Client: who, Detail: ev.Detail})
	}
	v.Explain = dlq.Explain(story)
	return v
}
