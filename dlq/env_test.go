package dlq_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/dlq"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

// The toolkit end to end: dlq.Client (through aws-sdk-go-v2 and tidemq's
// extensions) against the SQS handler over the real engine on a fake clock.

const account = "000000000000"

func arn(name string) string { return "arn:aws:sqs:us-east-1:" + account + ":" + name }

type env struct {
	t      *testing.T
	ctx    context.Context
	clk    *clocktest.Clock
	eng    *engine.Engine
	srv    *httptest.Server
	client *awssqs.Client
	out    *bytes.Buffer
	errs   *bytes.Buffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, Region: "us-east-1", AccountID: account,
		SweepInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: eng, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(func() {
		srv.Close()
		_ = eng.Close()
	})
	return &env{t: t, ctx: context.Background(), clk: clk, eng: eng, srv: srv,
		client: newClient(srv.URL, "AKIDTEST", ""), out: &bytes.Buffer{}, errs: &bytes.Buffer{}}
}

// newClient is an SDK client with its own access key and application id
// (which the SDK puts in the User-Agent as app/<id>).
func newClient(endpoint, key, app string) *awssqs.Client {
	return awssqs.New(awssqs.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(key, "secret", ""),
		Retryer:      retry.AddWithMaxAttempts(retry.NewStandard(), 1),
		AppID:        app,
	})
}

// tool is a dlq.Client on the env's endpoint; mode forces tidemq or AWS
// behaviour (ModeAuto detects).
func (e *env) tool(mode dlq.Mode) *dlq.Client {
	e.out.Reset()
	e.errs.Reset()
	return &dlq.Client{SQS: e.client, Out: e.out, Err: e.errs, Mode: mode, Now: e.clk.Now, TaskPoll: 5 * time.Millisecond}
}

func (e *env) createQueue(name string, attrs map[string]string) string {
	e.t.Helper()
	out, err := e.client.CreateQueue(e.ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		e.t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// source creates a queue that dead-letters into dlq after maxReceive
// receives, with a visibility timeout of 0 so a message can be received
// again at once.
func (e *env) source(name, dlqName string, maxReceive int) string {
	attrs := map[string]string{
		"VisibilityTimeout": "0",
		"RedrivePolicy":     `{"deadLetterTargetArn":"` + arn(dlqName) + `","maxReceiveCount":` + strconv.Itoa(maxReceive) + `}`,
	}
	if len(name) > 5 && name[len(name)-5:] == ".fifo" {
		attrs["FifoQueue"] = "true"
	}
	return e.createQueue(name, attrs)
}

func (e *env) send(url string, in *awssqs.SendMessageInput) {
	e.t.Helper()
	in.QueueUrl = aws.String(url)
	if _, err := e.client.SendMessage(e.ctx, in); err != nil {
		e.t.Fatalf("send: %v", err)
	}
}

// deadLetterAll receives from a maxReceiveCount-1 source (visibility 0)
// until every message has moved to its DLQ.
func (e *env) deadLetterAll(url string) {
	e.t.Helper()
	for range 100 {
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(out.Messages) == 0 && e.depth(url) == 0 {
			return
		}
	}
	e.t.Fatalf("%s never emptied", url)
}

func (e *env) attrs(url string) map[string]string {
	e.t.Helper()
	out, err := e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.Attributes
}

// depth is visible + in flight + delayed.
func (e *env) depth(url string) int {
	a := e.attrs(url)
	n := 0
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		v, _ := strconv.Atoi(a[k])
		n += v
	}
	return n
}

// receiveAll receives every visible message of a queue with all attributes
// and deletes them.
func (e *env) receiveAll(url string) []types.Message {
	e.t.Helper()
	var all []types.Message
	for {
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			VisibilityTimeout: 60, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames: []string{"All"}})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return all
		}
		for _, m := range out.Messages {
			if _, err := e.client.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				e.t.Fatal(err)
			}
		}
		all = append(all, out.Messages...)
	}
}

func str(s string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(s)}
}
