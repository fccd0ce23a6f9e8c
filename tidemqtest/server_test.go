package tidemqtest_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/tidemqtest"
)

func createQueue(t *testing.T, c *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

func receive(t *testing.T, c *sqs.Client, url string, vt, wait int32) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), VisibilityTimeout: vt,
		WaitTimeSeconds: wait, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

// The "done when": a message received with VisibilityTimeout 30
// comes back after the fake clock is advanced 31 seconds, with no sleep.
func TestVisibilityTimeoutOnTheFakeClock(t *testing.T) {
	srv := tidemqtest.NewServer(t)
	c := srv.SQS()
	url := createQueue(t, c, "orders", nil)
	if want := srv.QueueURL("orders"); url != want {
		t.Errorf("queue URL %s, QueueURL says %s", url, want)
	}
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("order 1")}); err != nil {
		t.Fatal(err)
	}
	first := receive(t, c, url, 30, 0)
	if len(first) != 1 || aws.ToString(first[0].Body) != "order 1" {
		t.Fatalf("first receive: %+v", first)
	}
	srv.Clock.Advance(29 * time.Second)
	if got := receive(t, c, url, 30, 0); len(got) != 0 {
		t.Fatalf("the message came back 29 s into a 30 s visibility timeout: %+v", got)
	}
	srv.Clock.Advance(2 * time.Second) // 31 s in all
	again := receive(t, c, url, 30, 0)
	if len(again) != 1 || aws.ToString(again[0].MessageId) != aws.ToString(first[0].MessageId) {
		t.Fatalf("after 31 s: %+v, want message %s back", again, aws.ToString(first[0].MessageId))
	}
	if n := again[0].Attributes["ApproximateReceiveCount"]; n != "2" {
		t.Errorf("ApproximateReceiveCount %s, want 2", n)
	}
}

// A long poll waiting on an in-flight message wakes when the clock passes
// the message's visibility timeout; it does not end by itself in real
// time.
func TestLongPollWakesWhenTheClockAdvances(t *testing.T) {
	srv := tidemqtest.NewServer(t)
	c := srv.SQS()
	url := createQueue(t, c, "jobs", nil)
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("job")}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, url, 30, 0); len(got) != 1 {
		t.Fatalf("first receive: %+v", got)
	}
	quiet := srv.Clock.Timers()
	got := make(chan []types.Message, 1)
	go func() {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 20})
		if err != nil {
			t.Errorf("long poll: %v", err)
		}
		got <- out.Messages
	}()
	if !srv.Clock.WaitForTimers(quiet+1, 10*time.Second) {
		t.Fatal("the long poll never waited on the clock")
	}
	select {
	case m := <-got:
		t.Fatalf("the long poll ended before the clock moved: %+v", m)
	case <-time.After(50 * time.Millisecond): // a margin for a wrong early answer to show, not a wait for the right one
	}
	srv.Clock.Advance(31 * time.Second)
	select {
	case m := <-got:
		if len(m) != 1 || aws.ToString(m[0].Body) != "job" {
			t.Fatalf("the woken long poll got %+v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not wake when the clock passed the visibility timeout")
	}
}

// A delayed message becomes receivable when the clock passes its delay.
func TestDelayOnTheFakeClock(t *testing.T) {
	srv := tidemqtest.NewServer(t)
	c := srv.SQS()
	url := createQueue(t, c, "later", map[string]string{"DelaySeconds": "600"})
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, url, 30, 0); len(got) != 0 {
		t.Fatalf("a 600 s delayed message was received at once: %+v", got)
	}
	srv.Clock.Advance(10 * time.Minute)
	if got := receive(t, c, url, 30, 0); len(got) != 1 {
		t.Fatalf("after 600 s: %+v", got)
	}
}

// The whole server answers: /health, the admin API, SNS delivering to SQS.
func TestTheWholeServerAnswers(t *testing.T) {
	srv := tidemqtest.NewServer(t)
	for _, path := range []string{"/health", "/tidemq/queues", "/tidemq/alarms", "/tidemq/triggers", "/metrics"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
	ctx := context.Background()
	c := srv.SQS()
	url := createQueue(t, c, "fanout", nil)
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	sn := srv.SNS()
	topic, err := sn.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sn.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String(attrs.Attributes["QueueArn"]), Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sn.Publish(ctx, &awssns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("hello")}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, c, url, 30, 0)
	if len(got) != 1 || aws.ToString(got[0].Body) != "hello" {
		t.Fatalf("the topic's message in the queue: %+v", got)
	}
}

// WithConfig applies a tidemq.yaml before the test starts; WithDataDir
// keeps the state across a restart.
func TestConfigAndDataDir(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(cfg, []byte(`version: 1
queues:
  - name: payments-dlq
  - name: payments
    visibilityTimeout: 45
    redrivePolicy: {deadLetterQueue: payments-dlq, maxReceiveCount: 1}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := tidemqtest.NewServer(t, tidemqtest.WithConfig(cfg, nil), tidemqtest.WithDataDir(dir))
	c := srv.SQS()
	ctx := context.Background()
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(srv.QueueURL("payments")),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("the configured queue: %v", err)
	}
	if out.Attributes["VisibilityTimeout"] != "45" || !strings.Contains(out.Attributes["RedrivePolicy"], "payments-dlq") {
		t.Fatalf("attributes %v", out.Attributes)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(srv.QueueURL("payments")), MessageBody: aws.String("p")}); err != nil {
		t.Fatal(err)
	}
	srv.Close()

	again := tidemqtest.NewServer(t, tidemqtest.WithDataDir(dir))
	if got := receive(t, again.SQS(), again.QueueURL("payments"), 30, 0); len(got) != 1 || aws.ToString(got[0].Body) != "p" {
		t.Fatalf("after a restart on the same directory: %+v", got)
	}
}

// A topology that does not lint fails the test before anything starts:
// checked through a recording testing.TB.
func TestConfigThatDoesNotLintFails(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "tidemq.yaml")
	if err := os.WriteFile(cfg, []byte("version: 1\nqueues:\n  - name: a\n    redrivePolicy: {deadLetterQueue: missing, maxReceiveCount: 3}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tidemqtest.NewServer(rec, tidemqtest.WithConfig(cfg, nil))
	}()
	<-done
	if !rec.fatal || !strings.Contains(rec.msg, "lint found errors") || !strings.Contains(rec.msg, "missing") {
		t.Fatalf("NewServer with a bad topology: fatal=%v %q", rec.fatal, rec.msg)
	}
}

// WithRealClock: no fake clock, time passes by itself.
func TestRealClock(t *testing.T) {
	srv := tidemqtest.NewServer(t, tidemqtest.WithRealClock())
	if srv.Clock != nil {
		t.Fatal("Clock is set with WithRealClock")
	}
	c := srv.SQS()
	url := createQueue(t, c, "now", nil)
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, url, 1, 0); len(got) != 1 {
		t.Fatalf("receive: %+v", got)
	}
	// A 1 s visibility timeout passes in real time: a long poll of up to
	// 10 s gets the message back about a second later.
	if got := receive(t, c, url, 1, 10); len(got) != 1 {
		t.Fatalf("receive again: %+v", got)
	}
}

// recorder is a testing.TB whose Fatal ends only the goroutine, recording
// the message, so that a test can check that NewServer fails.
type recorder struct {
	testing.TB
	fatal bool
	msg   string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) {
	r.fatal, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
