package sqs_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// post sends a raw JSON 1.0 request with the given X-Amz-Target.
func (e *env) post(target, body string) (int, string, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("User-Agent", "ext-test/1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestExtensionPeekMessages(t *testing.T) {
	e := newEnv(t)
	dlq := e.createQueue("x-dlq", nil)
	src := e.createQueue("x", map[string]string{"VisibilityTimeout": "10",
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:x-dlq","maxReceiveCount":1}`})
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &src, MessageBody: aws.String("héllo"),
		MessageAttributes: map[string]types.MessageAttributeValue{"k": {DataType: aws.String("String"), StringValue: aws.String("v")}}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &src}); err != nil {
			t.Fatal(err)
		}
		e.clk.Advance(11 * time.Second)
	}
	for range 2 { // peeking twice changes nothing
		status, body, _ := e.post("TidemqExtensions.PeekMessages", `{"QueueUrl":"`+dlq+`","MaxNumberOfMessages":5}`)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		var out struct {
			Messages []map[string]json.RawMessage
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Messages) != 1 {
			t.Fatalf("%s %v", body, err)
		}
		m := out.Messages[0]
		if _, ok := m["ReceiptHandle"]; ok {
			t.Errorf("a peek has no receipt handle: %s", body)
		}
		var attrs map[string]string
		_ = json.Unmarshal(m["Attributes"], &attrs)
		if attrs["ApproximateReceiveCount"] != "1" || attrs["DeadLetterQueueSourceArn"] != "arn:aws:sqs:us-east-1:000000000000:x" {
			t.Errorf("attributes %v", attrs)
		}
		var hist []struct {
			Time   int64
			Kind   string
			Queue  string
			Client *struct{ Addr, UserAgent, AccessKey string }
			Detail string
		}
		if err := json.Unmarshal(m["History"], &hist); err != nil {
			t.Fatal(err)
		}
		kinds := []string{}
		for _, h := range hist {
			kinds = append(kinds, h.Kind)
		}
		if strings.Join(kinds, ",") != "sent,received,visibility-expired,dead-lettered" {
			t.Errorf("history kinds %v", kinds)
		}
		if r := hist[1]; r.Time != 1_700_000_000_000 || r.Client == nil || r.Client.AccessKey != "AKIDTEST" ||
			!strings.HasPrefix(r.Client.UserAgent, "aws-sdk-go-v2/") || r.Client.Addr == "" || r.Queue != "x" {
			t.Errorf("receive event %+v", r)
		}
		if !strings.Contains(hist[3].Detail, "maxReceiveCount 1 reached") {
			t.Errorf("dead-letter event %+v", hist[3])
		}
		if !strings.Contains(body, `"Body":"héllo"`) || !strings.Contains(body, `"MessageAttributes":{"k":{"StringValue":"v","DataType":"String"}}`) {
			t.Errorf("body %s", body)
		}
	}
}

func TestExtensionListQueueStats(t *testing.T) {
	e := newEnv(t)
	dlq := e.createQueue("s-dlq", nil)
	e.createQueue("s", map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:s-dlq","maxReceiveCount":3}`})
	if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &dlq, MessageBody: aws.String("m")}); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(42 * time.Second)
	status, body, _ := e.post("TidemqExtensions.ListQueueStats", `{"QueueNamePrefix":"s"}`)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	for _, want := range []string{
		`{"QueueUrl":"` + e.srv.URL + `/000000000000/s","QueueArn":"arn:aws:sqs:us-east-1:000000000000:s","Fifo":false,"Visible":0,"InFlight":0,"Delayed":0,"OldestAgeSeconds":0,"RetentionSeconds":345600,"DeadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:s-dlq","MaxReceiveCount":3,"IsDeadLetterQueue":false}`,
		`"Visible":1,"InFlight":0,"Delayed":0,"OldestAgeSeconds":42,"RetentionSeconds":345600,"IsDeadLetterQueue":true}`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("stats lack %s:\n%s", want, body)
		}
	}
}

// Extensions are invisible to AWS clients: only the TidemqExtensions target
// reaches them; unknown extensions, the AmazonSQS prefix and the Query
// protocol answer as for any unknown action.
func TestExtensionRouting(t *testing.T) {
	e := newEnv(t)
	url0 := e.createQueue("r", nil)
	for _, target := range []string{"TidemqExtensions.Nope", "AmazonSQS.PeekMessages", "AmazonSQS.TidemqExtensions.PeekMessages"} {
		status, body, h := e.post(target, `{"QueueUrl":"`+url0+`"}`)
		if status != 400 || !strings.Contains(body, "InvalidAction") || !strings.HasPrefix(h.Get("X-Amzn-Query-Error"), "InvalidAction;") {
			t.Errorf("%s: %d %s", target, status, body)
		}
	}
	status, body, _ := e.post("TidemqExtensions.PeekMessages", `{"QueueUrl":"`+e.srv.URL+`/000000000000/missing"}`)
	if status != 400 || !strings.Contains(body, "QueueDoesNotExist") {
		t.Errorf("missing queue: %d %s", status, body)
	}
	status, body, _ = e.post("TidemqExtensions.PeekMessages", `{"QueueUrl":"`+url0+`","MaxNumberOfMessages":0}`)
	if status != 400 || !strings.Contains(body, "MaxNumberOfMessages") {
		t.Errorf("0 messages: %d %s", status, body)
	}
	resp, err := http.PostForm(e.srv.URL+"/", url.Values{"Action": {"TidemqExtensions.PeekMessages"}, "QueueUrl": {url0}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "InvalidAction") {
		t.Errorf("Query protocol: %d %s", resp.StatusCode, b)
	}
}

// TestExtensionListQueueStatsPerRegion: ListQueueStats lists the queues of
// the request's region only, as ListQueues does. `tidemq dlq list` listed
// another region's DLQ under its plain name, which no command of this
// region could then peek or redrive.
func TestExtensionListQueueStatsPerRegion(t *testing.T) {
	e := newEnv(t)
	west := awssqs.New(awssqs.Options{BaseEndpoint: aws.String(e.srv.URL), Region: "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")})
	if _, err := west.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String("west-dlq")}); err != nil {
		t.Fatal(err)
	}
	e.createQueue("east-dlq", nil)
	stats := func(region string) string {
		body := `{"QueueNamePrefix":""}`
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "TidemqExtensions.ListQueueStats")
		if region != "" {
			sum := sha256.Sum256([]byte(body))
			if err := v4.NewSigner().SignHTTP(e.ctx, aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret"},
				req, hex.EncodeToString(sum[:]), "sqs", region, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Queues []struct{ QueueUrl, QueueArn string }
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("ListQueueStats in %q: %d %v", region, resp.StatusCode, err)
		}
		var arns []string
		for _, q := range out.Queues {
			arns = append(arns, q.QueueArn)
		}
		return strings.Join(arns, " ")
	}
	if got, want := stats(""), "arn:aws:sqs:us-east-1:000000000000:east-dlq"; got != want {
		t.Errorf("unsigned (the default region) lists %q, want %q", got, want)
	}
	if got, want := stats("eu-west-1"), "arn:aws:sqs:eu-west-1:000000000000:west-dlq"; got != want {
		t.Errorf("eu-west-1 lists %q, want %q", got, want)
	}
}
