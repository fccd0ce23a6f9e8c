package tidemqtest_test

// These tests are the package's examples: what a test of a queue consumer
// looks like with tidemqtest. Each runs in CI.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/tidemqtest"
)

// handle is the code under test: a consumer's handler that fails on
// some messages.
func handle(body string) error {
	if body == "poison" {
		return errors.New("cannot parse")
	}
	return nil
}

// consumeOnce is the consumer loop's body: receive, handle, delete what
// was handled. What fails is left to come back after its visibility
// timeout, or to go to the dead-letter queue.
func consumeOnce(ctx context.Context, c *sqs.Client, url string) (handled int, err error) {
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil {
		return 0, err
	}
	for _, m := range out.Messages {
		if handle(aws.ToString(m.Body)) != nil {
			continue
		}
		if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
			return handled, err
		}
		handled++
	}
	return handled, nil
}

// Example: a SAM template's stack, a message that fails once and lands in
// the dead-letter queue (maxReceiveCount 1) when its visibility timeout
// has passed, on the fake clock, without sleeping.
func TestExampleStackFromTemplateAndDeadLetter(t *testing.T) {
	// WithoutLint: the consumer of shop-work is this test, which the
	// template does not show (the lint would call the queue unconsumed).
	srv := tidemqtest.NewServer(t, tidemqtest.WithConfig("testdata/template.yaml", map[string]string{"Prefix": "shop"}),
		tidemqtest.WithoutLint())
	ctx := context.Background()
	c := srv.SQS()
	work, dlq := srv.QueueURL("shop-work"), srv.QueueURL("shop-work-dlq")

	// The producer publishes to the topic; the queue is subscribed to it.
	topic := "arn:aws:sns:" + srv.Region + ":" + srv.AccountID + ":shop-events"
	for _, body := range []string{"order 1", "poison"} {
		if _, err := srv.SNS().Publish(ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	// The topic wraps what it delivers in a notification unless the
	// subscription asks for raw delivery; this consumer reads raw bodies,
	// so send the poison pill straight to the queue as well.
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(work), MessageBody: aws.String("poison")}); err != nil {
		t.Fatal(err)
	}
	if _, err := consumeOnce(ctx, c, work); err != nil {
		t.Fatal(err)
	}
	srv.Clock.Advance(61 * time.Second) // the template's VisibilityTimeout is 60
	// The next receive finds the failed message at its second receive and
	// moves it to the dead-letter queue instead of delivering it.
	if _, err := consumeOnce(ctx, c, work); err != nil {
		t.Fatal(err)
	}
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "poison" {
		t.Fatalf("dead-letter queue holds %+v, want the poison message", out.Messages)
	}
}

// Example: a consumer that long-polls in another goroutine, and a test
// that advances the clock once the poll waits.
func TestExampleLongPollingConsumer(t *testing.T) {
	srv := tidemqtest.NewServer(t)
	ctx := context.Background()
	c := srv.SQS()
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("reports"),
		Attributes: map[string]string{"DelaySeconds": "300"}})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(out.QueueUrl)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("report")}); err != nil {
		t.Fatal(err)
	}
	quiet := srv.Clock.Timers() // the idle server's timers
	got := make(chan string, 1)
	go func() {
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 20})
		if err != nil || len(r.Messages) == 0 {
			got <- ""
			return
		}
		got <- aws.ToString(r.Messages[0].Body)
	}()
	// The poll waits on the clock once it has a timer: now move time.
	if !srv.Clock.WaitForTimers(quiet+1, 10*time.Second) {
		t.Fatal("the long poll did not start waiting")
	}
	srv.Clock.Advance(5 * time.Minute) // the queue's 300 s delay
	select {
	case body := <-got:
		if body != "report" {
			t.Fatalf("the long poll got %q", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not wake")
	}
}
