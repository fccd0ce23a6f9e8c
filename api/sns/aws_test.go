package sns_test

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func attributeNames(m map[string]string) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// TestAttributeShapes: the attributes AWS returns, and only those
// (recorded on AWS): no EffectiveDeliveryPolicy for an SQS subscription,
// FilterPolicyScope only with a FilterPolicy, no FifoThroughputScope on a
// FIFO topic that never set it.
func TestAttributeShapes(t *testing.T) { checkAttributeShapes(t, newEnv(t)) }

func checkAttributeShapes(t *testing.T, e *env) {
	topic := e.topic("shapes", nil)
	fifo := e.topic("shapes.fifo", map[string]string{"FifoTopic": "true"})
	_, qARN := e.queue("shapes", nil)
	_, q2ARN := e.queue("shapes-2", nil)
	plain := e.subscribe(topic, qARN, nil)
	filtered := e.subscribe(topic, q2ARN, map[string]string{"FilterPolicy": `{"a":["b"]}`})
	const sqsAttrs = "ConfirmationWasAuthenticated,Endpoint,Owner,PendingConfirmation,Protocol,RawMessageDelivery,SubscriptionArn,SubscriptionPrincipal,TopicArn"
	for _, c := range []struct{ sub, want string }{
		{plain, sqsAttrs},
		{filtered, "ConfirmationWasAuthenticated,Endpoint,FilterPolicy,FilterPolicyScope,Owner,PendingConfirmation,Protocol,RawMessageDelivery,SubscriptionArn,SubscriptionPrincipal,TopicArn"},
	} {
		out, err := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(c.sub)})
		if err != nil {
			t.Fatal(err)
		}
		if got := attributeNames(out.Attributes); got != c.want {
			t.Errorf("subscription attributes:\n got %s\nwant %s", got, c.want)
		}
	}
	// A scope without a policy is not shown.
	if _, err := e.sns.SetSubscriptionAttributes(e.ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(plain),
		AttributeName: aws.String("FilterPolicyScope"), AttributeValue: aws.String("MessageBody")}); err != nil {
		t.Fatal(err)
	}
	out, err := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(plain)})
	if err != nil || attributeNames(out.Attributes) != sqsAttrs {
		t.Errorf("with a scope and no policy: %v, %v", attributeNames(out.Attributes), err)
	}
	ta, err := e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(fifo)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := attributeNames(ta.Attributes), "ContentBasedDeduplication,DisplayName,EffectiveDeliveryPolicy,FifoTopic,Owner,Policy,SubscriptionsConfirmed,SubscriptionsDeleted,SubscriptionsPending,TopicArn"; got != want {
		t.Errorf("FIFO topic attributes:\n got %s\nwant %s", got, want)
	}
	// Once set, FifoThroughputScope is shown.
	if _, err := e.sns.SetTopicAttributes(e.ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(fifo),
		AttributeName: aws.String("FifoThroughputScope"), AttributeValue: aws.String("MessageGroup")}); err != nil {
		t.Fatal(err)
	}
	ta, err = e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(fifo)})
	if err != nil || ta.Attributes["FifoThroughputScope"] != "MessageGroup" {
		t.Errorf("FifoThroughputScope after setting it: %q, %v", ta.Attributes["FifoThroughputScope"], err)
	}
}

// TestSubscribeIdempotent: subscribing the same endpoint again with the
// attributes left out, empty or at their defaults returns the same
// subscription; different attributes are refused.
func TestSubscribeIdempotent(t *testing.T) { checkSubscribeIdempotent(t, newEnv(t)) }

func checkSubscribeIdempotent(t *testing.T, e *env) {
	topic := e.topic("idem", nil)
	_, qARN := e.queue("idem", nil)
	first := e.subscribe(topic, qARN, map[string]string{"FilterPolicy": `{"a":["b"]}`})
	for _, attrs := range []map[string]string{nil, {},
		{"FilterPolicy": `{"a":["b"]}`, "FilterPolicyScope": "MessageAttributes", "RawMessageDelivery": "false"}} {
		if again := e.subscribe(topic, qARN, attrs); again != first {
			t.Errorf("Subscribe with %v: %s, want %s", attrs, again, first)
		}
	}
	_, q2ARN := e.queue("idem-2", nil)
	second := e.subscribe(topic, q2ARN, nil)
	if again := e.subscribe(topic, q2ARN, map[string]string{"RawMessageDelivery": "false"}); again != second {
		t.Errorf("Subscribe with RawMessageDelivery false: %s, want %s", again, second)
	}
	_, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(qARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"}})
	wantCode(t, err, "InvalidParameter")
}

// TestTraceHeaderAndFIFOToStandard: the publish's X-Ray header reaches SQS
// as AWSTraceHeader; a standard queue subscribed to a FIFO topic may have
// a standard dead-letter queue and gets no MessageGroupId.
func TestTraceHeaderAndFIFOToStandard(t *testing.T) { checkTraceHeaderAndFIFOToStandard(t, newEnv(t)) }

func checkTraceHeaderAndFIFOToStandard(t *testing.T, e *env) {
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	fifo := e.topic("mixed.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
	qURL, qARN := e.queue("mixed-std", nil)
	_, dlqARN := e.queue("mixed-std-dlq", nil)
	e.subscribe(fifo, qARN, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqARN + `"}`, "RawMessageDelivery": "true"})
	_, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(fifo), Message: aws.String("m"), MessageGroupId: aws.String("g")},
		func(o *awssns.Options) {
			o.APIOptions = append(o.APIOptions, addHeader("X-Amzn-Trace-Id", trace))
		})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(qURL), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("ReceiveMessage: %+v, %v", out, err)
	}
	attrs := out.Messages[0].Attributes
	if attrs["AWSTraceHeader"] != trace {
		t.Errorf("AWSTraceHeader = %q, want %q", attrs["AWSTraceHeader"], trace)
	}
	if g, ok := attrs["MessageGroupId"]; ok {
		t.Errorf("a standard queue behind a FIFO topic got MessageGroupId %q", g)
	}
}

// TestTraceHeaderOnEveryPath: the X-Ray header reaches SQS as
// AWSTraceHeader whichever way a standard topic's publish goes: straight
// to its one queue, into several queues in one write, as an envelope or
// raw, and from a PublishBatch.
func TestTraceHeaderOnEveryPath(t *testing.T) { checkTraceHeaderOnEveryPath(t, newEnv(t)) }

func checkTraceHeaderOnEveryPath(t *testing.T, e *env) {
	const trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
	withTrace := func(o *awssns.Options) { o.APIOptions = append(o.APIOptions, addHeader("X-Amzn-Trace-Id", trace)) }
	one := e.topic("trace-one", nil)
	oneURL, oneARN := e.queue("trace-one", nil)
	e.subscribe(one, oneARN, nil)
	fan := e.topic("trace-fan", nil)
	var fanURLs []string
	for i, raw := range []string{"false", "true", "false"} {
		u, arn := e.queue("trace-fan-"+strconv.Itoa(i), nil)
		fanURLs = append(fanURLs, u)
		e.subscribe(fan, arn, map[string]string{"RawMessageDelivery": raw})
	}
	check := func(what, url string, want int) {
		t.Helper()
		out, err := e.sqs.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil || len(out.Messages) != want {
			t.Fatalf("%s: ReceiveMessage: %d messages, want %d (%v)", what, len(out.Messages), want, err)
		}
		for _, m := range out.Messages {
			if got := m.Attributes["AWSTraceHeader"]; got != trace {
				t.Errorf("%s: AWSTraceHeader = %q, want %q", what, got, trace)
			}
		}
	}
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(one), Message: aws.String("m")}, withTrace); err != nil {
		t.Fatal(err)
	}
	check("one queue", oneURL, 1)
	if _, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(fan), Message: aws.String("m")}, withTrace); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.PublishBatch(e.ctx, &awssns.PublishBatchInput{TopicArn: aws.String(fan), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("a"), Message: aws.String("m")}, {Id: aws.String("b"), Message: aws.String("m")}}}, withTrace); err != nil {
		t.Fatal(err)
	}
	for i, u := range fanURLs {
		check("fan-out queue "+strconv.Itoa(i), u, 3)
	}
}

// TestConfirmOnMissingTopic: a valid token confirms its subscription even
// when the TopicArn names a topic of this region that does not exist.
func TestConfirmOnMissingTopic(t *testing.T) { checkConfirmOnMissingTopic(t, newEnv(t)) }

func checkConfirmOnMissingTopic(t *testing.T, e *env) {
	h := newHook(t, nil)
	topic := e.topic("confirm-missing", nil)
	if _, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"),
		Endpoint: aws.String(h.srv.URL + "/hook")}); err != nil {
		t.Fatal(err)
	}
	c := jsonBody(t, h.next(t))
	out, err := e.sns.ConfirmSubscription(e.ctx, &awssns.ConfirmSubscriptionInput{TopicArn: aws.String(topic + "-nope"), Token: aws.String(c["Token"].(string))})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: out.SubscriptionArn})
	if err != nil || a.Attributes["PendingConfirmation"] != "false" {
		t.Fatalf("after confirming: %v, %v", a, err)
	}
}

// TestPermissions: AddPermission and RemovePermission are SNS actions that
// edit the topic's Policy.
func TestPermissions(t *testing.T) { checkPermissions(t, newEnv(t)) }

func checkPermissions(t *testing.T, e *env) {
	topic := e.topic("perm", nil)
	if _, err := e.sns.AddPermission(e.ctx, &awssns.AddPermissionInput{TopicArn: aws.String(topic), Label: aws.String("pub"),
		AWSAccountId: []string{"111122223333"}, ActionName: []string{"Publish"}}); err != nil {
		t.Fatal(err)
	}
	policy := func() string {
		out, err := e.sns.GetTopicAttributes(e.ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Statement []map[string]any }
		if err := json.Unmarshal([]byte(out.Attributes["Policy"]), &doc); err != nil {
			t.Fatal(err)
		}
		var sids []string
		for _, s := range doc.Statement {
			b, _ := json.Marshal(s)
			sids = append(sids, string(b))
		}
		return strings.Join(sids, "\n")
	}
	if got := policy(); !strings.Contains(got, `"Sid":"__default_statement_ID"`) ||
		!strings.Contains(got, `{"Action":["SNS:Publish"],"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::111122223333:root"]},"Resource":"`+topic+`","Sid":"pub"}`) {
		t.Fatalf("policy after AddPermission:\n%s", got)
	}
	if _, err := e.sns.RemovePermission(e.ctx, &awssns.RemovePermissionInput{TopicArn: aws.String(topic), Label: aws.String("pub")}); err != nil {
		t.Fatal(err)
	}
	if got := policy(); strings.Contains(got, `"pub"`) || !strings.Contains(got, "__default_statement_ID") {
		t.Fatalf("policy after RemovePermission:\n%s", got)
	}
}

// addHeader sets a request header, as a client that propagates an X-Ray
// trace does.
func addHeader(k, v string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Build.Add(middleware.BuildMiddlewareFunc("addHeader", func(ctx context.Context, in middleware.BuildInput, next middleware.BuildHandler) (middleware.BuildOutput, middleware.Metadata, error) {
			if r, ok := in.Request.(*smithyhttp.Request); ok {
				r.Header.Set(k, v)
			}
			return next.HandleBuild(ctx, in)
		}), middleware.After)
	}
}

// storeChecks are the checks of this file whose behaviour goes through the
// store or the broker: they run on PostgreSQL too (postgres_test.go).
var storeChecks = map[string]func(*testing.T, *env){
	"AttributeShapes": checkAttributeShapes, "SubscribeIdempotent": checkSubscribeIdempotent,
	"TraceHeaderAndFIFOToStandard": checkTraceHeaderAndFIFOToStandard, "TraceHeaderOnEveryPath": checkTraceHeaderOnEveryPath, "ConfirmOnMissingTopic": checkConfirmOnMissingTopic,
	"Permissions": checkPermissions,
}
