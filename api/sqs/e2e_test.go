package sqs_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// End-to-end tests: the official aws-sdk-go-v2 SQS client (message checksum
// validation on, no retries) against the handler over the real engine.

const account = "000000000000"

type env struct {
	t      *testing.T
	clk    *clocktest.Clock
	eng    *engine.Engine
	srv    *httptest.Server
	client *awssqs.Client
	ctx    context.Context
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, Region: "us-east-1", AccountID: account, SweepInterval: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: eng, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(func() {
		srv.Close()
		_ = eng.Close()
	})
	return &env{t: t, clk: clk, eng: eng, srv: srv, client: newClient(srv.URL), ctx: context.Background()}
}

func newClient(endpoint string) *awssqs.Client {
	return awssqs.New(awssqs.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer:      retry.AddWithMaxAttempts(retry.NewStandard(), 1),
	})
}

func (e *env) createQueue(name string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.client.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		e.t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// wantAPIError checks that err is an API error with the given legacy code
// (what ErrorCode() reports against AWS) and, when target is not nil, that
// errors.As resolves the modeled type.
func wantAPIError[T error](t *testing.T, err error, code string, target *T) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want API error %s, got %v", code, err)
	}
	if apiErr.ErrorCode() != code {
		t.Errorf("ErrorCode() = %q, want %q (%v)", apiErr.ErrorCode(), code, err)
	}
	if target != nil && !errors.As(err, target) {
		t.Errorf("errors.As(%T) failed for %v", *target, err)
	}
}

func TestSDKErrorMapping(t *testing.T) {
	e := newEnv(t)
	_, err := e.client.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var qdne *types.QueueDoesNotExist
	wantAPIError(t, err, "AWS.SimpleQueueService.NonExistentQueue", &qdne)
	if qdne.ErrorMessage() != tidemq.MsgQueueDoesNotExist.Text || qdne.ErrorFault() != smithy.FaultClient {
		t.Errorf("message %q fault %v", qdne.ErrorMessage(), qdne.ErrorFault())
	}
	// Unmodeled errors come back as GenericAPIError with the legacy code
	// and the fault from x-amzn-query-error.
	url := e.createQueue("q", nil)
	_, err = e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 11})
	var generic *smithy.GenericAPIError
	wantAPIError(t, err, "InvalidParameterValue", &generic)
	if generic.Message != "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided." ||
		generic.Fault != smithy.FaultClient {
		t.Errorf("%+v", generic)
	}
	_, err = e.client.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: aws.String("garbage")})
	var rhi *types.ReceiptHandleIsInvalid
	wantAPIError(t, err, "ReceiptHandleIsInvalid", &rhi)
	// The move-task actions: q is no dead-letter queue, nope does not
	// exist (ResourceNotFoundException is modeled), x is no task handle.
	_, err = e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:q")})
	wantAPIError(t, err, "InvalidParameterValue", &generic)
	if generic.Message != "Source queue must be configured as a Dead Letter Queue." {
		t.Errorf("StartMessageMoveTask on a queue that is no DLQ: %q", generic.Message)
	}
	_, err = e.client.ListMessageMoveTasks(e.ctx, &awssqs.ListMessageMoveTasksInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:nope")})
	var notFound *types.ResourceNotFoundException
	wantAPIError(t, err, "ResourceNotFoundException", &notFound)
	if notFound.ErrorMessage() != "The resource that you specified for the SourceArn parameter doesn't exist." || notFound.ErrorFault() != smithy.FaultClient {
		t.Errorf("message %q fault %v", notFound.ErrorMessage(), notFound.ErrorFault())
	}
	_, err = e.client.CancelMessageMoveTask(e.ctx, &awssqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("x")})
	wantAPIError(t, err, "InvalidParameterValue", &generic)
	if generic.Message != "Value for parameter TaskHandle is invalid." {
		t.Errorf("CancelMessageMoveTask with a bad handle: %q", generic.Message)
	}
}

func TestSDKQueueActions(t *testing.T) {
	e := newEnv(t)
	out, err := e.client.CreateQueue(e.ctx, &awssqs.CreateQueueInput{
		QueueName:  aws.String("orders"),
		Attributes: map[string]string{"VisibilityTimeout": "60", "DelaySeconds": "1"},
		Tags:       map[string]string{"team": "payments"},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(out.QueueUrl)
	if want := e.srv.URL + "/" + account + "/orders"; url != want {
		t.Errorf("QueueUrl %s, want %s", url, want)
	}
	// Idempotent create; a different attribute is QueueNameExists.
	e.createQueue("orders", map[string]string{"VisibilityTimeout": "60"})
	_, err = e.client.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders"), Attributes: map[string]string{"VisibilityTimeout": "61"}})
	var exists *types.QueueNameExists
	wantAPIError(t, err, "QueueAlreadyExists", &exists)
	_, err = e.client.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String("bad name")})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)

	got, err := e.client.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String(account)})
	if err != nil || aws.ToString(got.QueueUrl) != url {
		t.Errorf("GetQueueUrl: %v %v", got, err)
	}
	_, err = e.client.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String("123456789012")})
	var qdne *types.QueueDoesNotExist
	wantAPIError(t, err, "AWS.SimpleQueueService.NonExistentQueue", &qdne)

	// Queue URLs with any host, and bare names, resolve; another account does not.
	for _, u := range []string{url, "https://sqs.us-east-1.amazonaws.com/" + account + "/orders", "orders"} {
		if _, err := e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(u)}); err != nil {
			t.Errorf("GetQueueAttributes(%s): %v", u, err)
		}
	}
	_, err = e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String("http://x/123456789012/orders")})
	wantAPIError(t, err, "AWS.SimpleQueueService.NonExistentQueue", &qdne)

	attrs, err := e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if attrs.Attributes["VisibilityTimeout"] != "60" || attrs.Attributes["QueueArn"] != "arn:aws:sqs:us-east-1:000000000000:orders" {
		t.Errorf("attributes %v", attrs.Attributes)
	}
	none, err := e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &url})
	if err != nil || len(none.Attributes) != 0 {
		t.Errorf("no names: %v %v", none.Attributes, err)
	}
	_, err = e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"Bogus"}})
	var badName *types.InvalidAttributeName
	wantAPIError(t, err, "InvalidAttributeName", &badName)
	if badName.ErrorMessage() != "Unknown Attribute Bogus." {
		t.Errorf("message %q", badName.ErrorMessage())
	}

	if _, err := e.client.SetQueueAttributes(e.ctx, &awssqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"DelaySeconds": "0"}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.SetQueueAttributes(e.ctx, &awssqs.SetQueueAttributesInput{QueueUrl: &url, Attributes: map[string]string{"DelaySeconds": "901"}})
	var badValue *types.InvalidAttributeValue
	wantAPIError(t, err, "InvalidAttributeValue", &badValue)

	// Tags.
	if _, err := e.client.TagQueue(e.ctx, &awssqs.TagQueueInput{QueueUrl: &url, Tags: map[string]string{"env": "prod"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := e.client.ListQueueTags(e.ctx, &awssqs.ListQueueTagsInput{QueueUrl: &url})
	if err != nil || len(tags.Tags) != 2 || tags.Tags["team"] != "payments" || tags.Tags["env"] != "prod" {
		t.Errorf("tags %v %v", tags, err)
	}
	if _, err := e.client.UntagQueue(e.ctx, &awssqs.UntagQueueInput{QueueUrl: &url, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, _ = e.client.ListQueueTags(e.ctx, &awssqs.ListQueueTagsInput{QueueUrl: &url})
	if len(tags.Tags) != 1 {
		t.Errorf("tags after untag %v", tags.Tags)
	}

	// Permissions.
	if _, err := e.client.AddPermission(e.ctx, &awssqs.AddPermissionInput{QueueUrl: &url, Label: aws.String("p1"),
		AWSAccountIds: []string{"111122223333"}, Actions: []string{"SendMessage"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.RemovePermission(e.ctx, &awssqs.RemovePermissionInput{QueueUrl: &url, Label: aws.String("p1")}); err != nil {
		t.Fatal(err)
	}

	// Listing and paging.
	e.createQueue("orders-dlq", nil)
	e.createQueue("other", nil)
	list, err := e.client.ListQueues(e.ctx, &awssqs.ListQueuesInput{QueueNamePrefix: aws.String("orders")})
	if err != nil || len(list.QueueUrls) != 2 || list.NextToken != nil {
		t.Errorf("prefix listing %v %v", list, err)
	}
	var paged []string
	var token *string
	for range 5 {
		page, err := e.client.ListQueues(e.ctx, &awssqs.ListQueuesInput{MaxResults: aws.Int32(1), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page.QueueUrls...)
		if token = page.NextToken; token == nil {
			break
		}
	}
	if len(paged) != 3 {
		t.Errorf("paged listing %v", paged)
	}
	_, err = e.client.ListQueues(e.ctx, &awssqs.ListQueuesInput{MaxResults: aws.Int32(1001)})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)

	// Dead-letter sources.
	dlqArn := "arn:aws:sqs:us-east-1:000000000000:orders-dlq"
	if _, err := e.client.SetQueueAttributes(e.ctx, &awssqs.SetQueueAttributesInput{QueueUrl: &url,
		Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":"3"}`}}); err != nil {
		t.Fatal(err)
	}
	src, err := e.client.ListDeadLetterSourceQueues(e.ctx, &awssqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(e.srv.URL + "/" + account + "/orders-dlq")})
	if err != nil || len(src.QueueUrls) != 1 || src.QueueUrls[0] != url {
		t.Errorf("dead-letter sources %v %v", src, err)
	}

	// Purge and delete.
	if _, err := e.client.PurgeQueue(e.ctx, &awssqs.PurgeQueueInput{QueueUrl: &url}); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.PurgeQueue(e.ctx, &awssqs.PurgeQueueInput{QueueUrl: &url})
	var inProgress *types.PurgeQueueInProgress
	wantAPIError(t, err, "AWS.SimpleQueueService.PurgeQueueInProgress", &inProgress)
	if _, err := e.client.DeleteQueue(e.ctx, &awssqs.DeleteQueueInput{QueueUrl: &url}); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x")})
	wantAPIError(t, err, "AWS.SimpleQueueService.NonExistentQueue", &qdne)
}

func TestSDKSendReceiveDelete(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	attrs := map[string]types.MessageAttributeValue{
		"MyAttribute": {DataType: aws.String("String"), StringValue: aws.String("foobar")},
		"n":           {DataType: aws.String("Number.int"), StringValue: aws.String("6")},
		"bin":         {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 0xfe, 0xff}},
	}
	trace := "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	sent, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{
		QueueUrl: &url, MessageBody: aws.String("hello <&> \"world\"\r\n"), MessageAttributes: attrs,
		MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: &trace},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	domainAttrs := map[string]tidemq.MessageAttributeValue{
		"MyAttribute": {DataType: "String", StringValue: "foobar"},
		"n":           {DataType: "Number.int", StringValue: "6"},
		"bin":         {DataType: "Binary", BinaryValue: []byte{0, 1, 0xfe, 0xff}},
	}
	if aws.ToString(sent.MD5OfMessageAttributes) != tidemq.MD5OfAttributes(domainAttrs) {
		t.Errorf("MD5OfMessageAttributes %s", aws.ToString(sent.MD5OfMessageAttributes))
	}
	// The AWS-validated vector of §3.
	if got := aws.ToString(sent.MD5OfMessageSystemAttributes); got != "5ae4d5d7636402d80f4eb6d213245a88" {
		t.Errorf("MD5OfMessageSystemAttributes %s", got)
	}
	if sent.MessageId == nil || sent.SequenceNumber != nil {
		t.Errorf("MessageId %v SequenceNumber %v", sent.MessageId, sent.SequenceNumber)
	}
	// No attributes: no attribute digests.
	plain, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("plain")})
	if err != nil || plain.MD5OfMessageAttributes != nil || plain.MD5OfMessageSystemAttributes != nil {
		t.Errorf("plain send %+v %v", plain, err)
	}

	recv, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{
		QueueUrl: &url, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(recv.Messages) != 2 {
		t.Fatalf("received %d messages", len(recv.Messages))
	}
	var m types.Message
	for _, x := range recv.Messages {
		if aws.ToString(x.MessageId) == aws.ToString(sent.MessageId) {
			m = x
		}
	}
	if aws.ToString(m.Body) != "hello <&> \"world\"\r\n" {
		t.Errorf("body %q", aws.ToString(m.Body))
	}
	if aws.ToString(m.MD5OfMessageAttributes) != tidemq.MD5OfAttributes(domainAttrs) || len(m.MessageAttributes) != 3 ||
		string(m.MessageAttributes["bin"].BinaryValue) != "\x00\x01\xfe\xff" {
		t.Errorf("message attributes %v md5 %s", m.MessageAttributes, aws.ToString(m.MD5OfMessageAttributes))
	}
	sentMs := "1700000000000"
	for k, want := range map[string]string{"SenderId": "AKIDTEST", "SentTimestamp": sentMs, "ApproximateReceiveCount": "1",
		"ApproximateFirstReceiveTimestamp": sentMs, "AWSTraceHeader": trace} {
		if got := m.Attributes[k]; got != want {
			t.Errorf("attribute %s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []types.MessageSystemAttributeName{"SequenceNumber", "MessageGroupId", "MessageDeduplicationId", "DeadLetterQueueSourceArn"} {
		if _, ok := m.Attributes[string(k)]; ok {
			t.Errorf("standard queue message has %s", k)
		}
	}

	// Nothing visible now: an empty receive.
	empty, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url})
	if err != nil || len(empty.Messages) != 0 {
		t.Errorf("empty receive %v %v", empty, err)
	}
	// Visibility back to 0, then the message is there again, asking only
	// for a prefix of attributes and one system attribute.
	if _, err := e.client.ChangeMessageVisibility(e.ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	again, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url,
		AttributeNames: []types.QueueAttributeName{"ApproximateReceiveCount"}, MessageAttributeNames: []string{"My.*", "n"}})
	if err != nil || len(again.Messages) != 1 {
		t.Fatalf("receive again: %v %v", again, err)
	}
	a := again.Messages[0]
	// "My.*" selects every name starting with "My", as SQS does.
	if len(a.Attributes) != 1 || a.Attributes["ApproximateReceiveCount"] != "2" || len(a.MessageAttributes) != 2 ||
		a.MessageAttributes["n"].StringValue == nil || a.MessageAttributes["MyAttribute"].StringValue == nil {
		t.Errorf("selected attributes %v %v", a.Attributes, a.MessageAttributes)
	}
	if want := tidemq.MD5OfAttributes(map[string]tidemq.MessageAttributeValue{"n": domainAttrs["n"], "MyAttribute": domainAttrs["MyAttribute"]}); aws.ToString(a.MD5OfMessageAttributes) != want {
		t.Errorf("digest over returned attributes: %s want %s", aws.ToString(a.MD5OfMessageAttributes), want)
	}
	if _, err := e.client.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: a.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	// Parameter errors.
	for _, in := range []*awssqs.ReceiveMessageInput{
		{QueueUrl: &url, MaxNumberOfMessages: 11}, {QueueUrl: &url, WaitTimeSeconds: 21}, {QueueUrl: &url, VisibilityTimeout: 43201},
	} {
		_, err := e.client.ReceiveMessage(e.ctx, in)
		wantAPIError[error](t, err, "InvalidParameterValue", nil)
	}
	_, err = e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("bad \x01 char")})
	var contents *types.InvalidMessageContents
	wantAPIError(t, err, "InvalidMessageContents", &contents)
	_, err = e.client.ChangeMessageVisibility(e.ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: &url, ReceiptHandle: aws.String("nope"), VisibilityTimeout: 5})
	var rhi *types.ReceiptHandleIsInvalid
	wantAPIError(t, err, "ReceiptHandleIsInvalid", &rhi)
}

func TestSDKLongPoll(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	done := make(chan *awssqs.ReceiveMessageOutput, 1)
	go func() {
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, WaitTimeSeconds: 20})
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	if !e.clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the long poll never waited")
	}
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("late")}); err != nil {
		t.Fatal(err)
	}
	select {
	case out := <-done:
		if out == nil || len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "late" {
			t.Errorf("long poll got %+v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("long poll did not return")
	}
}

func TestSDKBatches(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	sent, err := e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("ok1"), MessageBody: aws.String("one"), MessageAttributes: map[string]types.MessageAttributeValue{
			"a": {DataType: aws.String("String"), StringValue: aws.String("x")}}},
		{Id: aws.String("bad"), MessageBody: aws.String("two"), MessageAttributes: map[string]types.MessageAttributeValue{
			"AWS.reserved": {DataType: aws.String("String"), StringValue: aws.String("x")}}},
		{Id: aws.String("ok2"), MessageBody: aws.String("three"), DelaySeconds: 0},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Successful) != 2 || len(sent.Failed) != 1 {
		t.Fatalf("successful %d failed %d", len(sent.Successful), len(sent.Failed))
	}
	f := sent.Failed[0]
	if aws.ToString(f.Id) != "bad" || !f.SenderFault || aws.ToString(f.Code) != "InvalidParameterValue" || f.Message == nil {
		t.Errorf("failed entry %+v", f)
	}
	for _, s := range sent.Successful {
		if s.MessageId == nil || s.MD5OfMessageBody == nil {
			t.Errorf("successful entry %+v", s)
		}
		if aws.ToString(s.Id) == "ok1" && aws.ToString(s.MD5OfMessageAttributes) == "" {
			t.Error("no MD5OfMessageAttributes on an entry with attributes")
		}
		if aws.ToString(s.Id) == "ok2" && s.MD5OfMessageAttributes != nil {
			t.Error("MD5OfMessageAttributes on an entry without attributes")
		}
	}

	recv, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
	if err != nil || len(recv.Messages) != 2 {
		t.Fatalf("receive %v %v", recv, err)
	}
	cv, err := e.client.ChangeMessageVisibilityBatch(e.ctx, &awssqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("a"), ReceiptHandle: recv.Messages[0].ReceiptHandle, VisibilityTimeout: 100},
		{Id: aws.String("b"), ReceiptHandle: aws.String("bogus"), VisibilityTimeout: 100},
	}})
	if err != nil || len(cv.Successful) != 1 || len(cv.Failed) != 1 || aws.ToString(cv.Failed[0].Code) != "ReceiptHandleIsInvalid" {
		t.Errorf("change visibility batch %+v %v", cv, err)
	}
	del, err := e.client.DeleteMessageBatch(e.ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("a"), ReceiptHandle: recv.Messages[0].ReceiptHandle},
		{Id: aws.String("b"), ReceiptHandle: recv.Messages[1].ReceiptHandle},
		{Id: aws.String("c"), ReceiptHandle: aws.String("bogus")},
	}})
	if err != nil || len(del.Successful) != 2 || len(del.Failed) != 1 || aws.ToString(del.Failed[0].Id) != "c" ||
		aws.ToString(del.Failed[0].Code) != "ReceiptHandleIsInvalid" || !del.Failed[0].SenderFault {
		t.Errorf("delete batch %+v %v", del, err)
	}

	// Errors of the whole request.
	entries := func(n int, id func(int) string) []types.SendMessageBatchRequestEntry {
		out := make([]types.SendMessageBatchRequestEntry, n)
		for i := range out {
			out[i] = types.SendMessageBatchRequestEntry{Id: aws.String(id(i)), MessageBody: aws.String("x")}
		}
		return out
	}
	seq := func(i int) string { return string(rune('a' + i)) }
	_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries(11, seq)})
	var tooMany *types.TooManyEntriesInBatchRequest
	wantAPIError(t, err, "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", &tooMany)
	_, err = e.client.DeleteMessageBatch(e.ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: &url, Entries: []types.DeleteMessageBatchRequestEntry{}})
	var emptyBatch *types.EmptyBatchRequest
	wantAPIError(t, err, "AWS.SimpleQueueService.EmptyBatchRequest", &emptyBatch)
	_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries(2, func(int) string { return "same" })})
	var notDistinct *types.BatchEntryIdsNotDistinct
	wantAPIError(t, err, "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", &notDistinct)
	_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries(1, func(int) string { return "no spaces" })})
	var badID *types.InvalidBatchEntryId
	wantAPIError(t, err, "AWS.SimpleQueueService.InvalidBatchEntryId", &badID)
	big := entries(2, seq)
	big[0].MessageBody = aws.String(strings.Repeat("x", 1<<19))
	big[1].MessageBody = aws.String(strings.Repeat("y", 1<<19+1))
	_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: big})
	var tooLong *types.BatchRequestTooLong
	wantAPIError(t, err, "AWS.SimpleQueueService.BatchRequestTooLong", &tooLong)
	if tooLong != nil && tooLong.ErrorMessage() != "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes." {
		t.Errorf("message %q", tooLong.ErrorMessage())
	}
}

func TestSDKFIFO(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("jobs.fifo", map[string]string{"FifoQueue": "true"})
	_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	var generic *smithy.GenericAPIError
	wantAPIError(t, err, "MissingParameter", &generic)
	if generic.Message != "The request must contain the parameter MessageGroupId." {
		t.Errorf("message %q", generic.Message)
	}
	_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("1"), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")},
	}})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)

	var seqs []string
	for i, body := range []string{"first", "second"} {
		out, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String(body),
			MessageGroupId: aws.String("g1"), MessageDeduplicationId: aws.String(body)})
		if err != nil {
			t.Fatal(err)
		}
		if out.SequenceNumber == nil {
			t.Fatalf("send %d: no SequenceNumber", i)
		}
		seqs = append(seqs, *out.SequenceNumber)
	}
	recv, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"SequenceNumber", "MessageGroupId", "MessageDeduplicationId"}})
	if err != nil || len(recv.Messages) != 2 {
		t.Fatalf("receive %v %v", recv, err)
	}
	for i, m := range recv.Messages {
		if m.Attributes["SequenceNumber"] != seqs[i] || m.Attributes["MessageGroupId"] != "g1" || len(m.Attributes) != 3 {
			t.Errorf("message %d attributes %v", i, m.Attributes)
		}
	}
}

func TestSDKDeadLetter(t *testing.T) {
	e := newEnv(t)
	dlq := e.createQueue("dlq", nil)
	src := e.createQueue("src", map[string]string{
		"VisibilityTimeout": "10",
		"RedrivePolicy":     `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:dlq","maxReceiveCount":1}`,
	})
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &src, MessageBody: aws.String("doomed")}); err != nil {
		t.Fatal(err)
	}
	first, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &src})
	if err != nil || len(first.Messages) != 1 {
		t.Fatalf("first receive %v %v", first, err)
	}
	e.clk.Advance(11 * time.Second)
	second, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &src})
	if err != nil || len(second.Messages) != 0 {
		t.Fatalf("second receive should find nothing: %v %v", second, err)
	}
	dead, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &dlq,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"DeadLetterQueueSourceArn", "ApproximateReceiveCount"}})
	if err != nil || len(dead.Messages) != 1 {
		t.Fatalf("DLQ receive %v %v", dead, err)
	}
	if got := dead.Messages[0].Attributes["DeadLetterQueueSourceArn"]; got != "arn:aws:sqs:us-east-1:000000000000:src" {
		t.Errorf("DeadLetterQueueSourceArn %q", got)
	}
}
