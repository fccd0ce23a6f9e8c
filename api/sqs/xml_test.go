package sqs

import (
	"bytes"
	"encoding/xml"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/tidemq/tidemq"
)

func xmlCall(action string) *call {
	h := NewHandler(Config{Logger: slog.New(slog.DiscardHandler)}).(*handler)
	return &call{h: h, r: httptest.NewRequest("POST", "/", nil), action: action, requestID: "req-1"}
}

func renderXML(t *testing.T, action string, out output) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if status := xmlCall(action).writeXMLOutput(rec, out); status != 200 {
		t.Fatalf("status %d", status)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/xml" {
		t.Errorf("Content-Type %q", ct)
	}
	body := rec.Body.String()
	// Whatever the shape, the document must be well formed.
	dec := xml.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed XML: %v\n%s", err, body)
			}
			break
		}
	}
	return body
}

const (
	pre  = `<?xml version="1.0"?>`
	ns   = ` xmlns="http://queue.amazonaws.com/doc/2012-11-05/"`
	meta = `<ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata>`
)

func TestXMLEncode(t *testing.T) {
	tests := []struct {
		name, action string
		out          output
		want         string
	}{{
		name: "no output", action: "DeleteMessage", out: nil,
		want: pre + `<DeleteMessageResponse` + ns + `>` + meta + `</DeleteMessageResponse>`,
	}, {
		name: "empty receive", action: "ReceiveMessage", out: &receiveMessageOutput{},
		want: pre + `<ReceiveMessageResponse` + ns + `><ReceiveMessageResult/>` + meta + `</ReceiveMessageResponse>`,
	}, {
		name: "flattened list, no wrapper", action: "ListQueues",
		out: &listQueuesOutput{QueueURLs: []string{"http://h/0/a", "http://h/0/b"}, NextToken: "t"},
		want: pre + `<ListQueuesResponse` + ns + `><ListQueuesResult><QueueUrl>http://h/0/a</QueueUrl>` +
			`<QueueUrl>http://h/0/b</QueueUrl><NextToken>t</NextToken></ListQueuesResult>` + meta + `</ListQueuesResponse>`,
	}, {
		name: "dead-letter sources use QueueUrl too", action: "ListDeadLetterSourceQueues",
		out: &listDeadLetterSourceQueuesOutput{QueueURLs: []string{"http://h/0/a"}},
		want: pre + `<ListDeadLetterSourceQueuesResponse` + ns + `><ListDeadLetterSourceQueuesResult>` +
			`<QueueUrl>http://h/0/a</QueueUrl></ListDeadLetterSourceQueuesResult>` + meta + `</ListDeadLetterSourceQueuesResponse>`,
	}, {
		name: "attribute map, sorted", action: "GetQueueAttributes",
		out: &getQueueAttributesOutput{Attributes: map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "0"}},
		want: pre + `<GetQueueAttributesResponse` + ns + `><GetQueueAttributesResult>` +
			`<Attribute><Name>DelaySeconds</Name><Value>0</Value></Attribute>` +
			`<Attribute><Name>VisibilityTimeout</Name><Value>30</Value></Attribute>` +
			`</GetQueueAttributesResult>` + meta + `</GetQueueAttributesResponse>`,
	}, {
		name: "tag map", action: "ListQueueTags",
		out: &listQueueTagsOutput{Tags: map[string]string{"team": "x"}},
		want: pre + `<ListQueueTagsResponse` + ns + `><ListQueueTagsResult><Tag><Key>team</Key><Value>x</Value></Tag>` +
			`</ListQueueTagsResult>` + meta + `</ListQueueTagsResponse>`,
	}, {
		name: "send result", action: "SendMessage",
		out: &sendResult{MessageID: "m1", MD5OfMessageBody: "b", MD5OfMessageAttributes: "a", SequenceNumber: "7"},
		want: pre + `<SendMessageResponse` + ns + `><SendMessageResult><MD5OfMessageBody>b</MD5OfMessageBody>` +
			`<MD5OfMessageAttributes>a</MD5OfMessageAttributes><MessageId>m1</MessageId>` +
			`<SequenceNumber>7</SequenceNumber></SendMessageResult>` + meta + `</SendMessageResponse>`,
	}, {
		name: "batch results and errors", action: "SendMessageBatch",
		out: &sendMessageBatchOutput{
			Successful: []sendResult{{ID: "a", MessageID: "m1", MD5OfMessageBody: "b"}},
			Failed:     []batchError{{ID: "b", SenderFault: true, Code: "InvalidParameterValue", Message: "bad"}},
		},
		want: pre + `<SendMessageBatchResponse` + ns + `><SendMessageBatchResult>` +
			`<SendMessageBatchResultEntry><Id>a</Id><MessageId>m1</MessageId><MD5OfMessageBody>b</MD5OfMessageBody></SendMessageBatchResultEntry>` +
			`<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault><Code>InvalidParameterValue</Code><Message>bad</Message></BatchResultErrorEntry>` +
			`</SendMessageBatchResult>` + meta + `</SendMessageBatchResponse>`,
	}, {
		name: "id-only batch results", action: "DeleteMessageBatch",
		out: &batchIDOutput{entry: "DeleteMessageBatchResultEntry", Successful: []batchIDEntry{{ID: "1"}, {ID: "2"}}},
		want: pre + `<DeleteMessageBatchResponse` + ns + `><DeleteMessageBatchResult>` +
			`<DeleteMessageBatchResultEntry><Id>1</Id></DeleteMessageBatchResultEntry>` +
			`<DeleteMessageBatchResultEntry><Id>2</Id></DeleteMessageBatchResultEntry>` +
			`</DeleteMessageBatchResult>` + meta + `</DeleteMessageBatchResponse>`,
	}, {
		name: "received message with attribute maps and escaping", action: "ReceiveMessage",
		out: &receiveMessageOutput{Messages: []wireMessage{{
			MessageID: "m1", ReceiptHandle: "rh", MD5OfBody: "md5", Body: "a<b>&\"c\"\r\n",
			Attributes:             map[string]string{"SentTimestamp": "1700000000000", "SenderId": "AKID"},
			MD5OfMessageAttributes: "amd5",
			MessageAttributes: map[string]wireAttribute{
				"s": {DataType: "String", StringValue: "red"},
				"b": {DataType: "Binary", BinaryValue: []byte{0, 0xff}},
			},
		}}},
		want: pre + `<ReceiveMessageResponse` + ns + `><ReceiveMessageResult><Message><MessageId>m1</MessageId>` +
			`<ReceiptHandle>rh</ReceiptHandle><MD5OfBody>md5</MD5OfBody><Body>a&lt;b&gt;&amp;&quot;c&quot;&#xD;` + "\n" + `</Body>` +
			`<Attribute><Name>SenderId</Name><Value>AKID</Value></Attribute>` +
			`<Attribute><Name>SentTimestamp</Name><Value>1700000000000</Value></Attribute>` +
			`<MD5OfMessageAttributes>amd5</MD5OfMessageAttributes>` +
			`<MessageAttribute><Name>b</Name><Value><BinaryValue>AP8=</BinaryValue><DataType>Binary</DataType></Value></MessageAttribute>` +
			`<MessageAttribute><Name>s</Name><Value><StringValue>red</StringValue><DataType>String</DataType></Value></MessageAttribute>` +
			`</Message></ReceiveMessageResult>` + meta + `</ReceiveMessageResponse>`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderXML(t, tt.action, tt.out); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestXMLError(t *testing.T) {
	rec := httptest.NewRecorder()
	status := xmlCall("GetQueueUrl").writeXMLError(rec, tidemq.NonExistentQueue())
	want := pre + `<ErrorResponse` + ns + `><Error><Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>` +
		`<Message>The specified queue does not exist for this wsdl version.</Message><Detail/></Error>` +
		`<RequestId>req-1</RequestId></ErrorResponse>`
	if status != 400 || rec.Code != 400 || rec.Body.String() != want {
		t.Errorf("status %d\n%s\nwant\n%s", status, rec.Body.String(), want)
	}
	rec = httptest.NewRecorder()
	xmlCall("X").writeXMLError(rec, tidemq.InternalFailure())
	if rec.Code != 500 || !bytes.Contains(rec.Body.Bytes(), []byte("<Type>Receiver</Type><Code>InternalFailure</Code>")) {
		t.Errorf("internal: %d %s", rec.Code, rec.Body.String())
	}
}
