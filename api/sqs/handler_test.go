package sqs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq"
)

// recordingBroker remembers the last send and receive parameters.
type recordingBroker struct {
	stubBroker
	send    tidemq.SendMessagesParams
	receive tidemq.ReceiveMessagesParams
}

func (b *recordingBroker) SendMessages(ctx context.Context, p tidemq.SendMessagesParams) ([]tidemq.SendResult, error) {
	b.send = p
	return b.stubBroker.SendMessages(ctx, p)
}

func (b *recordingBroker) ReceiveMessages(ctx context.Context, p tidemq.ReceiveMessagesParams) ([]*tidemq.Message, error) {
	b.receive = p
	return b.stubBroker.ReceiveMessages(ctx, p)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func jsonRequest(path, action, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", jsonContentType)
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	return r
}

func formRequest(path string, form url.Values) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return r
}

func decodeJSONError(t *testing.T, rec *httptest.ResponseRecorder) jsonError {
	t.Helper()
	var e jsonError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %q: %v", rec.Body.String(), err)
	}
	return e
}

func TestJSONErrorShape(t *testing.T) {
	rec := serve(quietHandler(), jsonRequest("/", "GetQueueUrl", `{"QueueName":"missing"}`))
	if rec.Code != 400 {
		t.Errorf("status %d", rec.Code)
	}
	if got := rec.Header().Get("X-Amzn-Query-Error"); got != "AWS.SimpleQueueService.NonExistentQueue;Sender" {
		t.Errorf("x-amzn-query-error %q", got)
	}
	if got, want := rec.Body.String(), `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	if rec.Header().Get("Content-Type") != jsonContentType || rec.Header().Get("X-Amzn-Requestid") == "" {
		t.Errorf("headers %v", rec.Header())
	}
}

func TestRouting(t *testing.T) {
	h := quietHandler()
	tests := []struct {
		name       string
		req        *http.Request
		status     int
		ct         string
		wantInBody string
	}{
		{"JSON to /", jsonRequest("/", "ListQueues", `{}`), 200, jsonContentType, `"QueueUrls":["http://example.com/000000000000/a"`},
		{"JSON to a queue path", jsonRequest("/000000000000/q", "GetQueueAttributes", `{"AttributeNames":["All"]}`), 200, jsonContentType, `{"Attributes":{"VisibilityTimeout":"30"}}`},
		{"JSON empty output", jsonRequest("/", "DeleteQueue", `{"QueueUrl":"q"}`), 200, jsonContentType, `{}`},
		{"JSON empty body", jsonRequest("/", "ListQueues", ``), 200, jsonContentType, `QueueUrls`},
		{"JSON unknown action", jsonRequest("/", "Frobnicate", `{}`), 400, jsonContentType, `"__type":"com.amazon.coral.service#InvalidAction","message":"The action Frobnicate is not valid for this endpoint."`},
		{"JSON not an object", jsonRequest("/", "ListQueues", `[]`), 400, jsonContentType, `SerializationException`},
		{"JSON bad syntax", jsonRequest("/", "ListQueues", `{"MaxResults":`), 400, jsonContentType, `SerializationException`},
		{"JSON wrong type", jsonRequest("/", "ReceiveMessage", `{"QueueUrl":"q","MaxNumberOfMessages":"10"}`), 400, jsonContentType, `InvalidParameterValueException`},
		{"JSON move task", jsonRequest("/", "StartMessageMoveTask", `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:q"}`), 200, jsonContentType, `{"TaskHandle":"th-1"}`},
		{"Query POST to /", formRequest("/", url.Values{"Action": {"GetQueueUrl"}, "QueueName": {"q"}}), 200, "text/xml", `<GetQueueUrlResult><QueueUrl>http://example.com/000000000000/q</QueueUrl></GetQueueUrlResult>`},
		{"Query POST to queue path", formRequest("/000000000000/q", url.Values{"Action": {"ListQueueTags"}}), 200, "text/xml", `<Tag><Key>k</Key><Value>v</Value></Tag>`},
		{"Query GET", httptest.NewRequest(http.MethodGet, "/000000000000/q?Action=SendMessage&MessageBody=foobar", nil), 200, "text/xml", `<MessageId>msg-</MessageId>`},
		{"Query GET without Action", httptest.NewRequest(http.MethodGet, "/000000000000/q", nil), 404, "text/xml", `<UnknownOperationException/>`},
		{"Query POST without Action", formRequest("/", url.Values{"QueueName": {"q"}}), 400, "text/xml", `<Code>MissingAction</Code>`},
		{"Query unknown action", formRequest("/", url.Values{"Action": {"Publish"}}), 400, "text/xml", `<Code>InvalidAction</Code><Message>The action Publish is not valid for this endpoint.</Message>`},
		{"Query missing parameter", formRequest("/", url.Values{"Action": {"DeleteMessage"}, "QueueUrl": {"q"}}), 400, "text/xml", `<Code>MissingParameter</Code><Message>The request must contain the parameter ReceiptHandle.</Message>`},
		{"Query missing QueueUrl", formRequest("/", url.Values{"Action": {"PurgeQueue"}}), 400, "text/xml", `The request must contain the parameter QueueUrl.`},
		{"Query no account", formRequest("/", url.Values{"Action": {"PurgeQueue"}, "QueueUrl": {"http://x/1234567890/q"}}), 400, "text/xml", `<Message>The specified queue does not exist for this wsdl version.</Message>`},
		{"Query move task", formRequest("/", url.Values{"Action": {"ListMessageMoveTasks"}}), 400, "text/xml", `<Code>MissingParameter</Code><Message>The request must contain the parameter SourceArn.</Message>`},
		{"Query batch entry failure", formRequest("/", url.Values{"Action": {"DeleteMessageBatch"}, "QueueUrl": {"q"},
			"DeleteMessageBatchRequestEntry.1.Id": {"a"}, "DeleteMessageBatchRequestEntry.1.ReceiptHandle": {"bad"}}), 200, "text/xml",
			`<BatchResultErrorEntry><Id>a</Id><SenderFault>true</SenderFault><Code>ReceiptHandleIsInvalid</Code><Message>The input receipt handle &quot;bad&quot; is not a valid receipt handle.</Message></BatchResultErrorEntry>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, tt.req)
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != tt.ct || !strings.Contains(rec.Body.String(), tt.wantInBody) {
				t.Errorf("got %d %q %s\nwant %d %q containing %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), tt.status, tt.ct, tt.wantInBody)
			}
		})
	}
}

func TestReceiveParameterChecks(t *testing.T) {
	h := quietHandler()
	for _, tt := range []struct{ body, msg string }{
		{`{"QueueUrl":"q","MaxNumberOfMessages":11}`, "Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
		{`{"QueueUrl":"q","MaxNumberOfMessages":0}`, "Value 0 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided."},
		{`{"QueueUrl":"q","WaitTimeSeconds":21}`, "Value 21 for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided."},
		{`{"QueueUrl":"q","VisibilityTimeout":43201}`, "Value 43201 for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided."},
		{`{"QueueUrl":"q","VisibilityTimeout":-1}`, "Value -1 for parameter VisibilityTimeout is invalid. Reason: Must be >= 0 and <= 43200, if provided."},
	} {
		rec := serve(h, jsonRequest("/", "ReceiveMessage", tt.body))
		e := decodeJSONError(t, rec)
		if rec.Code != 400 || e.Type != "com.amazon.coral.service#InvalidParameterValueException" || e.Message != tt.msg ||
			rec.Header().Get("X-Amzn-Query-Error") != "InvalidParameterValue;Sender" {
			t.Errorf("%s: %d %+v", tt.body, rec.Code, e)
		}
	}
}

func TestReceiveSelectsAttributes(t *testing.T) {
	h := quietHandler()
	rec := serve(h, jsonRequest("/", "ReceiveMessage", `{"QueueUrl":"q","MessageSystemAttributeNames":["SentTimestamp"],"AttributeNames":["ApproximateFirstReceiveTimestamp","SequenceNumber"],"MessageAttributeNames":["trace.*"]}`))
	var out struct{ Messages []wireMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || len(out.Messages) != 1 {
		t.Fatalf("%v %s", err, rec.Body.String())
	}
	m := out.Messages[0]
	wantSys := map[string]string{"SentTimestamp": "1700000000123", "ApproximateFirstReceiveTimestamp": "1700000000456"}
	if len(m.Attributes) != 2 || m.Attributes["SentTimestamp"] != wantSys["SentTimestamp"] ||
		m.Attributes["ApproximateFirstReceiveTimestamp"] != wantSys["ApproximateFirstReceiveTimestamp"] {
		t.Errorf("system attributes %v", m.Attributes)
	}
	if len(m.MessageAttributes) != 1 || m.MessageAttributes["trace.bin"].DataType != "Binary" {
		t.Errorf("message attributes %v", m.MessageAttributes)
	}
	want := tidemq.MD5OfAttributes(map[string]tidemq.MessageAttributeValue{"trace.bin": {DataType: "Binary", BinaryValue: []byte{1, 2}}})
	if m.MD5OfMessageAttributes != want || m.MD5OfBody != tidemq.MD5OfBody("hello") {
		t.Errorf("digests %s %s", m.MD5OfMessageAttributes, m.MD5OfBody)
	}
	// Nothing asked for: no attributes and no attribute digest.
	rec = serve(h, jsonRequest("/", "ReceiveMessage", `{"QueueUrl":"q"}`))
	if strings.Contains(rec.Body.String(), "Attributes") || strings.Contains(rec.Body.String(), "MD5OfMessageAttributes") {
		t.Errorf("unasked attributes: %s", rec.Body.String())
	}
}

func TestSelectMessageAttributes(t *testing.T) {
	attrs := map[string]tidemq.MessageAttributeValue{
		"a": {DataType: "String", StringValue: "1"}, "a.b": {DataType: "String", StringValue: "2"},
		"ab": {DataType: "String", StringValue: "3"}, "c": {DataType: "Number", StringValue: "4"},
	}
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""}, {[]string{"All"}, "a a.b ab c"}, {[]string{".*"}, "a a.b ab c"}, {[]string{"*"}, "a a.b ab c"},
		{[]string{"a.*"}, "a a.b ab"}, {[]string{"a.b.*"}, "a.b"}, {[]string{"a", "c"}, "a c"}, {[]string{"x"}, ""},
		{[]string{"ab.*", "c"}, "ab c"}, {[]string{"x.*"}, ""},
	} {
		got := strings.Join(sortedKeys(selectMessageAttributes(attrs, tt.names)), " ")
		if got != tt.want {
			t.Errorf("%v: got %q want %q", tt.names, got, tt.want)
		}
	}
}

func TestClientInfoAndQueueURLs(t *testing.T) {
	b := &recordingBroker{}
	h := NewHandler(Config{Broker: b, Logger: slog.New(slog.DiscardHandler)})
	r := jsonRequest("/", "SendMessage", `{"QueueUrl":"https://elsewhere:9/000000000000/q","MessageBody":"x"}`)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00")
	r.Header.Set("User-Agent", "test-agent")
	r.RemoteAddr = "192.0.2.1:1234"
	if rec := serve(h, r); rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if want := (tidemq.ClientInfo{Addr: "192.0.2.1:1234", UserAgent: "test-agent", AccessKey: "AKIDEXAMPLE"}); b.send.Client != want || b.send.Queue != "q" {
		t.Errorf("client %+v queue %q", b.send.Client, b.send.Queue)
	}
	r = httptest.NewRequest(http.MethodGet, "/?Action=ReceiveMessage&QueueUrl=q&X-Amz-Credential=AKIDQUERY%2F20250101%2Fus-east-1%2Fsqs%2Faws4_request", nil)
	serve(h, r)
	if b.receive.Client.AccessKey != "AKIDQUERY" {
		t.Errorf("presigned access key %q", b.receive.Client.AccessKey)
	}

	r = jsonRequest("/", "CreateQueue", `{"QueueName":"q1"}`)
	r.Host = "mq.internal:4566"
	r.Header.Set("X-Forwarded-Proto", "https")
	if rec := serve(h, r); rec.Body.String() != `{"QueueUrl":"https://mq.internal:4566/000000000000/q1"}` {
		t.Errorf("forwarded URL: %s", rec.Body.String())
	}
	hp := NewHandler(Config{Broker: b, PublicURL: "https://queues.example.com/", AccountID: "123456789012", Logger: slog.New(slog.DiscardHandler)})
	if rec := serve(hp, jsonRequest("/", "CreateQueue", `{"QueueName":"q1"}`)); rec.Body.String() != `{"QueueUrl":"https://queues.example.com/123456789012/q1"}` {
		t.Errorf("public URL: %s", rec.Body.String())
	}
}

func TestQueueName(t *testing.T) {
	h := NewHandler(Config{}).(*handler)
	for in, want := range map[string]string{
		"http://localhost:4566/000000000000/orders":                    "orders",
		"https://sqs.us-east-1.amazonaws.com/000000000000/orders.fifo": "orders.fifo",
		"orders":                     "orders",
		"/000000000000/q":            "q",
		"http://h/x/000000000000/q/": "q",
	} {
		if _, got, err := h.queueName(in); err != nil || got != want {
			t.Errorf("%s: %q %v", in, got, err)
		}
	}
	// Another account's queue is named by its account (account.go).
	if acct, got, err := h.queueName("http://h/123456789012/q"); err != nil || acct != "123456789012" || got != "q" {
		t.Errorf("another account's URL: %q %q %v", acct, got, err)
	}
	for _, in := range []string{"http://h/12345/q", "http://h/12345678901x/q", "http://h/123456789012/a:b", "http://h/", "http://h"} {
		if _, _, err := h.queueName(in); !tidemq.HasCode(err, tidemq.ErrQueueDoesNotExist) {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	h := quietHandler()
	big := bytes.Repeat([]byte("a"), MaxRequestBodyBytes+1)
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(big))
	r.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	r.ContentLength = -1 // chunked: the limit must hold while reading
	rec := serve(h, r)
	if rec.Code != http.StatusRequestEntityTooLarge || decodeJSONError(t, rec).Type != "com.amazon.coral.service#RequestEntityTooLarge" {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
	r = formRequest("/", url.Values{"Action": {"SendMessage"}, "MessageBody": {string(big)}})
	if rec := serve(h, r); rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "<Code>RequestEntityTooLarge</Code>") {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

func TestPanicBecomesInternalFailure(t *testing.T) {
	var logs bytes.Buffer
	h := NewHandler(Config{Broker: &stubBroker{panicWith: "boom"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := serve(h, jsonRequest("/", "ListQueues", `{}`))
	if rec.Code != 500 || decodeJSONError(t, rec).Type != "com.amazon.coral.service#InternalFailure" ||
		rec.Header().Get("X-Amzn-Query-Error") != "InternalFailure;Receiver" {
		t.Errorf("%d %v %s", rec.Code, rec.Header(), rec.Body.String())
	}
	if !strings.Contains(logs.String(), "panic") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("panic not logged: %s", logs.String())
	}
	rec = serve(h, formRequest("/", url.Values{"Action": {"ListQueues"}}))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), "<Type>Receiver</Type><Code>InternalFailure</Code>") {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

type denyAll struct{}

func (denyAll) Authenticate(*http.Request, []byte) (string, error) {
	return "", tidemq.Errorf(tidemq.ErrInvalidClientTokenID, "The security token included in the request is invalid.")
}

func TestAuthenticatorError(t *testing.T) {
	h := NewHandler(Config{Broker: &stubBroker{}, Auth: denyAll{}, Logger: slog.New(slog.DiscardHandler)})
	rec := serve(h, jsonRequest("/", "ListQueues", `{}`))
	if rec.Code != 403 || rec.Header().Get("X-Amzn-Query-Error") != "InvalidClientTokenId;Sender" {
		t.Errorf("%d %v", rec.Code, rec.Header())
	}
}

// TestQueueNameForms: queue URLs and paths in every form clients send,
// through the fast path and through net/url.
func TestQueueNameForms(t *testing.T) {
	h := &handler{cfg: Config{AccountID: "000000000000"}}
	for in, want := range map[string]string{
		"http://127.0.0.1:9324/000000000000/orders":          "orders",
		"https://sqs.us-east-1.amazonaws.com/000000000000/q": "q",
		"http://h/000000000000/orders/":                      "orders",
		"http://h//000000000000//orders":                     "orders",
		"http://h/000000000000/orders?x=1":                   "orders",
		"http://user@h/000000000000/orders":                  "orders",
		"http://h/000000000000/a%2Eb":                        "a.b",
		"/000000000000/orders":                               "orders",
		"orders":                                             "orders",
		"http://h/orders":                                    "orders",
		"http://h/111111111111/orders":                       "111111111111:orders",
		"http://h/1111/orders":                               "",
		"http://h":                                           "",
		"http://h/":                                          "",
		"":                                                   "",
		"http://h/%zz/orders":                                "",
	} {
		acct, got, err := h.queueName(in)
		got = tidemq.AccountQueueName(acct, "000000000000", got)
		if want == "" {
			if err == nil {
				t.Errorf("queueName(%q) = %q, want NonExistentQueue", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("queueName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A region AWS does not serve is refused as AWS refuses it (it would make
// a new namespace of queues); the operator's Regions replace AWS's list;
// the home region is always served.
func TestUnknownRegionRefused(t *testing.T) {
	signedFor := func(region string) *http.Request {
		r := jsonRequest("/", "CreateQueue", `{"QueueName":"q1"}`)
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20250101/"+region+"/sqs/aws4_request, SignedHeaders=host, Signature=00")
		return r
	}
	b := &recordingBroker{}
	h := NewHandler(Config{Broker: b, Logger: slog.New(slog.DiscardHandler)})
	for region, want := range map[string]int{"eu-west-1": 200, "us-east-1": 200, "cn-north-1": 200, "zz-evil-9": 403, "aws-global": 403} {
		rec := serve(h, signedFor(region))
		if rec.Code != want {
			t.Errorf("CreateQueue signed for %s: %d %s, want %d", region, rec.Code, rec.Body, want)
		}
		if want == 403 && (!strings.Contains(rec.Body.String(), "SignatureDoesNotMatch") ||
			!strings.Contains(rec.Body.String(), "Credential should be scoped to a valid region, not '"+region+"'.")) {
			t.Errorf("%s: %s", region, rec.Body)
		}
	}
	only := NewHandler(Config{Broker: b, Region: "dev-1", Regions: func(r string) bool { return r == "dev-2" }, Logger: slog.New(slog.DiscardHandler)})
	for region, want := range map[string]int{"dev-1": 200, "dev-2": 200, "eu-west-1": 403} {
		if rec := serve(only, signedFor(region)); rec.Code != want {
			t.Errorf("--regions dev-2, home dev-1: CreateQueue signed for %s: %d, want %d", region, rec.Code, want)
		}
	}
}

// A CreateQueue with 500,000 attribute names is refused before it is
// decoded (decoding and validating it took 2.5 s of CPU); a legal
// request's members are far fewer than the bound.
func TestJSONMembersBounded(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"QueueName":"q","Attributes":{`)
	for i := 0; i < 500_000; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"a%d":""`, i)
	}
	sb.WriteString(`}}`)
	b := &recordingBroker{}
	h := NewHandler(Config{Broker: b, Logger: slog.New(slog.DiscardHandler)})
	start := time.Now()
	rec := serve(h, jsonRequest("/", "CreateQueue", sb.String()))
	took := time.Since(start)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "InvalidParameterValue") || !strings.Contains(rec.Body.String(), "more than 2000 members") {
		t.Errorf("CreateQueue with 500,000 attributes: %d %.200s", rec.Code, rec.Body)
	}
	t.Logf("refused in %v", took)
	if err := checkJSONMembers([]byte(`{"a":{"b":"c:\\":d","e":[{"f":1}]}}`)); err != nil {
		t.Errorf("a small body: %v", err)
	}
}
