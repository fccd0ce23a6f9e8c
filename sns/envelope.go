package sns

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"
)

// Message types: the envelope's Type and the x-amz-sns-message-type header.
const (
	typeNotification             = "Notification"
	typeSubscriptionConfirmation = "SubscriptionConfirmation"
	typeUnsubscribeConfirmation  = "UnsubscribeConfirmation"
)

// jsonObject writes a JSON object field by field, in the order given, with
// SNS's `"key" : value` spacing.
type jsonObject struct {
	b     bytes.Buffer
	first bool
}

func newJSONObject() *jsonObject {
	o := &jsonObject{first: true}
	o.b.WriteString("{\n")
	return o
}

func (o *jsonObject) field(k string, v any) {
	if !o.first {
		o.b.WriteString(",\n")
	}
	o.first = false
	o.b.WriteString("  ")
	writeJSON(&o.b, k)
	o.b.WriteString(" : ")
	writeJSON(&o.b, v)
}

func (o *jsonObject) String() string {
	o.b.WriteString("\n}")
	return o.b.String()
}

// signatureVersion is a topic's SignatureVersion attribute, "1" by default.
func signatureVersion(v string) string {
	if v == "" {
		return "1"
	}
	return v
}

// envelope builds the JSON notification of r for sub in AWS's field order.
// Its signature is the record's, shared by every subscription (sign.go).
// Only UnsubscribeURL names the subscription: for a record of several
// deliveries the rest of the envelope is built once per message text and
// signing choice (envelopeParts), and each subscription's envelope is
// that with its ARN in between.
func (s *Service) envelope(r *record, sub *Subscription, msg string) (string, error) {
	signed := s.signs(r, sub.Protocol)
	var head, tail []byte
	if len(r.deliveries) <= 1 {
		text, cut, err := s.envelopeText(r, msg, signed)
		if err != nil {
			return "", err
		}
		head, tail = text[:cut], text[cut:]
	} else {
		p, err := s.envelopeParts(r, msg, signed)
		if err != nil {
			return "", err
		}
		head, tail = p.head, p.tail
	}
	var b strings.Builder
	b.Grow(len(head) + len(sub.ARN) + len(tail))
	b.Write(head)
	writeJSONStringBody(&b, sub.ARN)
	b.Write(tail)
	return b.String(), nil
}

// envelopeParts are a record's notification for one message text and
// signing choice, cut where the subscription ARN goes (envelopeText).
type envelopeParts struct {
	msg        string
	signed     bool
	head, tail []byte // never changed once built
}

// envelopeCache is a record's envelopeParts, built once each and shared by
// its deliveries (and their retries).
type envelopeCache struct {
	mu    sync.Mutex
	parts []*envelopeParts // one or two: a message text, signed or not
}

// envelopeParts returns r's envelope halves for message text msg, signed
// or not, building them the first time.
func (s *Service) envelopeParts(r *record, msg string, signed bool) (*envelopeParts, error) {
	c := &r.envs
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.parts {
		if p.signed == signed && p.msg == msg {
			return p, nil
		}
	}
	text, cut, err := s.envelopeText(r, msg, signed)
	if err != nil {
		return nil, err
	}
	p := &envelopeParts{msg: msg, signed: signed, head: text[:cut:cut], tail: text[cut:]}
	c.parts = append(c.parts, p)
	return p, nil
}

// envelopeText writes r's notification with message text msg, signed or
// not, without a subscription ARN: text[:cut] ends inside the
// UnsubscribeURL string, after "SubscriptionArn=", and text[cut:] begins
// with the quote that closes it.
func (s *Service) envelopeText(r *record, msg string, signed bool) (text []byte, cut int, err error) {
	o := newJSONObject()
	o.field("Type", typeNotification)
	o.field("MessageId", r.MessageID)
	if r.FIFO {
		o.field("SequenceNumber", r.Sequence)
	}
	o.field("TopicArn", r.TopicARN)
	if r.Subject != "" {
		o.field("Subject", r.Subject)
	}
	o.field("Message", msg)
	o.field("Timestamp", r.Timestamp)
	if signed {
		sig, err := s.signature(r, msg)
		if err != nil {
			return nil, 0, err
		}
		o.field("SignatureVersion", signatureVersion(r.SignatureVersion))
		o.field("Signature", sig)
		o.field("SigningCertURL", r.BaseURL+CertPath)
	}
	// AWS writes the subscription ARN plain, not percent-encoded: its
	// characters (letters, digits, ':', '-', '_', '.') need no escaping
	// in a query string. The URL ends with the ARN, which goes before the
	// closing quote.
	o.field("UnsubscribeURL", r.BaseURL+"/?Action=Unsubscribe&SubscriptionArn=")
	cut = o.b.Len() - 1
	if len(r.Attributes) > 0 {
		names := make([]string, 0, len(r.Attributes))
		for name := range r.Attributes {
			names = append(names, name)
		}
		sort.Strings(names)
		type attr struct {
			Type  string
			Value string
		}
		m := make(map[string]attr, len(names))
		for _, name := range names {
			a := r.Attributes[name]
			m[name] = attr{Type: a.DataType, Value: a.envelopeValue()}
		}
		o.field("MessageAttributes", m)
	}
	o.b.WriteString("\n}")
	return o.b.Bytes(), cut, nil
}

// writeJSONStringBody writes v as the inside of a JSON string (without its
// quotes), escaped as writeJSON escapes it.
func writeJSONStringBody(b *strings.Builder, v string) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			var buf bytes.Buffer
			writeJSON(&buf, v)
			b.Write(buf.Bytes()[1 : buf.Len()-1])
			return
		}
	}
	b.WriteString(v) // printable ASCII without quote or backslash: as is
}

// subscribeURL is the URL that confirms (or restores) a subscription.
func subscribeURL(sub *Subscription) string {
	return sub.BaseURL + "/?Action=ConfirmSubscription&TopicArn=" + sub.TopicARN + "&Token=" + sub.Token
}

// confirmationMessage builds a SubscriptionConfirmation or
// UnsubscribeConfirmation message in AWS's field order (Type, MessageId,
// Token, TopicArn, Message, SubscribeURL, Timestamp, SignatureVersion,
// Signature, SigningCertURL), signed over Message, MessageId, SubscribeURL,
// Timestamp, Token, TopicArn and Type.
func (s *Service) confirmationMessage(t *Topic, sub *Subscription, typ, messageID, timestamp string) (string, error) {
	var text string
	if typ == typeSubscriptionConfirmation {
		text = "You have chosen to subscribe to the topic " + sub.TopicARN + ".\nTo confirm the subscription, visit the SubscribeURL included in this message."
	} else {
		text = "You have chosen to deactivate subscription " + sub.ARN + ".\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message."
	}
	su := subscribeURL(sub)
	version := signatureVersion(t.Attributes["SignatureVersion"])
	sts := "Message\n" + text + "\nMessageId\n" + messageID + "\nSubscribeURL\n" + su + "\nTimestamp\n" + timestamp +
		"\nToken\n" + sub.Token + "\nTopicArn\n" + sub.TopicARN + "\nType\n" + typ + "\n"
	sig, err := s.signer.sign(version, sts)
	if err != nil {
		return "", err
	}
	o := newJSONObject()
	o.field("Type", typ)
	o.field("MessageId", messageID)
	o.field("Token", sub.Token)
	o.field("TopicArn", sub.TopicARN)
	o.field("Message", text)
	o.field("SubscribeURL", su)
	o.field("Timestamp", timestamp)
	o.field("SignatureVersion", version)
	o.field("Signature", sig)
	o.field("SigningCertURL", sub.BaseURL+CertPath)
	return o.String(), nil
}

// writeJSON writes v as JSON without HTML escaping (as SNS does).
func writeJSON(b *bytes.Buffer, v any) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	b.Truncate(b.Len() - 1) // Encode's newline
}
