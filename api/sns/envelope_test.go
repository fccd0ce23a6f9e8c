package sns_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/tidemq/tidemq/sns"
)

// envelopeNow is the notification clock of TestEnvelopes.
var envelopeNow = time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC)

// masker replaces what differs from run to run (server addresses, ids,
// tokens, signatures) with stable names, so that the rest can be pinned.
type masker struct {
	pairs []string
	n     map[string]int
}

func (m *masker) add(value, name string) { m.pairs = append(m.pairs, value, name) }

// id names a generated value (a MessageId, a subscription ARN) by kind and
// order of first appearance.
func (m *masker) id(kind, value string) {
	if m.n == nil {
		m.n = map[string]int{}
	}
	for i := 0; i+1 < len(m.pairs); i += 2 {
		if m.pairs[i] == value {
			return
		}
	}
	m.n[kind]++
	m.add(value, fmt.Sprintf("<%s-%d>", kind, m.n[kind]))
}

func (m *masker) mask(s string) string {
	// Longest first: a subscription ARN before its topic's ARN.
	idx := make([]int, 0, len(m.pairs)/2)
	for i := 0; i+1 < len(m.pairs); i += 2 {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return len(m.pairs[idx[a]]) > len(m.pairs[idx[b]]) })
	for _, i := range idx {
		s = strings.ReplaceAll(s, m.pairs[i], m.pairs[i+1])
	}
	return s
}

// TestEnvelopes pins what subscribers receive, byte for byte but for the
// masked values: the SQS envelope of a standard topic (signed, with the
// subscription ARN plain in UnsubscribeURL), of a topic with
// SignatureVersion 2, of a FIFO topic, and with --sns-sign=http-only; and the
// headers and body of HTTP confirmations and notifications. Every
// signature is verified with the served certificate before it is masked,
// and every subscription of one publish must carry the same signature,
// computed once (Stats().Signatures).
//
// testdata/envelopes.txt is the expectation, on both stores; go test -run
// TestEnvelopes -update rewrites it from the embedded store's.
func TestEnvelopes(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		checkEnvelopes(t, false, func(opt func(*sns.Options)) *env { return newEnvWith(t, opt) })
	})
	t.Run("postgres", func(t *testing.T) {
		checkEnvelopes(t, true, func(opt func(*sns.Options)) *env { return pgEnv(t, opt, nil) })
	})
}

// checkEnvelopes is TestEnvelopes on the envs open makes; -update rewrites
// the expectation only from the embedded store's (onPostgres false).
func checkEnvelopes(t *testing.T, onPostgres bool, open func(opt func(*sns.Options)) *env) {
	var out strings.Builder
	for _, mode := range []sns.SignMode{sns.SignAll, sns.SignHTTPOnly} {
		e := open(func(o *sns.Options) {
			o.Now = func() time.Time { return envelopeNow }
			o.Signing = mode
		})
		var m masker
		m.add(e.srv.URL, "<tidemq>")
		fmt.Fprintf(&out, "##### signing %s\n", mode)

		// A standard topic with three envelope subscriptions and a raw one.
		topic := e.topic("env", nil)
		var urls []string
		var subs []string
		for i := 1; i <= 3; i++ {
			u, arn := e.queue(fmt.Sprintf("env-%d", i), nil)
			urls = append(urls, u)
			subs = append(subs, e.subscribe(topic, arn, nil))
		}
		rawURL, rawARN := e.queue("env-raw", nil)
		e.subscribe(topic, rawARN, map[string]string{"RawMessageDelivery": "true"})
		for _, s := range subs {
			m.id("subscription", s)
		}
		before := e.svc.Stats().Signatures
		pub, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(`{"order":1} <&>`),
			Subject: aws.String("Hello"), MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"n": {DataType: aws.String("Number"), StringValue: aws.String("1.5")},
				"b": {DataType: aws.String("Binary"), BinaryValue: []byte("hi")},
			}})
		if err != nil {
			t.Fatal(err)
		}
		m.id("message", aws.ToString(pub.MessageId))
		var sigs []string
		for i, u := range urls {
			body := e.onlyBody(u)
			n := e.decodeEnvelope(body)
			if mode == sns.SignAll {
				verifySignature(t, n)
				sigs = append(sigs, n["Signature"].(string))
				m.add(n["Signature"].(string), "<signature>")
			}
			if i == 0 {
				fmt.Fprintf(&out, "=== standard topic, SQS subscription\n%s\n", m.mask(body))
			}
		}
		for _, s := range sigs[min(1, len(sigs)):] {
			if s != sigs[0] {
				t.Errorf("the deliveries of one publish carry different signatures")
			}
		}
		wantSigned := uint64(1)
		if mode == sns.SignHTTPOnly {
			wantSigned = 0
		}
		if got := e.svc.Stats().Signatures - before; got != wantSigned {
			t.Errorf("signing %s: %d signatures computed for one publish to three SQS envelope subscriptions, want %d", mode, got, wantSigned)
		}
		fmt.Fprintf(&out, "=== standard topic, raw SQS subscription\n%s\n", e.onlyBody(rawURL))

		// SignatureVersion 2.
		v2 := e.topic("env-v2", map[string]string{"SignatureVersion": "2"})
		v2URL, v2ARN := e.queue("env-v2", nil)
		m.id("subscription", e.subscribe(v2, v2ARN, nil))
		pub, err = e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(v2), Message: aws.String("two")})
		if err != nil {
			t.Fatal(err)
		}
		m.id("message", aws.ToString(pub.MessageId))
		body := e.onlyBody(v2URL)
		if n := e.decodeEnvelope(body); mode == sns.SignAll {
			verifySignature(t, n)
			m.add(n["Signature"].(string), "<signature>")
		}
		fmt.Fprintf(&out, "=== SignatureVersion 2 topic, SQS subscription\n%s\n", m.mask(body))

		// A FIFO topic: no signature, a SequenceNumber.
		fifo := e.topic("env.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
		fURL, fARN := e.queue("env.fifo", map[string]string{"FifoQueue": "true"})
		m.id("subscription", e.subscribe(fifo, fARN, nil))
		fp, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(fifo), Message: aws.String("f"), MessageGroupId: aws.String("g")})
		if err != nil {
			t.Fatal(err)
		}
		m.id("message", aws.ToString(fp.MessageId))
		m.add(`"`+aws.ToString(fp.SequenceNumber)+`"`, `"<sequence>"`)
		fmt.Fprintf(&out, "=== FIFO topic, SQS subscription\n%s\n", m.mask(e.onlyBody(fURL)))

		// HTTP: the confirmation, then a notification.
		h := newHook(t, func(int) int { return http.StatusOK })
		m.add(h.srv.URL, "<endpoint>")
		if _, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
			Endpoint: aws.String(h.srv.URL + "/hook")}); err != nil {
			t.Fatal(err)
		}
		conf := h.next(t)
		c := jsonBody(t, conf)
		verifyConfirmationSignature(t, c)
		m.id("message", c["MessageId"].(string))
		m.add(c["Token"].(string), "<token>")
		m.add(c["Signature"].(string), "<signature>")
		fmt.Fprintf(&out, "=== HTTP SubscriptionConfirmation\n%s%s\n", m.mask(headerLines(conf.header)), m.mask(conf.body))
		confirmed, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(c["Token"].(string))})
		if err != nil {
			t.Fatal(err)
		}
		m.id("subscription", aws.ToString(confirmed.SubscriptionArn))
		pub, err = e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("to http")})
		if err != nil {
			t.Fatal(err)
		}
		m.id("message", aws.ToString(pub.MessageId))
		note := h.next(t)
		n := jsonBody(t, note)
		verifySignature(t, n)
		m.add(n["Signature"].(string), "<signature>")
		fmt.Fprintf(&out, "=== HTTP Notification\n%s%s\n", m.mask(headerLines(note.header)), m.mask(note.body))
		for _, u := range urls {
			e.onlyBody(u) // the SQS subscriptions got it too
		}
	}

	golden := filepath.Join("testdata", "envelopes.txt")
	if *update && !onPostgres {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != string(want) {
		t.Errorf("the envelopes differ from %s (go test -run TestEnvelopes -update, then diff):\n%s", golden, firstDiff(string(want), got))
	}
}

// onlyBody receives the one message waiting in a queue and returns its
// body.
func (e *env) onlyBody(url string) string {
	e.t.Helper()
	msgs := e.receive(url, 10)
	if len(msgs) != 1 {
		e.t.Fatalf("%s holds %d messages, want 1", url, len(msgs))
	}
	return aws.ToString(msgs[0].Body)
}

func (e *env) decodeEnvelope(body string) map[string]any {
	e.t.Helper()
	var n map[string]any
	if err := json.Unmarshal([]byte(body), &n); err != nil {
		e.t.Fatalf("not an envelope: %v\n%s", err, body)
	}
	return n
}

// headerLines writes the headers an endpoint received, sorted, leaving out
// Content-Length (the body follows anyway).
func headerLines(h http.Header) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		if k != "Content-Length" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(h[k], ", "))
	}
	return b.String()
}
