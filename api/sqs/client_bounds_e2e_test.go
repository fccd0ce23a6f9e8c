package sqs_test

import (
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidemq/tidemq"
)

// What a message keeps of who sent and received it is bounded
// (tidemq.NewClientInfo): the User-Agent of each receive in its history and
// the access key it was sent with, which with authentication off is
// whatever the Authorization header claims.

// rawJSON posts a JSON 1.0 request with the given User-Agent and
// Authorization headers and decodes the answer into out.
func (e *env) rawJSON(action, body, userAgent, authorization string, out any) {
	e.t.Helper()
	r, err := http.NewRequest(http.MethodPost, e.srv.URL+"/", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	r.Header.Set("User-Agent", userAgent)
	r.Header.Set("Authorization", authorization)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %d %s", action, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s: %v: %s", action, err, b)
		}
	}
}

func authorizationFor(key, signature string) string {
	return "AWS4-HMAC-SHA256 Credential=" + key + "/20250101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=" + signature
}

func TestClientInfoIsBounded(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	// "€" is 3 bytes, so the bound falls inside one.
	userAgent := "aws-sdk-go-v2/1.30.3 " + strings.Repeat("€", 100_000)
	key := strings.Repeat("K", 300_000)
	auth := authorizationFor(key, "00")

	e.rawJSON("SendMessage", `{"QueueUrl":"`+url+`","MessageBody":"x"}`, userAgent, auth, nil)
	var out struct {
		Messages []struct{ Attributes map[string]string }
	}
	e.rawJSON("ReceiveMessage", `{"QueueUrl":"`+url+`","MessageSystemAttributeNames":["SenderId"]}`, userAgent, auth, &out)
	if len(out.Messages) != 1 {
		t.Fatalf("received %d messages", len(out.Messages))
	}
	if got := out.Messages[0].Attributes["SenderId"]; got != key[:tidemq.MaxAccessKeyIDLength] {
		t.Errorf("SenderId is %d bytes, want the claimed key cut to %d", len(got), tidemq.MaxAccessKeyIDLength)
	}

	msgs, err := e.eng.PeekMessages(e.ctx, tidemq.PeekMessagesParams{Queue: "q", IncludeInflight: true})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("peek: %v %d", err, len(msgs))
	}
	received := false
	for _, ev := range msgs[0].History {
		c := ev.Client
		if len(c.UserAgent) > tidemq.MaxClientUserAgentBytes || len(c.AccessKey) > tidemq.MaxAccessKeyIDLength {
			t.Errorf("%s event keeps a %d-byte User-Agent and a %d-byte access key", ev.Kind, len(c.UserAgent), len(c.AccessKey))
		}
		if ev.Kind != tidemq.HistoryReceived {
			continue
		}
		received = true
		if !utf8.ValidString(c.UserAgent) || !strings.HasPrefix(userAgent, c.UserAgent) ||
			len(c.UserAgent) < tidemq.MaxClientUserAgentBytes-(utf8.UTFMax-1) {
			t.Errorf("the receive keeps the User-Agent %.40q... (%d bytes), want its first %d bytes or a rune less",
				c.UserAgent, len(c.UserAgent), tidemq.MaxClientUserAgentBytes)
		}
	}
	if !received {
		t.Error("no receive in the history")
	}
}

// TestClientInfoHoldsNoHeader: what a message keeps must not keep its
// request's headers alive either. A short access key claimed in a long
// Authorization header was a substring of it, and kept all of it.
func TestClientInfoHoldsNoHeader(t *testing.T) {
	e := newEnv(t)
	url := e.createQueue("q", nil)
	const n, size = 16, 256 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		// Each request's headers are new strings on the server.
		e.rawJSON("SendMessage", `{"QueueUrl":"`+url+`","MessageBody":"x"}`,
			"agent "+strings.Repeat("a", size), authorizationFor("AKIDEXAMPLE", strings.Repeat("0", size)), nil)
	}
	for range n {
		e.rawJSON("ReceiveMessage", `{"QueueUrl":"`+url+`"}`,
			"agent "+strings.Repeat("a", size), authorizationFor("AKIDEXAMPLE", "00"), nil)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// 16 messages with their history hold a few KB; the headers were 8 MB.
	if retained := int64(after.HeapAlloc) - int64(before.HeapAlloc); retained > 2<<20 {
		t.Errorf("%d messages sent and received with %d-byte headers retain %d bytes", n, size, retained)
	}
}
