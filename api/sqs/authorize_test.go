package sqs

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// onlyQueueA allows everything on queue "a" and nothing else, and
// remembers what it was asked.
type onlyQueueA struct{ asked []string }

func (o *onlyQueueA) Authorize(_ *http.Request, key, action, resource string) error {
	o.asked = append(o.asked, action+" "+resource)
	if strings.HasSuffix(resource, ":a") {
		return nil
	}
	return tidemq.Errorf(tidemq.ErrAccessDenied, "User: %s is not authorized to perform: %s on resource: %s", key, action, resource)
}

func (o *onlyQueueA) Allowed(r *http.Request, key, action, resource string) bool {
	return strings.HasSuffix(resource, ":a")
}

// A refusal is AWS's AccessDenied in both protocols, with status 403; the
// action is named as IAM names it (a batch as its single action); a
// listing leaves out what may not be seen.
func TestAuthorizerRefusal(t *testing.T) {
	az := &onlyQueueA{}
	h := NewHandler(Config{Broker: &stubBroker{}, Authorizer: az, Logger: slog.New(slog.DiscardHandler)})

	rec := serve(h, jsonRequest("/", "PurgeQueue", `{"QueueUrl":"http://h/000000000000/b"}`))
	if rec.Code != 403 || rec.Header().Get("X-Amzn-Query-Error") != "AccessDenied;Sender" {
		t.Fatalf("JSON: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	if e := decodeJSONError(t, rec); !strings.Contains(e.Type, "AccessDenied") || !strings.Contains(e.Message, "sqs:PurgeQueue on resource: arn:aws:sqs:us-east-1:000000000000:b") {
		t.Fatalf("JSON error %+v", e)
	}
	rec = serve(h, formRequest("/", url.Values{"Action": {"DeleteMessageBatch"}, "QueueUrl": {"http://h/000000000000/b"},
		"DeleteMessageBatchRequestEntry.1.Id": {"x"}, "DeleteMessageBatchRequestEntry.1.ReceiptHandle": {"r"}}))
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "<Code>AccessDenied</Code>") || !strings.Contains(rec.Body.String(), "<Type>Sender</Type>") {
		t.Fatalf("Query: %d %s", rec.Code, rec.Body)
	}
	if last := az.asked[len(az.asked)-1]; last != "sqs:DeleteMessage arn:aws:sqs:us-east-1:000000000000:b" {
		t.Fatalf("the batch was asked about as %q", last)
	}
	if rec := serve(h, jsonRequest("/", "PurgeQueue", `{"QueueUrl":"http://h/000000000000/a"}`)); rec.Code != 200 {
		t.Fatalf("allowed purge: %d %s", rec.Code, rec.Body)
	}
	rec = serve(h, jsonRequest("/", "ListQueues", `{}`))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "/a\"") || strings.Contains(rec.Body.String(), "/b\"") {
		t.Fatalf("ListQueues shows what may not be seen: %s", rec.Body)
	}
	rec = serve(h, jsonRequest("/", "CreateQueue", `{"QueueName":"b"}`))
	if rec.Code != 403 {
		t.Fatalf("CreateQueue of a queue it may not create: %d %s", rec.Code, rec.Body)
	}
	// Without a queue named, the request is refused as such, not as denied.
	if rec := serve(h, jsonRequest("/", "GetQueueUrl", `{}`)); rec.Code != 400 {
		t.Fatalf("GetQueueUrl without a name: %d %s", rec.Code, rec.Body)
	}
}

// dlqBroker is a stub whose every queue has the dead-letter sources given.
type dlqBroker struct {
	stubBroker
	sources []string
}

func (b *dlqBroker) ListDeadLetterSourceQueues(context.Context, tidemq.ListDeadLetterSourceQueuesParams) (*tidemq.ListQueuesResult, error) {
	return &tidemq.ListQueuesResult{Names: b.sources}, nil
}

// A move task without a destination sends the messages back into each
// source queue of the dead-letter queue: sqs:SendMessage is asked on each
// (AWS asks it on the destination, and the sources are the destination).
func TestStartMoveTaskToSourcesNeedsSendOnEach(t *testing.T) {
	az := &onlyQueueA{}
	b := &dlqBroker{sources: []string{"a", "b"}}
	h := NewHandler(Config{Broker: b, Authorizer: az, Logger: slog.New(slog.DiscardHandler)})
	start := `{"SourceArn":"arn:aws:sqs:us-east-1:000000000000:a"}`
	rec := serve(h, jsonRequest("/", "StartMessageMoveTask", start))
	if rec.Code != 403 || !strings.Contains(rec.Body.String(), "sqs:SendMessage on resource: arn:aws:sqs:us-east-1:000000000000:b") {
		t.Fatalf("a redrive into a source it may not send to: %d %s", rec.Code, rec.Body)
	}
	b.sources = []string{"a"}
	if rec := serve(h, jsonRequest("/", "StartMessageMoveTask", start)); rec.Code != 200 {
		t.Fatalf("a redrive into a source it may send to: %d %s", rec.Code, rec.Body)
	}
	if last := az.asked[len(az.asked)-1]; last != "sqs:SendMessage arn:aws:sqs:us-east-1:000000000000:a" {
		t.Fatalf("last asked %q", last)
	}
}
