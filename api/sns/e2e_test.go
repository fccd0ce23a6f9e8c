package sns_test

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"crypto"
	"crypto/rsa"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq"
	apisns "github.com/tidemq/tidemq/api/sns"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage"
	"github.com/tidemq/tidemq/storage/pebble"
)

const account = "000000000000"

type env struct {
	t   *testing.T
	srv *httptest.Server
	sns *awssns.Client
	sqs *awssqs.Client
	svc *sns.Service
	ctx context.Context
	// postgres: the broker and the topic store are PostgreSQL's (pgEnv).
	postgres bool
}

// newEnv serves the embedded store as `tidemq serve --data-dir` runs it:
// one Pebble store in a temporary directory shared by the engine (its
// standard queues' backlog paged to disk) and the topic service.
func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with the topic service's options adjusted by opt.
func newEnvWith(t *testing.T, opt func(*sns.Options)) *env {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	st, err := pebble.Open(t.TempDir(), pebble.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	shared := storage.Share(st)
	eng, err := engine.Open(engine.Options{Store: shared, Region: "us-east-1", AccountID: account, SweepInterval: -1, Logger: log,
		PageSize: engine.DefaultPageSize})
	if err != nil {
		_ = shared.Close()
		t.Fatal(err)
	}
	return newEnvOn(t, eng, shared.Share(), opt)
}

// newEnvOn serves broker and a topic service on store (nil: in memory).
// The env closes both.
func newEnvOn(t *testing.T, eng tidemq.Broker, store storage.Store, opt func(*sns.Options)) *env {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	o := sns.Options{Broker: eng, Region: "us-east-1", AccountID: account, Logger: log, Store: store}
	if opt != nil {
		opt(&o)
	}
	svc, err := sns.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	h := apisns.Route(apisns.NewHandler(apisns.Config{Service: svc, Logger: log}), sqs.NewHandler(sqs.Config{Broker: eng, Logger: log}))
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		_ = svc.Close()
		_ = eng.Close()
	})
	creds := credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
	return &env{
		t:   t,
		srv: srv,
		sns: awssns.New(awssns.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds,
			Retryer: retry.AddWithMaxAttempts(retry.NewStandard(), 1)}),
		sqs: awssqs.New(awssqs.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", Credentials: creds,
			Retryer: retry.AddWithMaxAttempts(retry.NewStandard(), 1)}),
		svc: svc,
		ctx: context.Background(),
	}
}

func (e *env) queue(name string, attrs map[string]string) (url, arn string) {
	e.t.Helper()
	out, err := e.sqs.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		e.t.Fatalf("CreateQueue: %v", err)
	}
	return aws.ToString(out.QueueUrl), "arn:aws:sqs:us-east-1:" + account + ":" + name
}

func (e *env) topic(name string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String(name), Attributes: attrs})
	if err != nil {
		e.t.Fatalf("CreateTopic: %v", err)
	}
	return aws.ToString(out.TopicArn)
}

func (e *env) subscribe(topic, queueARN string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueARN), Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		e.t.Fatalf("Subscribe: %v", err)
	}
	return aws.ToString(out.SubscriptionArn)
}

func (e *env) receive(url string, max int32) []sqstypes.Message {
	e.t.Helper()
	out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: max,
		MessageAttributeNames: []string{"All"}, WaitTimeSeconds: 0})
	if err != nil {
		e.t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want API error %s, got %v", code, err)
	}
	if apiErr.ErrorCode() != code {
		t.Fatalf("want error code %s, got %s (%s)", code, apiErr.ErrorCode(), apiErr.ErrorMessage())
	}
}

func TestFanOutEnvelopeAndRaw(t *testing.T) { onBothStores(t, checkFanOutEnvelopeAndRaw) }

func checkFanOutEnvelopeAndRaw(t *testing.T, e *env) {
	topic := e.topic("orders", nil)
	if again := e.topic("orders", nil); again != topic {
		t.Fatalf("CreateTopic not idempotent: %s then %s", topic, again)
	}
	if topic != "arn:aws:sns:us-east-1:"+account+":orders" {
		t.Fatalf("TopicArn = %s", topic)
	}
	envURL, envARN := e.queue("orders-envelope", nil)
	rawURL, rawARN := e.queue("orders-raw", nil)
	subEnv := e.subscribe(topic, envARN, nil)
	e.subscribe(topic, rawARN, map[string]string{"RawMessageDelivery": "true"})
	if !strings.HasPrefix(subEnv, topic+":") {
		t.Fatalf("SubscriptionArn = %s", subEnv)
	}

	event := `{"caseId":1001,"eventType":"DOCUMENT_PROCESSED","eventDetail":"{\"x\":1}"}`
	pub, err := e.sns.Publish(e.ctx, &awssns.PublishInput{
		TopicArn: aws.String(topic), Message: aws.String(event), Subject: aws.String("hello <&>"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"kind":  {DataType: aws.String("String"), StringValue: aws.String("doc")},
			"count": {DataType: aws.String("Number"), StringValue: aws.String("3")},
			"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(pub.MessageId) == "" || pub.SequenceNumber != nil {
		t.Fatalf("Publish = %+v", pub)
	}

	// The envelope queue: SQS body → envelope → Message, as consumers do.
	msgs := e.receive(envURL, 10)
	if len(msgs) != 1 {
		t.Fatalf("envelope queue got %d messages", len(msgs))
	}
	body := aws.ToString(msgs[0].Body)
	var envlp map[string]any
	if err := json.Unmarshal([]byte(body), &envlp); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, body)
	}
	var inner map[string]any
	if err := json.Unmarshal([]byte(envlp["Message"].(string)), &inner); err != nil || inner["caseId"].(float64) != 1001 {
		t.Fatalf("Message = %v (%v)", envlp["Message"], err)
	}
	wantOrder := []string{"Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp", "SignatureVersion", "Signature", "SigningCertURL", "UnsubscribeURL", "MessageAttributes"}
	if got := keyOrder(t, body); strings.Join(got, ",") != strings.Join(wantOrder, ",") {
		t.Fatalf("field order = %v\n%s", got, body)
	}
	if envlp["Type"] != "Notification" || envlp["MessageId"] != aws.ToString(pub.MessageId) || envlp["TopicArn"] != topic ||
		envlp["Subject"] != "hello <&>" || envlp["SignatureVersion"] != "1" {
		t.Fatalf("envelope = %s", body)
	}
	if ts, err := time.Parse("2006-01-02T15:04:05.000Z", envlp["Timestamp"].(string)); err != nil || time.Since(ts) > time.Minute {
		t.Fatalf("Timestamp %v: %v", envlp["Timestamp"], err)
	}
	attrs := envlp["MessageAttributes"].(map[string]any)
	if fmt.Sprint(attrs["count"]) != "map[Type:Number Value:3]" || fmt.Sprint(attrs["blob"]) != "map[Type:Binary Value:AAEC]" {
		t.Fatalf("MessageAttributes = %v", attrs)
	}
	if !strings.Contains(envlp["UnsubscribeURL"].(string), "Action=Unsubscribe&SubscriptionArn=") {
		t.Fatalf("UnsubscribeURL = %v", envlp["UnsubscribeURL"])
	}
	verifySignature(t, envlp)

	// The raw queue: the message itself, attributes as SQS attributes.
	raw := e.receive(rawURL, 10)
	if len(raw) != 1 || aws.ToString(raw[0].Body) != event {
		t.Fatalf("raw queue got %+v", raw)
	}
	ma := raw[0].MessageAttributes
	if aws.ToString(ma["kind"].StringValue) != "doc" || aws.ToString(ma["count"].DataType) != "Number" || string(ma["blob"].BinaryValue) != "\x00\x01\x02" {
		t.Fatalf("raw attributes = %+v", ma)
	}

	// Unsubscribe through the envelope's URL (a GET, as a person would).
	resp, err := http.Get(envlp["UnsubscribeURL"].(string))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET UnsubscribeURL: %v %v", resp, err)
	}
	resp.Body.Close()
	subs, err := e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if err != nil || len(subs.Subscriptions) != 1 || aws.ToString(subs.Subscriptions[0].Endpoint) != rawARN {
		t.Fatalf("after unsubscribe: %+v %v", subs, err)
	}
}

// keyOrder returns the top-level keys of a JSON object in document order.
func keyOrder(t *testing.T, s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// verifySignature checks a notification as SNS clients do: fetch the
// certificate at SigningCertURL and verify SHA1withRSA over the string to
// sign (Subject only when present).
func verifySignature(t *testing.T, n map[string]any) {
	t.Helper()
	verifySigned(t, n, []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"})
}

// verifySigned verifies m's SHA1withRSA (SignatureVersion 1) or
// SHA256withRSA (2) Signature over keys (those present,
// in this order, as "key\nvalue\n") with the certificate served at
// SigningCertURL.
func verifySigned(t *testing.T, m map[string]any, keys []string) {
	t.Helper()
	resp, err := http.Get(m["SigningCertURL"].(string))
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		t.Fatalf("SigningCertURL did not serve a PEM: %q", pemBytes)
	}
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	var sts strings.Builder
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			sts.WriteString(k + "\n" + v + "\n")
		}
	}
	sig, _ := base64.StdEncoding.DecodeString(m["Signature"].(string))
	var err2 error
	if m["SignatureVersion"] == "2" { // SHA256withRSA
		h := sha256.Sum256([]byte(sts.String()))
		err2 = rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA256, h[:], sig)
	} else {
		h := sha1.Sum([]byte(sts.String()))
		err2 = rsa.VerifyPKCS1v15(cert.PublicKey.(*rsa.PublicKey), crypto.SHA1, h[:], sig)
	}
	if err := err2; err != nil {
		t.Fatalf("%s signature does not verify: %v", m["Type"], err)
	}
}

func TestFilterPolicyDelivery(t *testing.T) { onBothStores(t, checkFilterPolicyDelivery) }

func checkFilterPolicyDelivery(t *testing.T, e *env) {
	topic := e.topic("events", nil)
	allURL, allARN := e.queue("all", nil)
	redURL, redARN := e.queue("red", nil)
	bodyURL, bodyARN := e.queue("body", nil)
	e.subscribe(topic, allARN, nil)
	e.subscribe(topic, redARN, map[string]string{"FilterPolicy": `{"color":["red"],"size":[{"numeric":[">",2]}]}`})
	e.subscribe(topic, bodyARN, map[string]string{"FilterPolicy": `{"order":{"status":["paid"]}}`, "FilterPolicyScope": "MessageBody"})
	pub := func(msg, color, size string) {
		t.Helper()
		_, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(msg),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{
				"color": {DataType: aws.String("String"), StringValue: aws.String(color)},
				"size":  {DataType: aws.String("Number"), StringValue: aws.String(size)},
			}})
		if err != nil {
			t.Fatal(err)
		}
	}
	pub(`{"order":{"status":"paid"}}`, "red", "3")
	pub(`{"order":{"status":"new"}}`, "red", "1")
	pub(`plain`, "blue", "5")
	if n := len(e.receive(allURL, 10)); n != 3 {
		t.Fatalf("unfiltered queue got %d, want 3", n)
	}
	if n := len(e.receive(redURL, 10)); n != 1 {
		t.Fatalf("filtered queue got %d, want 1", n)
	}
	if n := len(e.receive(bodyURL, 10)); n != 1 {
		t.Fatalf("body-filtered queue got %d, want 1", n)
	}
	_, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(allARN + "x"), Attributes: map[string]string{"FilterPolicy": `{"a":"b"}`}})
	wantCode(t, err, "InvalidParameter")
}

func TestFIFOTopicKeepsGroupOrder(t *testing.T) { onBothStores(t, checkFIFOTopicKeepsGroupOrder) }

func checkFIFOTopicKeepsGroupOrder(t *testing.T, e *env) {
	topic := e.topic("orders.fifo", map[string]string{"FifoTopic": "true"})
	qURL, qARN := e.queue("orders.fifo", map[string]string{"FifoQueue": "true"})
	stdURL, stdARN := e.queue("audit", nil)
	e.subscribe(topic, qARN, map[string]string{"RawMessageDelivery": "true"})
	e.subscribe(topic, stdARN, nil)

	_, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x")})
	wantCode(t, err, "InvalidParameter") // no MessageGroupId
	_, err = e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), MessageGroupId: aws.String("g")})
	wantCode(t, err, "InvalidParameter") // no dedup id, no content-based dedup

	var seqs []string
	for i := range 6 {
		out, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(fmt.Sprintf("m%d", i)),
			MessageGroupId: aws.String(fmt.Sprintf("g%d", i%2)), MessageDeduplicationId: aws.String(fmt.Sprintf("d%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		if out.SequenceNumber == nil || len(seqs) > 0 && aws.ToString(out.SequenceNumber) <= seqs[len(seqs)-1] {
			t.Fatalf("SequenceNumber %v not increasing after %v", out.SequenceNumber, seqs)
		}
		seqs = append(seqs, aws.ToString(out.SequenceNumber))
	}
	// A duplicate is dropped by the FIFO queue's deduplication.
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m0"),
		MessageGroupId: aws.String("g0"), MessageDeduplicationId: aws.String("d0")}); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	total := 0
	for range 10 {
		out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(qURL), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"MessageGroupId", "MessageDeduplicationId"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			break
		}
		for _, m := range out.Messages {
			total++
			g := m.Attributes["MessageGroupId"]
			got[g] = append(got[g], aws.ToString(m.Body))
			if _, err := e.sqs.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(qURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if total != 6 || fmt.Sprint(got["g0"]) != "[m0 m2 m4]" || fmt.Sprint(got["g1"]) != "[m1 m3 m5]" {
		t.Fatalf("FIFO queue got %d: %v", total, got)
	}

	// The standard subscriber gets envelopes with SequenceNumber and no signature.
	msgs := e.receive(stdURL, 10)
	if len(msgs) == 0 {
		t.Fatal("standard queue got nothing")
	}
	body := aws.ToString(msgs[0].Body)
	if got := strings.Join(keyOrder(t, body), ","); got != "Type,MessageId,SequenceNumber,TopicArn,Message,Timestamp,UnsubscribeURL" {
		t.Fatalf("FIFO envelope fields = %s\n%s", got, body)
	}
}

func TestTopicAndSubscriptionAdmin(t *testing.T) { onBothStores(t, checkTopicAndSubscriptionAdmin) }

func checkTopicAndSubscriptionAdmin(t *testing.T, e *env) {
	a := e.topic("a", map[string]string{"DisplayName": "A"})
	b := e.topic("b", nil)
	_, qARN := e.queue("q", nil)
	sub := e.subscribe(a, qARN, nil)

	lt, err := e.sns.ListTopics(e.ctx, &awssns.ListTopicsInput{})
	if err != nil || len(lt.Topics) != 2 || aws.ToString(lt.Topics[0].TopicArn) != a || aws.ToString(lt.Topics[1].TopicArn) != b {
		t.Fatalf("ListTopics = %+v %v", lt, err)
	}
	if _, err := e.sns.SetTopicAttributes(e.ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(b),
		AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("Bee")}); err != nil {
		t.Fatal(err)
	}
	ga, err := e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(b)})
	if err != nil || ga.Attributes["DisplayName"] != "Bee" || ga.Attributes["TopicArn"] != b || ga.Attributes["Owner"] != account {
		t.Fatalf("GetTopicAttributes = %v %v", ga, err)
	}
	fifo := e.topic("f.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
	fa, err := e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(fifo)})
	if err != nil || fa.Attributes["FifoTopic"] != "true" || fa.Attributes["ContentBasedDeduplication"] != "true" {
		t.Fatalf("FIFO GetTopicAttributes = %v %v", fa, err)
	}
	_, err = e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String("bad name")})
	wantCode(t, err, "InvalidParameter")
	_, err = e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(b), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:" + account + ":x.fifo")})
	wantCode(t, err, "InvalidParameter") // FIFO queue on a standard topic

	sa, err := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if err != nil || sa.Attributes["PendingConfirmation"] != "false" || sa.Attributes["RawMessageDelivery"] != "false" ||
		sa.Attributes["Endpoint"] != qARN || sa.Attributes["TopicArn"] != a {
		t.Fatalf("GetSubscriptionAttributes = %v %v", sa, err)
	}
	if _, err := e.sns.SetSubscriptionAttributes(e.ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("true")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.SetSubscriptionAttributes(e.ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(`{"a":[{"bogus":1}]}`)})
	wantCode(t, err, "InvalidParameter")
	sa, _ = e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if sa.Attributes["RawMessageDelivery"] != "true" || sa.Attributes["FilterPolicy"] != "" {
		t.Fatalf("after SetSubscriptionAttributes: %v", sa.Attributes)
	}
	ls, err := e.sns.ListSubscriptions(e.ctx, &awssns.ListSubscriptionsInput{})
	if err != nil || len(ls.Subscriptions) != 1 || aws.ToString(ls.Subscriptions[0].SubscriptionArn) != sub || aws.ToString(ls.Subscriptions[0].Owner) != account {
		t.Fatalf("ListSubscriptions = %+v %v", ls, err)
	}

	// Errors: NotFound for missing things, InvalidParameter for bad ARNs.
	missing := "arn:aws:sns:us-east-1:" + account + ":nope"
	_, err = e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(missing), Message: aws.String("x")})
	wantCode(t, err, "NotFound")
	var nf *snstypes.NotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("want a NotFoundException, got %T", err)
	}
	_, err = e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String("nope")})
	wantCode(t, err, "InvalidParameter")
	_, err = e.sns.ListSubscriptionsByTopic(e.ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: aws.String(missing)})
	wantCode(t, err, "NotFound")
	// Unsubscribe is idempotent on AWS: an unknown subscription is success.
	if _, err = e.sns.Unsubscribe(e.ctx, &awssns.UnsubscribeInput{SubscriptionArn: aws.String(a + ":nope")}); err != nil {
		t.Fatalf("Unsubscribe of an unknown subscription: %v", err)
	}

	if _, err := e.sns.Unsubscribe(e.ctx, &awssns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.DeleteTopic(e.ctx, &awssns.DeleteTopicInput{TopicArn: aws.String(a)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.DeleteTopic(e.ctx, &awssns.DeleteTopicInput{TopicArn: aws.String(a)}); err != nil {
		t.Fatalf("deleting a missing topic: %v", err)
	}
	lt, _ = e.sns.ListTopics(e.ctx, &awssns.ListTopicsInput{})
	if len(lt.Topics) != 2 {
		t.Fatalf("after DeleteTopic: %+v", lt.Topics)
	}
}

func TestPublishBatch(t *testing.T) { onBothStores(t, checkPublishBatch) }

func checkPublishBatch(t *testing.T, e *env) {
	topic := e.topic("batch.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
	qURL, qARN := e.queue("batch.fifo", map[string]string{"FifoQueue": "true"})
	e.subscribe(topic, qARN, map[string]string{"RawMessageDelivery": "true"})
	// An entry without a group fails the whole request, as on AWS.
	_, err := e.sns.PublishBatch(e.ctx, &awssns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("one"), Message: aws.String("1"), MessageGroupId: aws.String("g")},
		{Id: aws.String("two"), Message: aws.String("2")},
	}})
	wantCode(t, err, "InvalidParameter")
	if msgs := e.receive(qURL, 10); len(msgs) != 0 {
		t.Fatalf("a refused batch delivered %d messages", len(msgs))
	}
	out, err := e.sns.PublishBatch(e.ctx, &awssns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("one"), Message: aws.String("1"), MessageGroupId: aws.String("g")},
		{Id: aws.String("three"), Message: aws.String("3"), MessageGroupId: aws.String("g"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || len(out.Failed) != 0 || aws.ToString(out.Successful[0].SequenceNumber) == "" {
		t.Fatalf("PublishBatch = %+v", out)
	}
	msgs := e.receive(qURL, 10)
	if len(msgs) != 2 || aws.ToString(msgs[0].Body) != "1" || aws.ToString(msgs[1].Body) != "3" ||
		aws.ToString(msgs[1].MessageAttributes["k"].StringValue) != "v" {
		t.Fatalf("queue got %+v", msgs)
	}
	_, err = e.sns.PublishBatch(e.ctx, &awssns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("x"), Message: aws.String("1")}, {Id: aws.String("x"), Message: aws.String("2")},
	}})
	wantCode(t, err, "BatchEntryIdsNotDistinct")
}

func TestRouting(t *testing.T) {
	e := newEnv(t)
	// SQS over JSON and Query still reach the SQS handler.
	qURL, _ := e.queue("plain", nil)
	if _, err := e.sqs.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(qURL), MessageBody: aws.String("hi")}); err != nil {
		t.Fatal(err)
	}
	post := func(form string) (int, string) {
		resp, err := http.Post(e.srv.URL+"/", "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("Action=ListQueues&Version=2012-11-05"); code != 200 || !strings.Contains(body, "ListQueuesResponse") || !strings.Contains(body, "plain") {
		t.Fatalf("SQS Query ListQueues: %d %s", code, body)
	}
	if code, body := post("Action=ListTopics&Version=2010-03-31"); code != 200 || !strings.Contains(body, `<ListTopicsResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">`) {
		t.Fatalf("SNS ListTopics: %d %s", code, body)
	}
	if code, body := post("Action=GetTopicAttributes&TopicArn=arn:aws:sns:us-east-1:" + account + ":none"); code != 404 ||
		!strings.Contains(body, "<ErrorResponse") || !strings.Contains(body, "<Code>NotFound</Code>") || !strings.Contains(body, "<Type>Sender</Type>") {
		t.Fatalf("SNS NotFound: %d %s", code, body)
	}
	if code, body := post("Action=NoSuchAction"); code != 400 || !strings.Contains(body, "InvalidAction") {
		t.Fatalf("unknown action: %d %s", code, body)
	}
	// A large form body is peeked at and handed on whole.
	big := "Action=SendMessage&QueueUrl=" + qURL + "&MessageBody=" + strings.Repeat("x", apisns.MaxPeekBytes)
	if code, body := post(big); code != 200 {
		t.Fatalf("large SQS request: %d %.300s", code, body)
	}
	found := false
	for _, m := range e.receive(qURL, 10) {
		found = found || len(aws.ToString(m.Body)) == apisns.MaxPeekBytes
	}
	if !found {
		t.Fatal("the large message did not arrive whole")
	}
	resp, err := http.Get(e.srv.URL + sns.CertPath)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("certificate: %v %v", resp, err)
	}
	resp.Body.Close()
}
