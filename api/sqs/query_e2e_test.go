package sqs_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Raw-HTTP Query tests over the real engine: the exact bytes an old SDK or a
// curl user sees. Request ids, message ids and receipt handles vary, so they
// are replaced by placeholders before comparing.

var (
	reRequestID = regexp.MustCompile(`<RequestId>[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}</RequestId>`)
	reMessageID = regexp.MustCompile(`<MessageId>[^<]+</MessageId>`)
	reHandle    = regexp.MustCompile(`<ReceiptHandle>[^<]+</ReceiptHandle>`)
)

func normalise(s string) string {
	s = reRequestID.ReplaceAllString(s, "<RequestId>RID</RequestId>")
	s = reMessageID.ReplaceAllString(s, "<MessageId>MID</MessageId>")
	return reHandle.ReplaceAllString(s, "<ReceiptHandle>RH</ReceiptHandle>")
}

const (
	xmlHead = `<?xml version="1.0"?>`
	xmlNS   = ` xmlns="http://queue.amazonaws.com/doc/2012-11-05/"`
	xmlMeta = `<ResponseMetadata><RequestId>RID</RequestId></ResponseMetadata>`
)

type rawResponse struct {
	status int
	header http.Header
	body   string // normalised
	raw    string
}

func (e *env) do(req *http.Request) rawResponse {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: normalise(string(b)), raw: string(b)}
}

func (e *env) postForm(path string, form url.Values) rawResponse {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return e.do(req)
}

func (e *env) get(pathAndQuery string) rawResponse {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+pathAndQuery, nil)
	return e.do(req)
}

func (r rawResponse) expect(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Errorf("got %d\n%s\nwant %d\n%s", r.status, r.body, status, body)
	}
	if ct := r.header.Get("Content-Type"); ct != "text/xml" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.header.Get("X-Amzn-Requestid") == "" {
		t.Error("no x-amzn-RequestId header")
	}
}

func TestQueryProtocolRaw(t *testing.T) {
	e := newEnv(t)
	queueURL := e.srv.URL + "/" + account + "/orders"

	e.postForm("/", url.Values{"Action": {"CreateQueue"}, "Version": {"2012-11-05"}, "QueueName": {"orders"},
		"Attribute.1.Name": {"VisibilityTimeout"}, "Attribute.1.Value": {"45"}, "Tag.1.Key": {"team"}, "Tag.1.Value": {"a"}}).
		expect(t, 200, xmlHead+`<CreateQueueResponse`+xmlNS+`><CreateQueueResult><QueueUrl>`+queueURL+
			`</QueueUrl></CreateQueueResult>`+xmlMeta+`</CreateQueueResponse>`)

	// SendMessage posted to the queue path, without QueueUrl (Java SDK v1 style);
	// the digests are the reference's example values.
	e.postForm("/"+account+"/orders", url.Values{"Action": {"SendMessage"}, "Version": {"2012-11-05"}, "MessageBody": {"hello"},
		"MessageAttribute.1.Name": {"color"}, "MessageAttribute.1.Value.DataType": {"String"}, "MessageAttribute.1.Value.StringValue": {"red"}}).
		expect(t, 200, xmlHead+`<SendMessageResponse`+xmlNS+`><SendMessageResult>`+
			`<MD5OfMessageBody>5d41402abc4b2a76b9719d911017c592</MD5OfMessageBody>`+
			`<MD5OfMessageAttributes>20ca9041878c8c65d5a4bf6eaf446c21</MD5OfMessageAttributes>`+
			`<MessageId>MID</MessageId></SendMessageResult>`+xmlMeta+`</SendMessageResponse>`)

	// A GET with everything in the query string, on the queue URL itself.
	e.get("/"+account+"/orders?Action=ReceiveMessage&AttributeName.1=SentTimestamp&AttributeName.2=ApproximateReceiveCount&MessageAttributeName.1=All").
		expect(t, 200, xmlHead+`<ReceiveMessageResponse`+xmlNS+`><ReceiveMessageResult><Message><MessageId>MID</MessageId>`+
			`<ReceiptHandle>RH</ReceiptHandle><MD5OfBody>5d41402abc4b2a76b9719d911017c592</MD5OfBody><Body>hello</Body>`+
			`<Attribute><Name>ApproximateReceiveCount</Name><Value>1</Value></Attribute>`+
			`<Attribute><Name>SentTimestamp</Name><Value>1700000000000</Value></Attribute>`+
			`<MD5OfMessageAttributes>20ca9041878c8c65d5a4bf6eaf446c21</MD5OfMessageAttributes>`+
			`<MessageAttribute><Name>color</Name><Value><StringValue>red</StringValue><DataType>String</DataType></Value></MessageAttribute>`+
			`</Message></ReceiveMessageResult>`+xmlMeta+`</ReceiveMessageResponse>`)

	// Empty receive, POST to / with QueueUrl.
	e.postForm("/", url.Values{"Action": {"ReceiveMessage"}, "QueueUrl": {queueURL}}).
		expect(t, 200, xmlHead+`<ReceiveMessageResponse`+xmlNS+`><ReceiveMessageResult/>`+xmlMeta+`</ReceiveMessageResponse>`)

	e.get("/?Action=GetQueueAttributes&QueueUrl="+url.QueryEscape(queueURL)+"&AttributeName.1=VisibilityTimeout&AttributeName.2=DelaySeconds").
		expect(t, 200, xmlHead+`<GetQueueAttributesResponse`+xmlNS+`><GetQueueAttributesResult>`+
			`<Attribute><Name>DelaySeconds</Name><Value>0</Value></Attribute>`+
			`<Attribute><Name>VisibilityTimeout</Name><Value>45</Value></Attribute>`+
			`</GetQueueAttributesResult>`+xmlMeta+`</GetQueueAttributesResponse>`)

	e.get("/"+account+"/orders?Action=ListQueueTags").
		expect(t, 200, xmlHead+`<ListQueueTagsResponse`+xmlNS+`><ListQueueTagsResult><Tag><Key>team</Key><Value>a</Value></Tag>`+
			`</ListQueueTagsResult>`+xmlMeta+`</ListQueueTagsResponse>`)

	e.postForm("/", url.Values{"Action": {"ListQueues"}}).
		expect(t, 200, xmlHead+`<ListQueuesResponse`+xmlNS+`><ListQueuesResult><QueueUrl>`+queueURL+`</QueueUrl>`+
			`</ListQueuesResult>`+xmlMeta+`</ListQueuesResponse>`)

	// Batch with one failure: flattened entries, no wrapper.
	r := e.postForm("/"+account+"/orders", url.Values{"Action": {"SendMessageBatch"},
		"SendMessageBatchRequestEntry.1.Id": {"a"}, "SendMessageBatchRequestEntry.1.MessageBody": {"hello"},
		"SendMessageBatchRequestEntry.2.Id": {"b"}, "SendMessageBatchRequestEntry.2.MessageBody": {"x"},
		"SendMessageBatchRequestEntry.2.MessageAttribute.1.Name": {"n"}, "SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType": {"Number"},
		"SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue": {"not-a-number"}})
	wantPrefix := xmlHead + `<SendMessageBatchResponse` + xmlNS + `><SendMessageBatchResult><SendMessageBatchResultEntry><Id>a</Id>` +
		`<MessageId>MID</MessageId><MD5OfMessageBody>5d41402abc4b2a76b9719d911017c592</MD5OfMessageBody></SendMessageBatchResultEntry>` +
		`<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault><Code>InvalidParameterValue</Code><Message>`
	if r.status != 200 || !strings.HasPrefix(r.body, wantPrefix) ||
		!strings.HasSuffix(r.body, `</Message></BatchResultErrorEntry></SendMessageBatchResult>`+xmlMeta+`</SendMessageBatchResponse>`) {
		t.Errorf("batch: %d %s", r.status, r.body)
	}

	// Actions without output: no Result element.
	e.postForm("/", url.Values{"Action": {"PurgeQueue"}, "QueueUrl": {queueURL}}).
		expect(t, 200, xmlHead+`<PurgeQueueResponse`+xmlNS+`>`+xmlMeta+`</PurgeQueueResponse>`)

	// Errors.
	e.postForm("/", url.Values{"Action": {"GetQueueUrl"}, "QueueName": {"missing"}}).
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>`+
			`<Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	e.get("/"+account+"/orders?Action=DeleteMessage&ReceiptHandle=bogus").
		expect(t, 404, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>ReceiptHandleIsInvalid</Code>`+
			`<Message>The input receipt handle &quot;bogus&quot; is not a valid receipt handle.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	e.get("/"+account+"/orders?Action=ReceiveMessage&MaxNumberOfMessages=11").
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>InvalidParameterValue</Code>`+
			`<Message>Value 11 for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.</Message>`+
			`<Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	// AWS-recorded: a bare element, not an ErrorResponse.
	e.get("/"+account+"/orders").expect(t, 404, `<UnknownOperationException/>`)
	e.postForm("/", url.Values{"Action": {"Publish"}}).
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>InvalidAction</Code>`+
			`<Message>The action Publish is not valid for this endpoint.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	e.postForm("/", url.Values{"Action": {"SendMessage"}, "QueueUrl": {queueURL}}).
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>MissingParameter</Code>`+
			`<Message>The request must contain the parameter MessageBody.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)

	// The JSON protocol on the queue path (PHP SDK, Java SDK v1 style).
	req, _ := http.NewRequest(http.MethodPost, queueURL, strings.NewReader(`{"QueueUrl":"`+queueURL+`","MessageBody":"hi"}`))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	resp := e.do(req)
	if resp.status != 200 || !strings.HasPrefix(resp.raw, `{"MessageId":"`) || !strings.HasSuffix(resp.raw, `","MD5OfMessageBody":"49f68a5c8493ec2c0bf489821c21fc3b"}`) {
		t.Errorf("JSON on queue path: %d %s", resp.status, resp.raw)
	}
}
