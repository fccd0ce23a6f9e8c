package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// `tidemq serve --store postgres://... --max-queue-bytes N` starts (it
// refused the flag before) and keeps the limit as the embedded store
// does: a full queue's sends get RequestThrottled, which SDKs retry, while
// receives and deletes drain it, and a drained queue takes sends again.
func TestServePostgresMaxQueueBytes(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	node := startServer(t, "--store", dsn, "--data-dir", filepath.Join(t.TempDir(), "a"), "--no-alarms", "--max-queue-bytes", "250")
	c := sdkClient(node)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("full")})
	if err != nil {
		t.Fatal(err)
	}
	q := created.QueueUrl
	body := aws.String(strings.Repeat("x", 100))
	for i := 0; i < 3; i++ { // 0, 100 and 200 bytes before: under 250
		if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: body}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: body})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "RequestThrottled" || !strings.Contains(ae.ErrorMessage(), "--max-queue-bytes") {
		t.Fatalf("a send to a queue holding 300 bytes under --max-queue-bytes 250: %v", err)
	}
	recv, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 1})
	if err != nil || len(recv.Messages) != 1 {
		t.Fatalf("a receive from the full queue: %v, %d messages", err, len(recv.Messages))
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: recv.Messages[0].ReceiptHandle}); err != nil {
		t.Fatalf("a delete from the full queue: %v", err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: body}); err != nil {
		t.Fatalf("a send once drained to 200 bytes: %v", err)
	}
}
