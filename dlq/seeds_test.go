package dlq_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/dlq"
)

// The seed teams' dead-letter habits (seeds 000 and 002), end to end
// through the real server: per-batch queues deleted when the batch is done,
// messages sent straight to a DLQ, markers kept inside double-encoded
// JSON.

func (e *env) deleteQueue(url string) {
	e.t.Helper()
	if _, err := e.client.DeleteQueue(e.ctx, &awssqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
		e.t.Fatalf("DeleteQueue %s: %v", url, err)
	}
}

// TestListKeepsDLQsWhoseSourceIsGone: a batch's DLQ stays listed after the
// batch's queue is deleted, on tidemq and on AWS when it is named like a
// DLQ, and on tidemq when it holds dead-lettered messages whatever its name.
func TestListKeepsDLQsWhoseSourceIsGone(t *testing.T) {
	e := newEnv(t)
	e.createQueue("orders-dlq", nil)
	e.source("orders", "orders-dlq", 1)
	batchDLQ := e.createQueue("stack_doc_loader_1001_7_dlq", nil)
	batch := e.source("stack_doc_loader_1001_7", "stack_doc_loader_1001_7_dlq", 1)
	e.createQueue("parking", nil)
	jobs := e.source("jobs", "parking", 1)
	e.createQueue("unrelated", nil)
	e.send(jobs, &awssqs.SendMessageInput{MessageBody: aws.String("job 1")})
	e.deadLetterAll(jobs)
	e.send(batchDLQ, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)}) // send_to_dlq
	e.deleteQueue(batch)
	e.deleteQueue(jobs)

	tool := e.tool(dlq.ModeAuto)
	if err := tool.List(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"DLQ                          DEPTH  VISIBLE  IN FLIGHT  DELAYED  OLDEST  RETENTION  SOURCES (maxReceiveCount)\n" +
		"orders-dlq                   0      0        0          0        empty   4d00h      orders (1)\n" +
		"parking                      1      1        0          0        0s      4d00h      (none)\n" +
		"stack_doc_loader_1001_7_dlq  1      1        0          0        0s      4d00h      (none)\n" +
		"\n(none): no RedrivePolicy names this queue (was its source queue deleted?); it is listed because it is named like a DLQ or holds dead-lettered messages.\n"
	if got := e.out.String(); got != want {
		t.Errorf("tidemq list:\n%s\nwant:\n%s", got, want)
	}

	// Plain SQS cannot tell what a queue holds without receiving it: the
	// name is what keeps the batch's DLQ listed.
	tool = e.tool(dlq.ModeAWS)
	if err := tool.List(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	got := e.out.String()
	if !strings.Contains(got, "stack_doc_loader_1001_7_dlq  1      1        0          0        -       4d00h      (none)") ||
		!strings.Contains(got, "orders-dlq") || strings.Contains(got, "parking") || strings.Contains(got, "unrelated") {
		t.Errorf("AWS list:\n%s", got)
	}
}
