package dlq

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Envelope is an SNS envelope found in a message body: either a real SNS
// notification ({"Type":"Notification","Message":"...",...}) or the
// double encoding teams hand-roll ({"Message":"<json string>"}).
type Envelope struct {
	// Kind is "sns" for a notification, "wrapped" for the hand-rolled form.
	Kind     string
	TopicArn string
	Subject  string
	// MessageID and Timestamp are the notification's.
	MessageID string
	Timestamp string
	// Message is the inner message, unwrapped one level.
	Message string
}

// Unwrap finds an SNS envelope in body, one level deep. A body that is a
// JSON object with a string "Message" member is an envelope when its
// "Type" is "Notification", or when the Message itself is JSON (the
// {"Message": "<json string>"} double encoding).
func Unwrap(body string) (*Envelope, bool) {
	b := strings.TrimSpace(body)
	if !strings.HasPrefix(b, "{") {
		return nil, false
	}
	var raw map[string]json.RawMessage
	if json.Unmarshal([]byte(b), &raw) != nil {
		return nil, false
	}
	var msg string
	if json.Unmarshal(raw["Message"], &msg) != nil {
		return nil, false
	}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(raw[k], &s)
		return s
	}
	env := &Envelope{Message: msg, TopicArn: str("TopicArn"), Subject: str("Subject"),
		MessageID: str("MessageId"), Timestamp: str("Timestamp")}
	switch {
	case str("Type") == "Notification":
		env.Kind = "sns"
	case json.Valid([]byte(msg)) && strings.HasPrefix(strings.TrimSpace(msg), "{"):
		env.Kind = "wrapped"
	default:
		return nil, false
	}
	return env, true
}

// Pretty renders s for reading: JSON indented by two spaces (numbers and
// key order kept as sent), anything else as it is.
func Pretty(s string) string {
	var buf bytes.Buffer
	if json.Valid([]byte(s)) && json.Indent(&buf, []byte(s), "", "  ") == nil {
		return buf.String()
	}
	return s
}

// payload is the JSON a filter's inner.* paths look at: the unwrapped
// message when the body is an envelope, otherwise the body.
func payload(body string) string {
	if env, ok := Unwrap(body); ok {
		return env.Message
	}
	return body
}
