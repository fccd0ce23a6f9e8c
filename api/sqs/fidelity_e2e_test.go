package sqs_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tidemq/tidemq/api/sqs"
)

// Fidelity details that only the transport decides, checked with the SDK
// (MD5 checks on) or raw HTTP against the handler over the engine.

// TestSDKMessageAttributeNameFilters: the MessageAttributeNames filters of
// ReceiveMessage as SQS applies them (LocalStack's AWS-validated
// test_receive_message_message_attribute_names_filters): "All", "*" and
// ".*" select every attribute, "Hel.*" every name starting with "Hel".
func TestSDKMessageAttributeNameFilters(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", map[string]string{"VisibilityTimeout": "0"})
	_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("msg"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"Help.Me": {DataType: aws.String("String"), StringValue: aws.String("Me")},
			"Hello":   {DataType: aws.String("String"), StringValue: aws.String("There")},
			"General": {DataType: aws.String("String"), StringValue: aws.String("Kenobi")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""}, {[]string{"All"}, "General Hello Help.Me"}, {[]string{"*"}, "General Hello Help.Me"},
		{[]string{".*"}, "General Hello Help.Me"}, {[]string{"Foo", "Help"}, ""}, {[]string{"Foo", "Hello"}, "Hello"},
		{[]string{"Hel.*"}, "Hello Help.Me"}, {[]string{"Help.*", "General"}, "General Help.Me"},
	} {
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: c.names})
		if err != nil {
			t.Fatalf("%v: %v", c.names, err) // includes the SDK's MD5 check of the returned attributes
		}
		if len(out.Messages) != 1 {
			t.Fatalf("%v: %d messages", c.names, len(out.Messages))
		}
		var got []string
		for n := range out.Messages[0].MessageAttributes {
			got = append(got, n)
		}
		sort.Strings(got)
		if strings.Join(got, " ") != c.want {
			t.Errorf("MessageAttributeNames %q returned [%s], want [%s]", c.names, strings.Join(got, " "), c.want)
		}
	}
}

// TestSDKEmptyGroupAndDeduplicationIDs: a MessageGroupId or
// MessageDeduplicationId given empty is refused with AWS's
// InvalidParameterValue, in SendMessage and SendMessageBatch, over JSON and
// Query; left out, the usual FIFO rules apply.
func TestSDKEmptyGroupAndDeduplicationIDs(t *testing.T) {
	e := newEnv(t)
	fifo := e.createQueue("f.fifo", map[string]string{"FifoQueue": "true"})
	std := e.createQueue("s", nil)
	const group = "Value  for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	const dedup = "Value  for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length."
	for _, url := range []string{fifo, std} {
		_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x"),
			MessageGroupId: aws.String(""), MessageDeduplicationId: aws.String("d")})
		wantErrorMessage(t, err, "InvalidParameterValue", group)
		_, err = e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("x"),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("")})
		wantErrorMessage(t, err, "InvalidParameterValue", dedup)
		_, err = e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
			{Id: aws.String("ok"), MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("1")},
			{Id: aws.String("empty"), MessageBody: aws.String("y"), MessageGroupId: aws.String(""), MessageDeduplicationId: aws.String("2")},
		}})
		wantErrorMessage(t, err, "InvalidParameterValue", group)
	}
	// Left out on a FIFO queue: AWS's MissingParameter.
	_, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &fifo, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	wantErrorMessage(t, err, "MissingParameter", "The request must contain the parameter MessageGroupId.")
	if n := e.depth("f.fifo") + e.depth("s"); n != 0 {
		t.Fatalf("%d messages were sent by refused requests", n)
	}
	// Query: an empty form field is given, too.
	r := e.postForm("/", url.Values{"Action": {"SendMessage"}, "QueueUrl": {fifo}, "MessageBody": {"x"},
		"MessageGroupId": {""}, "MessageDeduplicationId": {"d"}})
	if r.status != 400 || !strings.Contains(r.body, "<Code>InvalidParameterValue</Code>") || !strings.Contains(r.body, "Value  for parameter MessageGroupId is invalid.") {
		t.Errorf("Query SendMessage with MessageGroupId=: %d %s", r.status, r.body)
	}
}

// TestSDKAccentedAttributeNames: accented Latin attribute names go through
// both digests the SDK checks.
func TestSDKAccentedAttributeNames(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	attrs := map[string]types.MessageAttributeValue{
		"attr.1øßä": {DataType: aws.String("String"), StringValue: aws.String("Valida")},
		"Größe":     {DataType: aws.String("Number"), StringValue: aws.String("3")},
		"plain":     {DataType: aws.String("String"), StringValue: aws.String("x")},
	}
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url, MessageBody: aws.String("m"), MessageAttributes: attrs}); err != nil {
		t.Fatal(err)
	}
	out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MessageAttributeNames: []string{"All"}})
	if err != nil || len(out.Messages) != 1 || len(out.Messages[0].MessageAttributes) != 3 {
		t.Fatalf("receive: %v %v", out, err)
	}
}

// TestTraceHeaderFromHTTPHeader: SQS stores the X-Amzn-Trace-Id HTTP
// header as the message's AWSTraceHeader when the request sets none; one
// the request sets wins, and a malformed header is refused like a
// malformed attribute.
func TestTraceHeaderFromHTTPHeader(t *testing.T) {
	e := newEnv(t)
	queueURL := e.createQueue("q", nil)
	const fromHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	const fromAttr = "Root=1-abc-def"
	withHeader := func(v string) func(*awssqs.Options) {
		return func(o *awssqs.Options) {
			o.APIOptions = append(o.APIOptions, smithyhttp.SetHeaderValue("X-Amzn-Trace-Id", v))
		}
	}
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: aws.String("from header")},
		withHeader(fromHeader)); err != nil {
		t.Fatal(err)
	}
	out, err := e.client.SendMessageBatch(e.ctx, &awssqs.SendMessageBatchInput{QueueUrl: &queueURL, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("h"), MessageBody: aws.String("batch from header")},
		{Id: aws.String("a"), MessageBody: aws.String("from attribute"), MessageSystemAttributes: map[string]types.MessageSystemAttributeValue{
			"AWSTraceHeader": {DataType: aws.String("String"), StringValue: aws.String(fromAttr)}}},
	}}, withHeader(fromHeader))
	if err != nil || len(out.Failed) != 0 {
		t.Fatalf("batch: %v %+v", err, out)
	}
	want := map[string]string{"from header": fromHeader, "batch from header": fromHeader, "from attribute": fromAttr}
	got := map[string]string{}
	for len(got) < len(want) {
		r, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &queueURL, MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{"AWSTraceHeader"}})
		if err != nil || len(r.Messages) == 0 {
			t.Fatalf("receive: %v (got %v so far)", err, got)
		}
		for _, m := range r.Messages {
			got[aws.ToString(m.Body)] = m.Attributes["AWSTraceHeader"]
		}
	}
	for body, h := range want {
		if got[body] != h {
			t.Errorf("%q: AWSTraceHeader %q, want %q", body, got[body], h)
		}
	}
	_, err = e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: aws.String("x")}, withHeader("Root=dummy"))
	wantAPIError[error](t, err, "InvalidParameterValue", nil)
}

// TestQueryServiceActionsOnAQueuePath: in the Query protocol, AWS refuses
// the actions about the service (CreateQueue, ListQueues, GetQueueUrl)
// posted to a queue URL with InvalidAction, and CreateQueue and ListQueues
// as GETs there; GetQueueUrl as a GET there answers (AWS-recorded; it was
// refused, a regression); queue actions work there, and JSON requests are
// routed by X-Amz-Target whatever the path.
func TestQueryServiceActionsOnAQueuePath(t *testing.T) {
	e := newEnv(t)
	e.createQueue("q", nil)
	for _, action := range []string{"CreateQueue", "ListQueues", "GetQueueUrl"} {
		r := e.postForm("/"+account+"/q", url.Values{"Action": {action}, "Version": {"2012-11-05"}, "QueueName": {"other"}})
		if r.status != 400 || !strings.Contains(r.body, "<Code>InvalidAction</Code>") ||
			!strings.Contains(r.body, "The action "+action+" is not valid for this endpoint.") {
			t.Errorf("Query %s on a queue path: %d %s", action, r.status, r.body)
		}
		if action == "GetQueueUrl" {
			continue
		}
		if g := e.get("/" + account + "/q?Action=" + action + "&QueueName=other"); g.status != 400 || !strings.Contains(g.body, "<Code>InvalidAction</Code>") {
			t.Errorf("Query GET %s on a queue path: %d %s", action, g.status, g.body)
		}
	}
	if g := e.get("/" + account + "/q?Action=GetQueueUrl&QueueName=q"); g.status != 200 ||
		!strings.Contains(g.body, "<GetQueueUrlResult><QueueUrl>"+e.srv.URL+"/"+account+"/q</QueueUrl></GetQueueUrlResult>") {
		t.Errorf("Query GET GetQueueUrl on a queue path: %d %s", g.status, g.body)
	}
	// Without an Action: a bare element, in XML even when JSON is asked for.
	for _, accept := range []string{"", "application/json"} {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/"+account+"/q", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		if r := e.do(req); r.status != 404 || r.body != "<UnknownOperationException/>" {
			t.Errorf("Query GET without Action (Accept %q): %d %q", accept, r.status, r.body)
		}
	}
	if r := e.postForm("/"+account+"/q", url.Values{"Action": {"SendMessage"}, "MessageBody": {"x"}}); r.status != 200 {
		t.Errorf("Query SendMessage on the queue path: %d %s", r.status, r.body)
	}
	if r := e.postForm("/", url.Values{"Action": {"ListQueues"}}); r.status != 200 || !strings.Contains(r.body, "/"+account+"/q</QueueUrl>") {
		t.Errorf("Query ListQueues on /: %d %s", r.status, r.body)
	}
	// JSON to a queue path (Java SDK v1) is routed by its target.
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/"+account+"/q", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ListQueues")
	if r := e.do(req); r.status != 200 {
		t.Errorf("JSON ListQueues on a queue path: %d %s", r.status, r.body)
	}
}

// TestQueryGETAcceptJSON: a Query request with Accept: application/json
// is answered in JSON, shaped as SQS shapes it.
func TestQueryGETAcceptJSON(t *testing.T) {
	e := newEnv(t)
	queueURL := e.createQueue("q", nil)
	get := func(pathAndQuery string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+pathAndQuery, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	status, body, h := get("/?Action=GetQueueUrl&QueueName=q")
	var ok struct {
		GetQueueUrlResponse struct {
			GetQueueUrlResult struct{ QueueUrl string }
			ResponseMetadata  struct{ RequestId string }
		}
	}
	if err := json.Unmarshal([]byte(body), &ok); err != nil || status != 200 ||
		ok.GetQueueUrlResponse.GetQueueUrlResult.QueueUrl != queueURL || ok.GetQueueUrlResponse.ResponseMetadata.RequestId == "" ||
		!strings.HasPrefix(h.Get("Content-Type"), "application/json") {
		t.Fatalf("GetQueueUrl with Accept: application/json: %d %q %s (%v)", status, h.Get("Content-Type"), body, err)
	}
	status, body, _ = get("/" + account + "/q?Action=SendMessage&MessageBody=hello")
	var sent struct {
		SendMessageResponse struct {
			SendMessageResult struct{ MD5OfMessageBody, MessageId string }
		}
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil || status != 200 ||
		sent.SendMessageResponse.SendMessageResult.MD5OfMessageBody != "5d41402abc4b2a76b9719d911017c592" {
		t.Fatalf("SendMessage with Accept: application/json: %d %s (%v)", status, body, err)
	}
	// A receive: the list is "messages" (AWS-recorded), null when empty.
	status, body, _ = get("/" + account + "/q?Action=ReceiveMessage&MaxNumberOfMessages=10")
	var recv struct {
		ReceiveMessageResponse struct {
			ReceiveMessageResult map[string][]struct{ Body, MessageId, ReceiptHandle string }
		}
	}
	if err := json.Unmarshal([]byte(body), &recv); err != nil || status != 200 ||
		len(recv.ReceiveMessageResponse.ReceiveMessageResult["messages"]) != 1 || recv.ReceiveMessageResponse.ReceiveMessageResult["messages"][0].Body != "hello" {
		t.Fatalf("ReceiveMessage with Accept: application/json: %d %s (%v)", status, body, err)
	}
	if status, body, _ = get("/" + account + "/q?Action=ReceiveMessage"); status != 200 || !strings.Contains(body, `"ReceiveMessageResult":{"messages":null}`) {
		t.Fatalf("empty ReceiveMessage with Accept: application/json: %d %s", status, body)
	}
	status, body, _ = get("/?Action=GetQueueUrl&QueueName=nope")
	var fail struct {
		Error     struct{ Type, Code, Message string }
		RequestId string
	}
	if err := json.Unmarshal([]byte(body), &fail); err != nil || status != 400 || fail.Error.Code != "AWS.SimpleQueueService.NonExistentQueue" ||
		fail.Error.Type != "Sender" || fail.RequestId == "" {
		t.Fatalf("error with Accept: application/json: %d %s (%v)", status, body, err)
	}
	// Without the header: XML as before.
	if r := e.get("/?Action=GetQueueUrl&QueueName=q"); r.status != 200 || !strings.Contains(r.body, "<GetQueueUrlResponse") {
		t.Errorf("GetQueueUrl without Accept: %d %s", r.status, r.body)
	}
}

// TestQueuesPerRegion: the region of a request is its SigV4 credential
// scope's; each region's queues are its own (the same name in two regions
// is two queues with two ARNs), an unsigned request is for the default
// region, and a PublicURL's {region} is the queue's region.
func TestQueuesPerRegion(t *testing.T) {
	e := newEnv(t)
	east := e.client
	west := awssqs.New(awssqs.Options{BaseEndpoint: aws.String(e.srv.URL), Region: "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer:     retry.AddWithMaxAttempts(retry.NewStandard(), 1)})
	create := func(c *awssqs.Client, name string) string {
		out, err := c.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.QueueUrl)
	}
	arnOf := func(c *awssqs.Client, url string) string {
		out, err := c.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes["QueueArn"]
	}
	eastURL := create(east, "orders")
	westURL := create(west, "orders")
	if a, b := arnOf(east, eastURL), arnOf(west, westURL); a != "arn:aws:sqs:us-east-1:"+account+":orders" || b != "arn:aws:sqs:eu-west-1:"+account+":orders" {
		t.Fatalf("QueueArns %q and %q", a, b)
	}
	if _, err := west.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &westURL, MessageBody: aws.String("west")}); err != nil {
		t.Fatal(err)
	}
	if out, err := east.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &eastURL}); err != nil || len(out.Messages) != 0 {
		t.Fatalf("us-east-1's orders: %v %v, want nothing", out, err)
	}
	if out, err := west.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &westURL}); err != nil || len(out.Messages) != 1 {
		t.Fatalf("eu-west-1's orders: %v %v", out, err)
	}
	create(west, "west-only")
	list := func(c *awssqs.Client) string {
		out, err := c.ListQueues(e.ctx, &awssqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, u := range out.QueueUrls {
			names = append(names, u[strings.LastIndexByte(u, '/')+1:])
		}
		sort.Strings(names)
		return strings.Join(names, " ")
	}
	if got := list(east); got != "orders" {
		t.Errorf("us-east-1 lists %q", got)
	}
	if got := list(west); got != "orders west-only" {
		t.Errorf("eu-west-1 lists %q", got)
	}
	if _, err := east.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("west-only")}); err == nil {
		t.Error("us-east-1 found eu-west-1's queue")
	}
	// Unsigned: the default region.
	if r := e.get("/?Action=GetQueueUrl&QueueName=west-only"); r.status != 400 {
		t.Errorf("unsigned GetQueueUrl of eu-west-1's queue: %d %s", r.status, r.body)
	}
	if r := e.get("/" + account + "/orders?Action=ReceiveMessage"); r.status != 200 || strings.Contains(r.body, "<Message>") {
		t.Errorf("unsigned receive from (us-east-1's, empty) orders: %d %s", r.status, r.body)
	}
	// A slash in a name is no way into another region.
	if _, err := east.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("eu-west-1/west-only")}); err == nil {
		t.Error("GetQueueUrl(eu-west-1/west-only) from us-east-1 found it")
	}
	if _, err := east.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String("eu-west-1/sneaky")}); err == nil {
		t.Error("CreateQueue(eu-west-1/sneaky) was accepted")
	}

	// {region} in the public URL.
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: e.eng, PublicURL: "http://sqs.{region}.example.test:9324",
		Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	west2 := awssqs.New(awssqs.Options{BaseEndpoint: aws.String(srv.URL), Region: "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		Retryer:     retry.AddWithMaxAttempts(retry.NewStandard(), 1)})
	out, err := west2.GetQueueUrl(e.ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	if err != nil || aws.ToString(out.QueueUrl) != "http://sqs.eu-west-1.example.test:9324/"+account+"/orders" {
		t.Fatalf("GetQueueUrl with a {region} public URL: %v %v", aws.ToString(out.QueueUrl), err)
	}
}
