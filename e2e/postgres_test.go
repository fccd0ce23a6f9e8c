package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// sdkClient is an aws-sdk-go-v2 SQS client of s (MD5 checks on, as by
// default).
func sdkClient(s *server) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(s.url),
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDPOSTGRES", "secret", ""),
		RetryMaxAttempts: 1,
	})
}

// Two nodes on one PostgreSQL serve the same queues: a message sent through
// one is received through the other, and a long poll on one is woken by a
// send on the other (LISTEN/NOTIFY) at once, not at the end of its wait.
func TestServePostgresTwoNodes(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Isolated(t)
	dir := t.TempDir()
	nodeA := startServer(t, "--store", dsn, "--data-dir", filepath.Join(dir, "a"), "--no-alarms")
	nodeB := startServer(t, "--store", dsn, "--data-dir", filepath.Join(dir, "b"), "--no-alarms")
	a, b := sdkClient(nodeA), sdkClient(nodeB)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	created, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("shared")})
	if err != nil {
		t.Fatalf("CreateQueue on A: %v", err)
	}
	got, err := b.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("shared")})
	if err != nil {
		t.Fatalf("GetQueueUrl on B of a queue created on A: %v", err)
	}
	qa, qb := aws.ToString(created.QueueUrl), aws.ToString(got.QueueUrl)

	// Send on A, receive and delete on B.
	sent, err := a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qa), MessageBody: aws.String("from A")})
	if err != nil {
		t.Fatalf("SendMessage on A: %v", err)
	}
	recv, err := b.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(qb), WaitTimeSeconds: 1})
	if err != nil {
		t.Fatalf("ReceiveMessage on B: %v", err)
	}
	if len(recv.Messages) != 1 || aws.ToString(recv.Messages[0].MessageId) != aws.ToString(sent.MessageId) {
		t.Fatalf("B received %+v, want the message sent on A (%s)", recv.Messages, aws.ToString(sent.MessageId))
	}
	if _, err := b.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(qb), ReceiptHandle: recv.Messages[0].ReceiptHandle}); err != nil {
		t.Fatalf("DeleteMessage on B: %v", err)
	}
	attrs, err := a.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(qa), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("GetQueueAttributes on A: %v", err)
	}
	for _, n := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		if attrs.Attributes[n] != "0" {
			t.Errorf("after B deleted the message, A reports %s = %s", n, attrs.Attributes[n])
		}
	}

	// A long poll on B, woken by a send on A.
	type result struct {
		out *sqs.ReceiveMessageOutput
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	pollStart := time.Now()
	go func() {
		out, err := b.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(qb), WaitTimeSeconds: 20})
		done <- result{out, err, time.Now()}
	}()
	// The poll is waiting if it has not answered within a second on an
	// empty queue.
	select {
	case r := <-done:
		t.Fatalf("the long poll on an empty queue returned at once: %+v, %v", r.out, r.err)
	case <-time.After(1500 * time.Millisecond):
	}
	sendAt := time.Now()
	if _, err := a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(qa), MessageBody: aws.String("wake B")}); err != nil {
		t.Fatalf("SendMessage on A: %v", err)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("long poll on B: %v", r.err)
		}
		if len(r.out.Messages) != 1 || aws.ToString(r.out.Messages[0].Body) != "wake B" {
			t.Fatalf("long poll on B returned %+v, want the message sent on A", r.out.Messages)
		}
		if d := r.at.Sub(sendAt); d > 3*time.Second {
			t.Errorf("the long poll on B answered %v after the send on A; want well under its 20 s wait", d)
		}
		t.Logf("long poll on B woken %v after the send on A (it had waited %v)", r.at.Sub(sendAt), sendAt.Sub(pollStart))
	case <-time.After(15 * time.Second):
		t.Fatal("the long poll on B was not woken by a send on A within 15 s")
	}
}
