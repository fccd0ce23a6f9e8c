package dlq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/dlq"
	"github.com/tidemq/tidemq/sns"
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

// sendID sends a message and returns its id.
func (e *env) sendID(url string, in *awssqs.SendMessageInput) string {
	e.t.Helper()
	in.QueueUrl = aws.String(url)
	out, err := e.client.SendMessage(e.ctx, in)
	if err != nil {
		e.t.Fatalf("send: %v", err)
	}
	return aws.ToString(out.MessageId)
}

func bodies(msgs []types.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, aws.ToString(m.Body))
	}
	sort.Strings(out)
	return out
}

// TestRedriveDefaultSendsDirectMessagesToTheOnlySource: the plain
// `tidemq dlq redrive DLQ` (a message move task) used to fail with
// NonExistentQueue (now, as on AWS, CouldNotDetermineMessageSource) at the
// first message sent to the DLQ directly (seed
// 002's send_to_dlq: no DeadLetterQueueSourceArn). Now the task's leftovers
// go message by message to the DLQ's only source; with two sources the
// direct message stays, named, and the redrive is partial.
func TestRedriveDefaultSendsDirectMessagesToTheOnlySource(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("loader_dlq", nil)
	loader := e.source("loader", "loader_dlq", 1)
	e.send(loader, &awssqs.SendMessageInput{MessageBody: aws.String("failed 1")})
	e.send(loader, &awssqs.SendMessageInput{MessageBody: aws.String("failed 2")})
	e.deadLetterAll(loader)
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)}) // send_to_dlq

	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "loader_dlq", dlq.RedriveOptions{})
	if err != nil {
		t.Fatalf("redrive: %v\n%s", err, e.out.String())
	}
	if res.Moved != 3 || res.Partial() || res.Task == nil || e.depth(dlqURL) != 0 {
		t.Fatalf("redrive %+v, DLQ depth %d\n%s", res, e.depth(dlqURL), e.out.String())
	}
	if got, want := bodies(e.receiveAll(loader)), []string{"failed 1", "failed 2", wrappedBody}; !slices.Equal(got, want) {
		t.Errorf("loader holds %q, want %q", got, want)
	}
	if out := e.out.String(); !strings.Contains(out, "the move task stopped (CouldNotDetermineMessageSource)") ||
		!strings.Contains(out, "loader_dlq: moved 3 in") {
		t.Errorf("output:\n%s", out)
	}

	// Two sources: the direct message cannot be placed, the dead-lettered
	// one goes home.
	loader2 := e.source("loader-2", "loader_dlq", 1)
	e.send(loader2, &awssqs.SendMessageInput{MessageBody: aws.String("failed 3")})
	e.deadLetterAll(loader2)
	direct := e.sendID(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)})
	tool = e.tool(dlq.ModeAuto)
	res, err = tool.Redrive(e.ctx, "loader_dlq", dlq.RedriveOptions{})
	if err != nil {
		t.Fatalf("redrive: %v\n%s", err, e.out.String())
	}
	if res.Moved != 1 || !res.Partial() || len(res.NotRedriven) != 1 || res.NotRedriven[0].MessageID != direct {
		t.Fatalf("redrive %+v\n%s", res, e.out.String())
	}
	want := "not redriven, still in loader_dlq:\n  " + direct + ": it has no DeadLetterQueueSourceArn (it was sent to loader_dlq directly) and " +
		"2 queues name loader_dlq in their RedrivePolicy (loader, loader-2), so which one it came from is unknown: choose with --to"
	if out := e.out.String(); !strings.Contains(out, want) || !strings.Contains(out, "loader_dlq: moved 1, 1 not redriven in") {
		t.Errorf("output:\n%s\nwant it to contain:\n%s", out, want)
	}
	if got := bodies(e.receiveAll(loader2)); !slices.Equal(got, []string{"failed 3"}) {
		t.Errorf("loader-2 holds %q", got)
	}
	// The message left behind is visible again at once, for the next try.
	if a := e.attrs(dlqURL); a["ApproximateNumberOfMessages"] != "1" {
		t.Errorf("DLQ after the partial redrive: %v", a)
	}
}

// TestRedriveDLQWhoseSourceWasDeleted: no RedrivePolicy names the DLQ any
// more, so SQS refuses a move task. The redrive says so, names each message
// whose source is gone, and with --to moves them all, message by message.
func TestRedriveDLQWhoseSourceWasDeleted(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("batch_7_dlq", nil)
	batch := e.source("batch_7", "batch_7_dlq", 1)
	a := e.sendID(batch, &awssqs.SendMessageInput{MessageBody: aws.String("doc 1")})
	b := e.sendID(batch, &awssqs.SendMessageInput{MessageBody: aws.String("doc 2")})
	e.deadLetterAll(batch)
	e.deleteQueue(batch)

	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "batch_7_dlq", dlq.RedriveOptions{})
	if err != nil {
		t.Fatalf("redrive: %v\n%s", err, e.out.String())
	}
	if res.Moved != 0 || !res.Partial() || len(res.NotRedriven) != 2 || e.depth(dlqURL) != 2 {
		t.Fatalf("redrive %+v\n%s", res, e.out.String())
	}
	out := e.out.String()
	for _, want := range []string{
		"no RedrivePolicy names batch_7_dlq (was its source queue deleted?), so a message move task cannot start: redriving message by message",
		a + ": its source queue batch_7 (DeadLetterQueueSourceArn) does not exist any more: name a destination with --to",
		b + ": its source queue batch_7 (DeadLetterQueueSourceArn) does not exist any more",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	replay := e.createQueue("batch_7_replay", nil)
	tool = e.tool(dlq.ModeAuto)
	res, err = tool.Redrive(e.ctx, "batch_7_dlq", dlq.RedriveOptions{To: "batch_7_replay"})
	if err != nil || res.Moved != 2 || res.Partial() {
		t.Fatalf("redrive --to: %+v %v\n%s", res, err, e.out.String())
	}
	if got := bodies(e.receiveAll(replay)); !slices.Equal(got, []string{"doc 1", "doc 2"}) {
		t.Errorf("batch_7_replay holds %q", got)
	}
}

// seedEvent is a seed 002 domain event: eventDetail is itself a JSON string.
func seedEvent(caseID int, retries int, doc string) string {
	detail, _ := json.Marshal(map[string]any{"retry_count": retries, "documentId": doc})
	ev, _ := json.Marshal(map[string]any{"caseId": caseID, "eventType": "DOCUMENT_PROCESSED", "eventDetail": string(detail)})
	return string(ev)
}

// TestFilterSeesThroughTheSNSEnvelope: events published through tidemq's
// SNS (so the body is a real notification envelope whose Message is a JSON
// string, whose eventDetail is a JSON string again) and a hand-rolled
// {"Message": "<json>"} die in a DLQ; filters on the inner message's nested
// fields pick the right ones for peek and redrive.
func TestFilterSeesThroughTheSNSEnvelope(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("documents-dlq", nil)
	src := e.source("documents", "documents-dlq", 1)
	publish := e.topicInto("documents")
	for _, ev := range []string{seedEvent(1001, 3, "d-1"), seedEvent(1002, 1, "d-2")} {
		publish(ev)
	}
	wrapped, _ := json.Marshal(map[string]string{"Message": seedEvent(1003, 5, "d-3")})
	e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(string(wrapped))})
	e.deadLetterAll(src)
	if d := e.depth(dlqURL); d != 3 {
		t.Fatalf("DLQ depth %d", d)
	}

	// Peek: the retried-often ones, wherever the envelope came from.
	f, err := dlq.ParseFilter(`inner.eventDetail.retry_count >= 3`)
	if err != nil {
		t.Fatal(err)
	}
	tool := e.tool(dlq.ModeAuto)
	if err := tool.Peek(e.ctx, "documents-dlq", dlq.PeekOptions{Max: 10, Filter: f}); err != nil {
		t.Fatal(err)
	}
	out := e.out.String()
	if !strings.Contains(out, "message 1 of 2") || !strings.Contains(out, "message 2 of 2") ||
		!strings.Contains(out, `"caseId": 1001`) || !strings.Contains(out, `"caseId": 1003`) || strings.Contains(out, `"caseId": 1002`) {
		t.Errorf("peek %s:\n%s", f, out)
	}

	// Redrive by a field of the SNS message and one of its eventDetail.
	f, err = dlq.ParseFilter(`json.Type == "Notification" && (json.Message.caseId == 1002 || inner.eventDetail.documentId == "d-1")`)
	if err != nil {
		t.Fatal(err)
	}
	replay := e.createQueue("documents-replay", nil)
	tool = e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "documents-dlq", dlq.RedriveOptions{To: "documents-replay", Filter: f})
	if err != nil || res.Moved != 2 || res.Skipped != 1 {
		t.Fatalf("redrive %s: %+v %v\n%s", f, res, err, e.out.String())
	}
	var cases []string
	for _, m := range e.receiveAll(replay) {
		env, ok := dlq.Unwrap(aws.ToString(m.Body))
		if !ok || env.Kind != "sns" {
			t.Fatalf("not an SNS envelope any more: %s", aws.ToString(m.Body))
		}
		var ev struct{ CaseID int }
		_ = json.Unmarshal([]byte(env.Message), &ev)
		cases = append(cases, strconv.Itoa(ev.CaseID))
	}
	if sort.Strings(cases); !slices.Equal(cases, []string{"1001", "1002"}) {
		t.Errorf("redriven cases %v", cases)
	}
}

func parseEdits(t *testing.T, edits ...string) []*dlq.BodyEdit {
	t.Helper()
	var out []*dlq.BodyEdit
	for _, s := range edits {
		e, err := dlq.ParseBodyEdit(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// TestRedriveSetsSeed002MarkersInsideTheBody: seed 002 keeps its redrive
// markers inside the body, two JSON strings deep. A message published
// through SNS and dead-lettered, and one sent straight to the DLQ, are
// redriven with --body-set: each lands in its source with the markers set
// where the consumer reads them, the encoding kept (the hand-rolled one is
// byte for byte what the seed's Python writes), the envelope's other
// fields untouched; a second pass counts up. A body that is not JSON stays,
// named.
func TestRedriveSetsSeed002MarkersInsideTheBody(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("stack_doc_loader_1001_7_dlq", nil)
	src := e.source("stack_doc_loader_1001_7", "stack_doc_loader_1001_7_dlq", 1)
	publish := e.topicInto("stack_doc_loader_1001_7")
	publish(seedEvent(1001, 2, "d-1"))
	e.deadLetterAll(src)
	published := e.peekBodies("stack_doc_loader_1001_7_dlq")[0]
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(seed002In)}) // send_to_dlq
	broken := e.sendID(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("not json")})

	edits := parseEdits(t, seed002Edits...)
	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "stack_doc_loader_1001_7_dlq", dlq.RedriveOptions{BodyEdits: edits, DryRun: true})
	if err != nil || res.Moved != 2 || len(res.NotRedriven) != 1 {
		t.Fatalf("dry run %+v %v\n%s", res, err, e.out.String())
	}
	for _, want := range []string{
		"    inner.eventDetail.dlq_redrive_count: (absent) → 1\n",
		"    inner.eventDetail.dlq_redrive_count: 1 → 2\n",
		"    inner.eventDetail.retry_count: 2 → 0\n",
		"would keep " + broken + ": --body-set inner.dlq_redriven=true: the body is not JSON\n",
	} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, e.out.String())
		}
	}

	tool = e.tool(dlq.ModeAuto)
	res, err = tool.Redrive(e.ctx, "stack_doc_loader_1001_7_dlq", dlq.RedriveOptions{BodyEdits: edits})
	if err != nil || res.Moved != 2 || !res.Partial() || len(res.NotRedriven) != 1 || res.NotRedriven[0].MessageID != broken {
		t.Fatalf("redrive %+v %v\n%s", res, err, e.out.String())
	}
	if !strings.Contains(e.out.String(), "  "+broken+": --body-set inner.dlq_redriven=true: the body is not JSON") {
		t.Errorf("output:\n%s", e.out.String())
	}
	got := map[string]string{}
	for _, m := range e.receiveAll(src) {
		b := aws.ToString(m.Body)
		if env, ok := dlq.Unwrap(b); ok && env.Kind == "sns" {
			got["sns"] = b
		} else {
			got["wrapped"] = b
		}
	}
	if got["wrapped"] != seed002Out {
		t.Errorf("the hand-rolled envelope:\n got %s\nwant %s", got["wrapped"], seed002Out)
	}
	checkSNS := func(body string, count int, final bool) {
		t.Helper()
		// Every field but Message is as SNS wrote it, in its order and spacing.
		before, after := strings.SplitN(published, `"Message" : `, 2), strings.SplitN(body, `"Message" : `, 2)
		if len(after) != 2 || before[0] != after[0] {
			t.Fatalf("the envelope's head changed:\n%s\n%s", published, body)
		}
		tail := func(s string) string { return s[strings.Index(s, `",`+"\n"):] }
		if tail(before[1]) != tail(after[1]) {
			t.Errorf("the envelope's tail changed:\n%s\n%s", published, body)
		}
		env, _ := dlq.Unwrap(body)
		var msg struct {
			CaseID      int    `json:"caseId"`
			EventDetail string `json:"eventDetail"`
			Redriven    bool   `json:"dlq_redriven"`
		}
		if err := json.Unmarshal([]byte(env.Message), &msg); err != nil || msg.CaseID != 1001 || !msg.Redriven {
			t.Fatalf("Message %s: %v", env.Message, err)
		}
		if !strings.HasPrefix(env.Message, `{"caseId":1001,"eventDetail":`) || !strings.HasSuffix(env.Message, `,"dlq_redriven":true}`) {
			t.Errorf("Message members reordered: %s", env.Message)
		}
		want := fmt.Sprintf(`{"documentId":"d-1","retry_count":0,"dlq_redrive_count":%d,"dlq_final_pass":%v}`, count, final)
		if msg.EventDetail != want {
			t.Errorf("eventDetail %s, want %s", msg.EventDetail, want)
		}
	}
	checkSNS(got["sns"], 1, false)

	// Both fail again; the second pass counts up and marks the final pass.
	e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(got["sns"])})
	e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(got["wrapped"])})
	e.deadLetterAll(src)
	tool = e.tool(dlq.ModeAuto)
	res, err = tool.Redrive(e.ctx, "stack_doc_loader_1001_7_dlq", dlq.RedriveOptions{BodyEdits: parseEdits(t,
		"inner.eventDetail.retry_count=0", "inner.eventDetail.dlq_redrive_count+=1", "inner.eventDetail.dlq_final_pass=true"),
		Filter: mustFilter(t, `has(inner.dlq_redriven)`)})
	if err != nil || res.Moved != 2 || res.Skipped != 1 {
		t.Fatalf("second pass %+v %v\n%s", res, err, e.out.String())
	}
	for _, m := range e.receiveAll(src) {
		b := aws.ToString(m.Body)
		if env, ok := dlq.Unwrap(b); ok && env.Kind == "sns" {
			published = got["sns"]
			checkSNS(b, 2, true)
		} else if want := strings.Replace(strings.Replace(seed002Out, `dlq_redrive_count\\\": 2`, `dlq_redrive_count\\\": 3`, 1),
			`false}`, `true}`, 1); b != want {
			t.Errorf("second pass, hand-rolled:\n got %s\nwant %s", b, want)
		}
	}
	if d := e.depth(dlqURL); d != 1 {
		t.Errorf("DLQ depth %d, want the broken message alone", d)
	}
}

func mustFilter(t *testing.T, s string) *dlq.Filter {
	t.Helper()
	f, err := dlq.ParseFilter(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// peekBodies returns the bodies of a queue's visible messages (tidemq's
// peek: nothing changes).
func (e *env) peekBodies(queue string) []string {
	e.t.Helper()
	var b bytes.Buffer
	n, err := (&dlq.Client{SQS: e.client, Out: io.Discard, Err: io.Discard}).Export(e.ctx, queue, &b, dlq.ExportOptions{Max: 100})
	if err != nil || n == 0 {
		e.t.Fatalf("export %s: %d %v", queue, n, err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r dlq.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, r.Body)
	}
	return out
}

// topicInto opens tidemq's SNS service on the test's broker with a topic
// subscribed by queue, and returns a function that publishes a message to
// it (so the queue gets a real notification envelope).
func (e *env) topicInto(queue string) func(message string) {
	e.t.Helper()
	svc, err := sns.Open(sns.Options{Broker: e.eng, Region: "us-east-1", AccountID: account, Clock: e.clk,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { svc.Close() })
	topic, err := svc.CreateTopic(context.Background(), sns.CreateTopicParams{Name: "document-events", Attributes: nil, Tags: nil})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := svc.Subscribe(context.Background(), sns.SubscribeParams{TopicARN: topic.ARN, Protocol: "sqs", Endpoint: arn(queue)}); err != nil {
		e.t.Fatal(err)
	}
	return func(message string) {
		e.t.Helper()
		if _, err := svc.Publish(e.ctx, sns.PublishParams{TopicARN: topic.ARN, Message: message, BaseURL: e.srv.URL}); err != nil {
			e.t.Fatal(err)
		}
	}
}
