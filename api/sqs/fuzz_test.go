package sqs

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/api/awsquery"
)

func actionNames() []string {
	names := make([]string, 0, len(actions))
	for n := range actions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func quietHandler() http.Handler {
	return NewHandler(Config{Broker: &stubBroker{}, Logger: slog.New(slog.DiscardHandler)})
}

// checkResponse checks what every answer must be, whatever the input: a
// status the catalogue can produce (never a 500 from bad input) and a body
// in the request's protocol.
func checkResponse(t *testing.T, rec *httptest.ResponseRecorder, wantCT string) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != wantCT {
		t.Fatalf("Content-Type %q, want %q", ct, wantCT)
	}
	if rec.Header().Get("X-Amzn-Requestid") == "" {
		t.Fatal("no request id")
	}
}

// FuzzJSONDecode feeds arbitrary bodies to every action's JSON decoder and
// to the whole handler (over a stub broker): nothing may panic, and the
// answer is always a JSON 1.0 response.
func FuzzJSONDecode(f *testing.F) {
	f.Add("SendMessage", []byte(`{"QueueUrl":"http://h/000000000000/q","MessageBody":"hi","MessageAttributes":{"a":{"DataType":"Binary","BinaryValue":"AP8="}}}`))
	f.Add("SendMessageBatch", []byte(`{"QueueUrl":"q","Entries":[{"Id":"1","MessageBody":"x","DelaySeconds":1}]}`))
	f.Add("ReceiveMessage", []byte(`{"QueueUrl":"q","MaxNumberOfMessages":10,"MessageAttributeNames":["All"],"AttributeNames":["All"]}`))
	f.Add("CreateQueue", []byte(`{"QueueName":"q","Attributes":{"DelaySeconds":"1"},"tags":{"a":"b"}}`))
	f.Add("ChangeMessageVisibilityBatch", []byte(`{"QueueUrl":"q","Entries":[{"Id":"1","ReceiptHandle":"rh","VisibilityTimeout":"x"}]}`))
	f.Add("DeleteMessage", []byte(`[1,2`))
	f.Add("ListQueues", []byte(`{"MaxResults":1e99}`))
	f.Add("Nope", []byte(``))
	// Text that is not valid Unicode, where it is judged by the domain
	// (bodies, attribute values) and where it is not.
	f.Add("SendMessageBatch", []byte(`{"QueueUrl":"q","Entries":[{"Id":"1","MessageBody":"\ud800","MessageAttributes":{"a":{"DataType":"String","StringValue":"`+"\xff"+`"}}}]}`))
	f.Add("TagQueue", []byte(`{"QueueUrl":"q","Tags":{"\udc00":"`+"\xc3"+`"}}`))
	h := quietHandler()
	f.Fuzz(func(t *testing.T, action string, body []byte) {
		for _, name := range actionNames() {
			_, _ = actions[name].decodeJSON(body)
		}
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(body)))
		r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
		r.Header.Set("Content-Type", jsonContentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		checkResponse(t, rec, jsonContentType)
	})
}

// FuzzQueryDecode does the same for Query forms, posted to / and to a
// queue path.
func FuzzQueryDecode(f *testing.F) {
	f.Add("Action=SendMessageBatch&QueueUrl=q&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.MessageBody=x" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Name=b&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType=Binary" +
		"&SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.BinaryValue=AP8%3D")
	f.Add("Action=ReceiveMessage&AttributeName.1=All&MessageAttributeName.1=a.*&MaxNumberOfMessages=11")
	f.Add("Action=CreateQueue&QueueName=q&Attribute.1.Name=DelaySeconds&Attribute.1.Value=1&Tag.1.Key=k&Tag.1.Value=v")
	f.Add("Action=DeleteMessageBatch&DeleteMessageBatchRequestEntry.99999999999999999999.Id=1")
	f.Add("Action=GetQueueAttributes&AttributeName..1=x&AttributeName.=y&.=z&%zz")
	f.Add("Action=ChangeMessageVisibility&ReceiptHandle=rh&VisibilityTimeout=-1")
	// Names at and past the parser's bounds, escaped dots, and an item
	// whose parameters are not adjacent once sorted.
	f.Add("Action=ListQueues&a" + strings.Repeat(".a", awsquery.MaxParamDepth-1) + "=x&b" + strings.Repeat("%2Eb", awsquery.MaxParamDepth) + "=y")
	f.Add("Action=ListQueues&" + strings.Repeat("n", awsquery.MaxParamNameLength+1) + "=x&a;b=c")
	f.Add("Action=DeleteMessageBatch&DeleteMessageBatchRequestEntry.1=v&DeleteMessageBatchRequestEntry.1-=w" +
		"&DeleteMessageBatchRequestEntry.1.Id=a&DeleteMessageBatchRequestEntry.01.Id=b&DeleteMessageBatchRequestEntry.1.Id=c")
	h := quietHandler()
	f.Fuzz(func(t *testing.T, form string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(form))
		if q, err := parseQueryParams(r, []byte(form)); err == nil {
			for _, name := range actionNames() {
				_, _ = actions[name].decodeQuery(q)
			}
		}
		for _, path := range []string{"/", "/000000000000/q"} {
			r := httptest.NewRequest(http.MethodPost, path, io.NopCloser(strings.NewReader(form)))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			checkResponse(t, rec, "text/xml")
		}
	})
}
