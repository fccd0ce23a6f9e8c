package sqs

import (
	"strings"

	"github.com/tidemq/tidemq"
)

// tidemq's extension actions. They exist only on the AWS JSON 1.0 protocol,
// under their own X-Amz-Target service prefix, so no AWS client ever reaches
// them by accident: an SDK sends "AmazonSQS.<Action>", and a Query request
// naming an extension is an unknown action like any other. An AWS endpoint
// answers an extension target with an error, which is how tools (tidemq dlq)
// tell tidemq from AWS.
//
//	X-Amz-Target: TidemqExtensions.PeekMessages
//	{"QueueUrl": "...", "MaxNumberOfMessages": 10, "IncludeInflight": false}
//	→ {"Messages": [{"MessageId", "MD5OfBody", "Body", "Attributes",
//	   "MD5OfMessageAttributes", "MessageAttributes", "History": [...]}]}
//
//	X-Amz-Target: TidemqExtensions.ListQueueStats
//	{"QueueNamePrefix": "..."}
//	→ {"Queues": [{"QueueUrl", "QueueArn", "Visible", "InFlight", ...}]}
//
// Extensions are authenticated like every other action.

// extensionTargetPrefix is the service part of an extension's X-Amz-Target.
const extensionTargetPrefix = "TidemqExtensions."

// extensions maps extension action names (the X-Amz-Target suffix) to their
// implementations. They have no Query decoder.
var extensions = map[string]action{
	"PeekMessages":   extOp((*call).extPeekMessages),
	"ListQueueStats": extOp((*call).extListQueueStats),
}

// extOp builds a JSON-only action.
func extOp[In any](run func(*call, *In) (output, error)) action {
	return action{
		decodeJSON: func(body []byte) (any, error) {
			in := new(In)
			if err := decodeJSON(body, in); err != nil {
				return nil, err
			}
			return in, nil
		},
		run: func(c *call, in any) (output, error) { return run(c, in.(*In)) },
	}
}

// metricAction is the request's action as the metrics label it: a name
// from the action table, an extension's target (TidemqExtensions.<Name>),
// or "unknown" for a name that is neither, so that made-up actions cannot
// grow the label set.
func (c *call) metricAction() string {
	if _, ok := actions[c.action]; ok {
		return c.action
	}
	if name, ok := strings.CutPrefix(c.action, extensionTargetPrefix); ok {
		if _, ok := extensions[name]; ok {
			return c.action
		}
	}
	return "unknown"
}

// extension reports whether the request is a JSON request for an extension
// action. It is the one hook in (*call).serve.
func (c *call) extension() bool {
	return c.proto == protoJSON && strings.HasPrefix(c.r.Header.Get("X-Amz-Target"), extensionTargetPrefix)
}

// serveExtension authenticates, decodes and runs an extension action.
func (c *call) serveExtension(body []byte) (output, error) {
	name := strings.TrimPrefix(c.r.Header.Get("X-Amz-Target"), extensionTargetPrefix)
	c.action = extensionTargetPrefix + name
	var err error
	if c.accessKey, err = c.authenticate(body); err != nil {
		return nil, err
	}
	c.account = c.callerAccount()
	a, ok := extensions[name]
	if !ok {
		return nil, tidemq.InvalidAction(c.action)
	}
	in, err := a.decodeJSON(body)
	if err != nil {
		return nil, err
	}
	return a.run(c, in)
}

// jsonOnly is embedded by extension outputs: they are never written as XML.
type jsonOnly struct{}

func (jsonOnly) writeXML(*xmlWriter) {}

// --- PeekMessages ---

type extPeekInput struct {
	QueueURL            string `json:"QueueUrl"`
	MaxNumberOfMessages *int   `json:"MaxNumberOfMessages"`
	IncludeInflight     bool   `json:"IncludeInflight"`
	IncludeDelayed      bool   `json:"IncludeDelayed"`
}

// extClient is who made a request, in a history event.
type extClient struct {
	Addr      string `json:"Addr,omitempty"`
	UserAgent string `json:"UserAgent,omitempty"`
	AccessKey string `json:"AccessKey,omitempty"`
}

// extHistoryEvent is a tidemq.HistoryEvent on the wire; Time is epoch ms.
type extHistoryEvent struct {
	Time   int64      `json:"Time"`
	Kind   string     `json:"Kind"`
	Queue  string     `json:"Queue,omitempty"`
	Client *extClient `json:"Client,omitempty"`
	Detail string     `json:"Detail,omitempty"`
}

// extMessage is a peeked message: a received message's members without a
// receipt handle, with every system attribute, every message attribute and
// the message's history.
type extMessage struct {
	MessageID              string                   `json:"MessageId"`
	MD5OfBody              string                   `json:"MD5OfBody"`
	Body                   string                   `json:"Body"`
	Attributes             map[string]string        `json:"Attributes,omitempty"`
	MD5OfMessageAttributes string                   `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]wireAttribute `json:"MessageAttributes,omitempty"`
	History                []extHistoryEvent        `json:"History"`
	// DelayedUntil (while its send delay runs) and InvisibleUntil (while
	// it is in flight) are epoch ms; absent for a receivable message.
	DelayedUntil   int64 `json:"DelayedUntil,omitempty"`
	InvisibleUntil int64 `json:"InvisibleUntil,omitempty"`
}

type extPeekOutput struct {
	jsonOnly
	Messages []extMessage `json:"Messages"`
}

func (c *call) extPeekMessages(in *extPeekInput) (output, error) {
	name, err := c.queue(in.QueueURL)
	if err != nil {
		return nil, err
	}
	msgs, err := c.broker().PeekMessages(c.r.Context(), tidemq.PeekMessagesParams{
		Queue: name, Max: in.MaxNumberOfMessages, IncludeInflight: in.IncludeInflight, IncludeDelayed: in.IncludeDelayed,
	})
	if err != nil {
		return nil, err
	}
	all := map[string]bool{sysAll: true}
	out := &extPeekOutput{Messages: make([]extMessage, 0, len(msgs))}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		em := extMessage{
			MessageID:  m.MessageID,
			MD5OfBody:  tidemq.MD5OfBody(m.Body),
			Body:       m.Body,
			Attributes: systemAttributes(m, all),
			History:    make([]extHistoryEvent, 0, len(m.History)),
		}
		if !m.DelayedUntil.IsZero() {
			em.DelayedUntil = m.DelayedUntil.UnixMilli()
		}
		if !m.InvisibleUntil.IsZero() {
			em.InvisibleUntil = m.InvisibleUntil.UnixMilli()
		}
		if len(m.Attributes) > 0 {
			em.MD5OfMessageAttributes = tidemq.MD5OfAttributes(m.Attributes)
			em.MessageAttributes = wireAttributes(m.Attributes)
		}
		for _, ev := range m.History {
			we := extHistoryEvent{Time: ev.Time.UnixMilli(), Kind: ev.Kind, Queue: ev.Queue, Detail: ev.Detail}
			if ev.Client != (tidemq.ClientInfo{}) {
				we.Client = &extClient{Addr: ev.Client.Addr, UserAgent: ev.Client.UserAgent, AccessKey: ev.Client.AccessKey}
			}
			em.History = append(em.History, we)
		}
		out.Messages = append(out.Messages, em)
	}
	return out, nil
}

// --- ListQueueStats ---

type extListStatsInput struct {
	QueueNamePrefix string `json:"QueueNamePrefix"`
}

type extListStatsOutput struct {
	jsonOnly
	Queues []tidemq.ListedQueue `json:"Queues"`
}

func (c *call) extListQueueStats(in *extListStatsInput) (output, error) {
	out := &extListStatsOutput{Queues: []tidemq.ListedQueue{}}
	for _, q := range c.broker().Snapshot() {
		if c.h.cfg.Authorizer != nil && !c.h.cfg.Authorizer.Allowed(c.r, c.accessKey, iamAction(c.action), q.ARN) {
			continue // only the queues the caller may read the attributes of
		}
		// The request's region and the caller's account only, as
		// ListQueues: a queue of another region would otherwise be listed
		// under its plain name, which names no queue of this region.
		region, account, plain := tidemq.SplitQualifiedName(q.Name, c.h.cfg.Region, c.h.cfg.AccountID)
		if region != c.region || account != c.account || !strings.HasPrefix(plain, in.QueueNamePrefix) {
			continue
		}
		out.Queues = append(out.Queues, q.Listed(c.queueURL(q.Name)))
	}
	return out, nil
}
