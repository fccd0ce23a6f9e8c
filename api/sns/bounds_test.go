package sns_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/tidemq/tidemq/api/awsquery"
	apisns "github.com/tidemq/tidemq/api/sns"
)

// SNS Query requests are held to the bounds SQS's are (package awsquery):
// the number of parameters, the length and depth of their names, and
// text that is not UTF-8. Before, the SNS handler parsed with
// url.ParseQuery, bounded only by Go's cap of 10,000 parameters, and Route
// sent a request past that cap to the SQS handler.

// answer is what a client reads from an answer: status, the response's
// namespace, error code and message.
type answer struct {
	status               int
	xmlns, code, message string
}

func read(t *testing.T, resp *http.Response) answer {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	a := answer{status: resp.StatusCode}
	cut := func(open, close string) string {
		_, rest, _ := strings.Cut(body, open)
		v, _, _ := strings.Cut(rest, close)
		return v
	}
	a.xmlns = cut(`xmlns="`, `"`)
	a.code = cut("<Code>", "</Code>")
	a.message = cut("<Message>", "</Message>")
	return a
}

func (e *env) postForm(body string) answer {
	e.t.Helper()
	resp, err := http.Post(e.srv.URL+"/", "application/x-www-form-urlencoded; charset=utf-8", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, resp)
}

func (e *env) get(query string) answer {
	e.t.Helper()
	resp, err := http.Get(e.srv.URL + "/?" + query)
	if err != nil {
		e.t.Fatal(err)
	}
	return read(e.t, resp)
}

func wantSNSError(t *testing.T, what string, a answer, status int, code string) {
	t.Helper()
	if a.status != status || a.code != code || a.xmlns != apisns.Namespace {
		t.Errorf("%s: %d %s %s %q, want %d %s from SNS", what, a.status, a.xmlns, a.code, a.message, status, code)
	}
}

func TestQueryBounds(t *testing.T) {
	e := newEnv(t)
	// 20,000 parameters: past awsquery's bound and Go's cap.
	wantSNSError(t, "20,000 parameters", e.postForm("Action=ListTopics"+strings.Repeat("&a=", 20000)), 400, "InvalidQueryParameter")
	wantSNSError(t, "2,001 parameters", e.postForm("Action=ListTopics"+strings.Repeat("&a=", awsquery.MaxParams)), 400, "InvalidQueryParameter")
	// A name of 1M dots, too long and too deep, within the body limit.
	wantSNSError(t, "a name of 1M dots", e.postForm("Action=ListTopics&"+strings.Repeat(".", 1<<20)+"=x"), 400, "InvalidQueryParameter")
	wantSNSError(t, "a name too long", e.postForm("Action=ListTopics&"+strings.Repeat("n", awsquery.MaxParamNameLength+1)+"=x"), 400, "InvalidQueryParameter")
	// The dots may be escaped; the bound is on the decoded name.
	wantSNSError(t, "a name too deep", e.postForm("Action=ListTopics&a"+strings.Repeat("%2Ea", awsquery.MaxParamDepth)+"=x"), 400, "InvalidQueryParameter")
	// The query string too, with the body's parameters.
	wantSNSError(t, "a deep name in the URL", e.get("Action=ListTopics&a"+strings.Repeat(".a", 1000)+"=x"), 400, "InvalidQueryParameter")
	half := strings.Repeat("&a=", awsquery.MaxParams/2)
	r := httptest.NewRequest(http.MethodPost, e.srv.URL+"/?Action=ListTopics"+half, strings.NewReader("Version=2010-03-31"+half))
	r.RequestURI = ""
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	wantSNSError(t, "parameters in the URL and the body", read(t, resp), 400, "InvalidQueryParameter")
	// A query string that does not decode is refused, not skipped.
	wantSNSError(t, "a bad escape in the URL", e.get("Action=ListTopics&a=%zz"), 400, "MalformedQueryString")

	// Within the bounds, the same requests are answered.
	deep := strings.Repeat(".a", awsquery.MaxParamDepth-1)
	var b strings.Builder
	b.WriteString("Action=ListTopics")
	for i := 1; i < awsquery.MaxParams; i++ {
		fmt.Fprintf(&b, "&p%d%s=", i, deep)
	}
	if a := e.postForm(b.String()); a.status != 200 || a.xmlns != apisns.Namespace {
		t.Errorf("every bound filled: %+v", a)
	}
}

// TestQueryDottedNameMemory: a body of the largest size whose one name is
// nearly all dots costs the handler about the body, whatever the dots
// describe.
func TestQueryDottedNameMemory(t *testing.T) {
	e := newEnv(t)
	h := apisns.NewHandler(apisns.Config{Service: e.svc, Logger: slog.New(slog.DiscardHandler)})
	prefix, suffix := "Action=ListTopics&", "=x"
	body := prefix + strings.Repeat("a.", (apisns.MaxRequestBytes-len(prefix)-len(suffix))/2) + suffix
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h.ServeHTTP(rec, r)
	runtime.ReadMemStats(&after)
	// Reading the body and copying it to a string take 2 bodies.
	if alloc, limit := after.TotalAlloc-before.TotalAlloc, 3*uint64(len(body)); alloc > limit {
		t.Errorf("serving a %d-byte body allocated %d bytes, want at most %d", len(body), alloc, limit)
	}
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>InvalidQueryParameter</Code>") {
		t.Errorf("%d %.300s", rec.Code, rec.Body.String())
	}
}

// Text that is not UTF-8 is refused as SNS refuses an invalid parameter.
// A message is the topic service's to check, with its own words, alone in
// a batch entry as it always was.
func TestInvalidUTF8Refused(t *testing.T) {
	e := newEnv(t)
	topic := e.topic("t", nil)
	qURL, qARN := e.queue("q", nil)
	e.subscribe(topic, qARN, map[string]string{"RawMessageDelivery": "true"})
	form := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	attr := func(name, value string) []string {
		return []string{"MessageAttributes.entry.1.Name", name, "MessageAttributes.entry.1.Value.DataType", "String",
			"MessageAttributes.entry.1.Value.StringValue", value}
	}
	tests := []struct{ name, body, message string }{
		{"a message", form("Action", "Publish", "TopicArn", topic, "Message", "a\xffb"),
			"Invalid parameter: Message Reason: Message must be valid UTF-8"},
		{"a subject", form("Action", "Publish", "TopicArn", topic, "Message", "m", "Subject", "s\xff"),
			"Invalid parameter: Subject Reason: it is not valid UTF-8."},
		{"an attribute value", form(append([]string{"Action", "Publish", "TopicArn", topic, "Message", "m"}, attr("a", "\xc3")...)...),
			"Invalid parameter: MessageAttributes.entry.1.Value.StringValue Reason: it is not valid UTF-8."},
		{"an attribute name", form(append([]string{"Action", "Publish", "TopicArn", topic, "Message", "m"}, attr("\xff", "v")...)...),
			"Invalid parameter: MessageAttributes.entry.1.Name Reason: it is not valid UTF-8."},
		{"a batch entry's subject", form("Action", "PublishBatch", "TopicArn", topic, "PublishBatchRequestEntries.member.1.Id", "a",
			"PublishBatchRequestEntries.member.1.Message", "m", "PublishBatchRequestEntries.member.1.Subject", "\xff"),
			"Invalid parameter: PublishBatchRequestEntries.member.1.Subject Reason: it is not valid UTF-8."},
		{"a topic name", form("Action", "CreateTopic", "Name", "t\xff"),
			"Invalid parameter: Name Reason: it is not valid UTF-8."},
		{"a topic attribute", form("Action", "SetTopicAttributes", "TopicArn", topic, "AttributeName", "DisplayName", "AttributeValue", "\xff"),
			"Invalid parameter: AttributeValue Reason: it is not valid UTF-8."},
		{"a tag value", form("Action", "TagResource", "ResourceArn", topic, "Tags.member.1.Key", "k", "Tags.member.1.Value", "\xff"),
			"Invalid parameter: Tags.member.1.Value Reason: it is not valid UTF-8."},
		{"a parameter name", "Action=ListTopics&%FF=x",
			"A parameter name is invalid. Reason: it is not valid UTF-8."},
	}
	for _, tt := range tests {
		a := e.postForm(tt.body)
		code := "InvalidParameter"
		if tt.name == "a parameter name" {
			code = "InvalidParameterValue"
		}
		wantSNSError(t, tt.name, a, 400, code)
		if a.message != tt.message {
			t.Errorf("%s: message %q, want %q", tt.name, a.message, tt.message)
		}
	}
	if msgs := e.receive(qURL, 10); len(msgs) != 0 {
		t.Errorf("%d messages were delivered", len(msgs))
	}

	// In a batch, an entry whose message is not UTF-8 fails the request,
	// as AWS rejects a batch with an entry that is not valid.
	a := e.postForm(form("Action", "PublishBatch", "TopicArn", topic,
		"PublishBatchRequestEntries.member.1.Id", "good", "PublishBatchRequestEntries.member.1.Message", "café",
		"PublishBatchRequestEntries.member.2.Id", "bad", "PublishBatchRequestEntries.member.2.Message", "\xff"))
	if a.status != 400 || a.code != "InvalidParameter" || a.message != "Invalid parameter: Message Reason: Message must be valid UTF-8" {
		t.Errorf("batch: %+v", a)
	}
	if msgs := e.receive(qURL, 10); len(msgs) != 0 {
		t.Errorf("delivered %v", msgs)
	}
}
