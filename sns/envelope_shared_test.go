package sns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"testing"
)

// perFieldEnvelope is the envelope as it was built before it was shared:
// every field encoded for every delivery. The shared envelope must be
// byte for byte the same.
func perFieldEnvelope(s *Service, r *record, sub *Subscription, msg string) string {
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
		sig, _ := s.signature(r, msg)
		o.field("SignatureVersion", signatureVersion(r.SignatureVersion))
		o.field("Signature", sig)
		o.field("SigningCertURL", r.BaseURL+CertPath)
	}
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
	return o.String()
}

// TestSharedEnvelopeIsTheEnvelope: the envelopes of a fan-out, built once
// per publish and completed with each subscription's ARN, are byte for
// byte what encoding every field for every delivery gives, signed or not,
// FIFO or not, with a subject, attributes and text that JSON escapes; and
// a publish to one subscription (which builds its envelope alone) gives
// the same.
func TestSharedEnvelopeIsTheEnvelope(t *testing.T) {
	for _, c := range []struct {
		name string
		mode SignMode
		fifo bool
	}{{"signed", SignAll, false}, {"http-only", SignHTTPOnly, false}, {"fifo", SignAll, true}} {
		t.Run(c.name, func(t *testing.T) {
			broker := &fakeBroker{}
			s, err := Open(Options{Broker: broker, Logger: slog.New(slog.DiscardHandler), Signing: c.mode, PublicURL: "http://localhost:9324"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			name, attrs, suffix := "shared", map[string]string(nil), ""
			if c.fifo {
				name, attrs, suffix = "shared.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}, ".fifo"
			}
			topic, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: name, Attributes: attrs})
			if err != nil {
				t.Fatal(err)
			}
			single, err := s.CreateTopic(context.Background(), CreateTopicParams{Name: "single" + suffix, Attributes: attrs})
			if err != nil {
				t.Fatal(err)
			}
			subs := map[string]*Subscription{}
			for i := range 10 {
				q := fmt.Sprintf("q%d%s", i, suffix)
				sub, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: testQueueARN + q})
				if err != nil {
					t.Fatal(err)
				}
				subs[q] = sub
			}
			one, err := s.Subscribe(context.Background(), SubscribeParams{TopicARN: single.ARN, Protocol: "sqs", Endpoint: testQueueARN + "one" + suffix})
			if err != nil {
				t.Fatal(err)
			}
			in := PublishParams{Message: "a \"quoted\" \\ <b>&</b>\n\u2028 é", Subject: "Sub & ject",
				Attributes: map[string]Attribute{"z": {DataType: "String", StringValue: "last"}, "a": {DataType: "Binary", BinaryValue: []byte{0, 1, 2}}}}
			if c.fifo {
				in.MessageGroupID = "g"
			}
			in.TopicARN = topic.ARN
			res, err := s.Publish(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			in.TopicARN = single.ARN
			res1, err := s.Publish(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			check := func(queue string, sub *Subscription, messageID string) {
				t.Helper()
				got := broker.sent[queue]
				if len(got) != 1 {
					t.Fatalf("queue %s got %d messages, want 1", queue, len(got))
				}
				// The record as the publish made it: its id, timestamp and
				// sequence read back from the envelope itself.
				var env struct{ MessageId, Timestamp, SequenceNumber, Signature string }
				if err := json.Unmarshal([]byte(got[0]), &env); err != nil {
					t.Fatalf("queue %s: %v in %s", queue, err, got[0])
				}
				r := &record{TopicARN: sub.TopicARN, FIFO: c.fifo, MessageID: messageID, Timestamp: env.Timestamp, Sequence: env.SequenceNumber,
					Subject: in.Subject, Message: in.Message, Attributes: in.Attributes, BaseURL: "http://localhost:9324"}
				if env.Signature != "" {
					r.sigs.sig = map[string]string{in.Message: env.Signature}
				}
				if want := perFieldEnvelope(s, r, sub, in.Message); got[0] != want {
					t.Errorf("queue %s:\n got %s\nwant %s", queue, got[0], want)
				}
				if signed := env.Signature != ""; signed != (c.mode == SignAll && !c.fifo) {
					t.Errorf("queue %s: signed %v", queue, signed)
				}
			}
			for q, sub := range subs {
				check(q, sub, res.MessageID)
			}
			check("one"+suffix, one, res1.MessageID)
			if c.mode == SignAll && !c.fifo {
				if n := s.stats.signatures.Load(); n != 2 {
					t.Errorf("%d signatures for two publishes, want 2", n)
				}
			}
		})
	}
}

// writeJSONStringBody escapes as writeJSON does (without the quotes).
func TestWriteJSONStringBodyEscapesAsWriteJSON(t *testing.T) {
	for _, v := range []string{"", "arn:aws:sns:us-east-1:000000000000:t:1f2e", "a\"b", `a\b`, "a\nb\x01", "<&>", "é\u2028\u2029", "bad\xffutf8", "\x7f"} {
		var b strings.Builder
		writeJSONStringBody(&b, v)
		var want bytes.Buffer
		writeJSON(&want, v)
		if w := want.String(); `"`+b.String()+`"` != w {
			t.Errorf("%q: got %s, want %s", v, b.String(), w)
		}
	}
}
