package sns

import (
	"bytes"
	"encoding/json"
	"sort"
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
func (s *Service) envelope(r *record, sub *Subscription, msg string) (string, error) {
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
	if s.signs(r, sub.Protocol) {
		sig, err := s.signature(r, msg)
		if err != nil {
			return "", err
		}
		o.field("SignatureVersion", signatureVersion(r.SignatureVersion))
		o.field("Signature", sig)
		o.field("SigningCertURL", r.BaseURL+CertPath)
	}
	// AWS writes the subscription ARN plain, not percent-encoded: its
	// characters (letters, digits, ':', '-', '_', '.') need no escaping
	// in a query string.
	o.field("UnsubscribeURL", r.BaseURL+"/?Action=Unsubscribe&SubscriptionArn="+sub.ARN)
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
	return o.String(), nil
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
