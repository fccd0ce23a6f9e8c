package sqs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// Text that is not valid Unicode (bytes that are not UTF-8, and in JSON an
// escaped surrogate that is not half of a pair) is refused by both
// protocols with the same code and status. encoding/json used to turn it
// into U+FFFD and accept the request.

// post sends a raw request and returns its status, its error code (from
// x-amzn-query-error or the XML <Code>, "" on success) and its body.
func post(t *testing.T, srv string, json bool, action, body string) (int, string, string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodPost, srv+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if json {
		r.Header.Set("Content-Type", "application/x-amz-json-1.0")
		r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	} else {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code, _, _ := strings.Cut(resp.Header.Get("X-Amzn-Query-Error"), ";")
	if !json {
		if _, rest, ok := strings.Cut(string(b), "<Code>"); ok {
			code, _, _ = strings.Cut(rest, "</Code>")
		}
	}
	return resp.StatusCode, code, string(b)
}

func TestInvalidUnicodeRefused(t *testing.T) {
	e := newEnv(t)
	q := e.createQueue("q", nil)
	jq := `"QueueUrl":"` + q + `"`
	form := func(kv ...string) string {
		v := url.Values{"QueueUrl": {q}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}
	tests := []struct {
		name, action string
		json, query  string // the same request in each protocol ("" if it has no Query form)
		code         *tidemq.ErrorCode
	}{
		{"a body that is not UTF-8", "SendMessage",
			`{` + jq + `,"MessageBody":"a` + "\xff" + `b"}`,
			form("Action", "SendMessage", "MessageBody", "a\xffb"), tidemq.ErrInvalidMessageContents},
		{"a body with an unpaired surrogate", "SendMessage",
			`{` + jq + `,"MessageBody":"a\ud800b"}`,
			form("Action", "SendMessage", "MessageBody", "a\xed\xa0\x80b"), tidemq.ErrInvalidMessageContents},
		{"a body with a reversed surrogate pair", "SendMessage",
			`{` + jq + `,"MessageBody":"\ude00\ud83d"}`, "", tidemq.ErrInvalidMessageContents},
		{"an attribute value that is not UTF-8", "SendMessage",
			`{` + jq + `,"MessageBody":"b","MessageAttributes":{"a":{"DataType":"String","StringValue":"` + "\xc3" + `"}}}`,
			form("Action", "SendMessage", "MessageBody", "b", "MessageAttribute.1.Name", "a",
				"MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "\xc3"),
			tidemq.ErrInvalidParameterValue},
		{"an attribute type that is not UTF-8", "SendMessage",
			`{` + jq + `,"MessageBody":"b","MessageAttributes":{"a":{"DataType":"String.` + "\xff" + `","StringValue":"v"}}}`,
			form("Action", "SendMessage", "MessageBody", "b", "MessageAttribute.1.Name", "a",
				"MessageAttribute.1.Value.DataType", "String.\xff", "MessageAttribute.1.Value.StringValue", "v"),
			tidemq.ErrInvalidParameterValue},
		{"an attribute name that is not UTF-8", "SendMessage",
			`{` + jq + `,"MessageBody":"b","MessageAttributes":{"` + "\xff" + `":{"DataType":"String","StringValue":"v"}}}`,
			form("Action", "SendMessage", "MessageBody", "b", "MessageAttribute.1.Name", "\xff",
				"MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "v"),
			tidemq.ErrInvalidParameterValue},
		{"a tag value that is not UTF-8", "TagQueue",
			`{` + jq + `,"Tags":{"k":"` + "\xff" + `"}}`,
			form("Action", "TagQueue", "Tag.1.Key", "k", "Tag.1.Value", "\xff"), tidemq.ErrInvalidParameterValue},
		{"a tag key with an unpaired surrogate", "TagQueue",
			`{` + jq + `,"Tags":{"\udc00":"v"}}`,
			form("Action", "TagQueue", "Tag.1.Key", "\xed\xb0\x80", "Tag.1.Value", "v"), tidemq.ErrInvalidParameterValue},
		{"a queue name that is not UTF-8", "CreateQueue",
			`{"QueueName":"q` + "\xff" + `"}`,
			url.Values{"Action": {"CreateQueue"}, "QueueName": {"q\xff"}}.Encode(), tidemq.ErrInvalidParameterValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, body := post(t, e.srv.URL, true, tt.action, tt.json)
			if status != tt.code.Status || code != tt.code.Code {
				t.Errorf("JSON: %d %s %.300s, want %d %s", status, code, body, tt.code.Status, tt.code.Code)
			}
			if tt.query == "" {
				return
			}
			status, code, body = post(t, e.srv.URL, false, tt.action, tt.query)
			if status != tt.code.Status || code != tt.code.Code {
				t.Errorf("Query: %d %s %.300s, want %d %s", status, code, body, tt.code.Status, tt.code.Code)
			}
		})
	}
	if n := e.depth("q"); n != 0 {
		t.Errorf("%d messages were sent", n)
	}

	// In a batch, as in Query, the entry fails and the others are sent.
	_, _, body := post(t, e.srv.URL, true, "SendMessageBatch",
		`{`+jq+`,"Entries":[{"Id":"good","MessageBody":"caf\u00e9 😀 \ud83d\ude00"},{"Id":"bad","MessageBody":"`+"\xff"+`"}]}`)
	var out struct {
		Successful []struct{ Id string }
		Failed     []struct{ Id, Code string }
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if len(out.Successful) != 1 || out.Successful[0].Id != "good" || len(out.Failed) != 1 ||
		out.Failed[0].Id != "bad" || out.Failed[0].Code != tidemq.ErrInvalidMessageContents.Code {
		t.Errorf("batch: %s", body)
	}
	// Valid text, escaped or not, is the text sent.
	_, _, body = post(t, e.srv.URL, true, "ReceiveMessage", `{`+jq+`}`)
	var got struct{ Messages []struct{ Body string } }
	if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Messages) != 1 || got.Messages[0].Body != "café 😀 😀" {
		t.Errorf("received %v %s", err, body)
	}
}
