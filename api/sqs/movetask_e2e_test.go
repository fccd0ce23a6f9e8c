package sqs_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// Message move tasks (DLQ redrive) end to end: the SDK client against the
// handler over the real engine. Rate-limited tasks wait for the fake clock
// between seconds, so a test steps them with WaitForTimers (the task has
// finished a step and waits for the next second) and Advance.

func arn(name string) string { return "arn:aws:sqs:us-east-1:" + account + ":" + name }

// startMs is the fake clock's start in epoch milliseconds.
const startMs = 1_700_000_000_000

type deadSource struct {
	name string
	n    int // messages to dead-letter
}

// deadLetter creates dlq and a source queue for each of sources whose
// RedrivePolicy (maxReceiveCount 1) targets dlq, and gets each source's n
// messages dead-lettered: each is received once and, its visibility timeout
// being 0, the next receive moves it to dlq. It returns the DLQ's URL.
func (e *env) deadLetter(dlq string, sources ...deadSource) string {
	e.t.Helper()
	dlqURL := e.createQueue(dlq, nil)
	total := 0
	for _, s := range sources {
		// The SDK leaves a VisibilityTimeout of 0 out of a ReceiveMessage,
		// so the queue's default is 0.
		url := e.createQueue(s.name, map[string]string{
			"VisibilityTimeout": "0",
			"RedrivePolicy":     `{"deadLetterTargetArn":"` + arn(dlq) + `","maxReceiveCount":1}`,
		})
		for i := range s.n {
			if _, err := e.client.SendMessage(e.ctx, &awssqs.SendMessageInput{QueueUrl: &url,
				MessageBody: aws.String(s.name + "-" + strconv.Itoa(i))}); err != nil {
				e.t.Fatal(err)
			}
		}
		for got := 0; got < s.n; {
			out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
			if err != nil || len(out.Messages) == 0 {
				e.t.Fatalf("receive from %s: %v %v", s.name, out, err)
			}
			got += len(out.Messages)
		}
		out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
		if err != nil || len(out.Messages) != 0 {
			e.t.Fatalf("second receive from %s should dead-letter everything: %v %v", s.name, out, err)
		}
		total += s.n
	}
	if d := e.depth(dlq); d != total {
		e.t.Fatalf("%s holds %d messages, want %d", dlq, d, total)
	}
	return dlqURL
}

// depth is a queue's ApproximateNumberOfMessages.
func (e *env) depth(name string) int {
	e.t.Helper()
	out, err := e.client.GetQueueAttributes(e.ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(name),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		e.t.Fatal(err)
	}
	n, err := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// tasks lists the source's most recent tasks.
func (e *env) tasks(source string, max int32) []types.ListMessageMoveTasksResultEntry {
	e.t.Helper()
	in := &awssqs.ListMessageMoveTasksInput{SourceArn: aws.String(source)}
	if max > 0 {
		in.MaxResults = aws.Int32(max)
	}
	out, err := e.client.ListMessageMoveTasks(e.ctx, in)
	if err != nil {
		e.t.Fatalf("ListMessageMoveTasks: %v", err)
	}
	return out.Results
}

// waitTask polls the source's newest task until its status is want, for at
// most a few seconds of real time.
func (e *env) waitTask(source, want string) types.ListMessageMoveTasksResultEntry {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		list := e.tasks(source, 1)
		if len(list) == 1 && aws.ToString(list[0].Status) == want {
			return list[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("task never reached %s: %+v", want, list)
		}
		runtime.Gosched()
	}
}

// step waits for a rate-limited task to finish a step and wait for the next
// second.
func (e *env) step() {
	e.t.Helper()
	if !e.clk.WaitForTimers(1, 5*time.Second) {
		e.t.Fatal("the task never waited for its next second")
	}
}

// wantHTTPStatus checks the HTTP status of an SDK error.
func wantHTTPStatus(t *testing.T, err error, status int) {
	t.Helper()
	var re *awshttp.ResponseError
	if !errors.As(err, &re) || re.HTTPStatusCode() != status {
		t.Errorf("want HTTP %d, got %v", status, err)
	}
}

// wantErrorMessage checks an SDK error's code and message.
func wantErrorMessage(t *testing.T, err error, code, msg string) {
	t.Helper()
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("want %s %q, got %v", code, msg, err)
	}
	if apiErr.ErrorCode() != code || apiErr.ErrorMessage() != msg {
		t.Errorf("got %s %q, want %s %q", apiErr.ErrorCode(), apiErr.ErrorMessage(), code, msg)
	}
}

func TestSDKMoveTaskBackToSources(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("dlq", deadSource{"src1", 3}, deadSource{"src2", 2})
	started, err := e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(arn("dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	handle := aws.ToString(started.TaskHandle)
	// AWS's handle format: base64 of {"taskId":…,"sourceArn":…}.
	var decoded struct{ TaskID, SourceArn string }
	if b, err := base64.StdEncoding.DecodeString(handle); err != nil || json.Unmarshal(b, &decoded) != nil ||
		decoded.TaskID == "" || decoded.SourceArn != arn("dlq") {
		t.Errorf("task handle %q is not base64 of {taskId, sourceArn}: %s", handle, b)
	}

	// One active task per source.
	_, err = e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("dlq"))})
	wantErrorMessage(t, err, "InvalidParameterValue",
		"There is already a task running. Only one active task is allowed for a source queue arn at a given time.")
	wantHTTPStatus(t, err, 400)

	for _, moved := range []int64{2, 4} {
		e.step()
		list := e.tasks(arn("dlq"), 0)
		if len(list) != 1 {
			t.Fatalf("listing %+v", list)
		}
		task := list[0]
		if aws.ToString(task.Status) != "RUNNING" || aws.ToString(task.TaskHandle) != handle ||
			task.ApproximateNumberOfMessagesMoved != moved || aws.ToInt64(task.ApproximateNumberOfMessagesToMove) != 5 ||
			aws.ToString(task.SourceArn) != arn("dlq") || task.DestinationArn != nil ||
			aws.ToInt32(task.MaxNumberOfMessagesPerSecond) != 2 || task.FailureReason != nil || task.StartedTimestamp != startMs {
			t.Errorf("running task after %d moved: %s", moved, mustJSON(task))
		}
		e.clk.Advance(time.Second)
	}
	// The third second moves the last message and completes the task.
	task := e.waitTask(arn("dlq"), "COMPLETED")
	if task.TaskHandle != nil || task.ApproximateNumberOfMessagesMoved != 5 || aws.ToInt64(task.ApproximateNumberOfMessagesToMove) != 5 ||
		task.DestinationArn != nil || aws.ToInt32(task.MaxNumberOfMessagesPerSecond) != 2 || task.FailureReason != nil ||
		task.StartedTimestamp != startMs {
		t.Errorf("completed task: %s", mustJSON(task))
	}
	// Each message went back to its own source.
	if d1, d2, dd := e.depth("src1"), e.depth("src2"), e.depth("dlq"); d1 != 3 || d2 != 2 || dd != 0 {
		t.Errorf("after redrive: src1 %d src2 %d dlq %d", d1, d2, dd)
	}

	// A task that is over cannot be cancelled, and its source is free again.
	_, err = e.client.CancelMessageMoveTask(e.ctx, &awssqs.CancelMessageMoveTaskInput{TaskHandle: &handle})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)

	// Without a rate: the broker picks it, and the listing leaves it out.
	e.clk.Advance(time.Second)
	if _, err := e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("dlq"))}); err != nil {
		t.Fatal(err)
	}
	task = e.waitTask(arn("dlq"), "COMPLETED")
	if task.MaxNumberOfMessagesPerSecond != nil || task.ApproximateNumberOfMessagesMoved != 0 ||
		aws.ToInt64(task.ApproximateNumberOfMessagesToMove) != 0 || task.StartedTimestamp != startMs+3000 {
		t.Errorf("second task: %s", mustJSON(task))
	}
	// Newest first, MaxResults at most.
	list := e.tasks(arn("dlq"), 10)
	if len(list) != 2 || list[0].StartedTimestamp != startMs+3000 || list[1].StartedTimestamp != startMs {
		t.Errorf("both tasks: %s", mustJSON(list))
	}
}

func TestSDKMoveTaskCancel(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("dlq", deadSource{"src", 6})
	e.createQueue("other", nil)
	started, err := e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(arn("dlq")), DestinationArn: aws.String(arn("other")), MaxNumberOfMessagesPerSecond: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	e.step()
	cancelled, err := e.client.CancelMessageMoveTask(e.ctx, &awssqs.CancelMessageMoveTaskInput{TaskHandle: started.TaskHandle})
	if err != nil || cancelled.ApproximateNumberOfMessagesMoved != 2 {
		t.Fatalf("cancel: %+v %v", cancelled, err)
	}
	// CANCELLING until the task's next step, with no handle any more.
	list := e.tasks(arn("dlq"), 0)
	if len(list) != 1 || aws.ToString(list[0].Status) != "CANCELLING" || list[0].TaskHandle != nil {
		t.Errorf("after cancel: %s", mustJSON(list))
	}
	e.clk.Advance(time.Second)
	task := e.waitTask(arn("dlq"), "CANCELLED")
	if task.TaskHandle != nil || task.ApproximateNumberOfMessagesMoved != 2 || aws.ToString(task.DestinationArn) != arn("other") ||
		aws.ToInt64(task.ApproximateNumberOfMessagesToMove) != 6 || task.FailureReason != nil {
		t.Errorf("cancelled task: %s", mustJSON(task))
	}
	if o, d := e.depth("other"), e.depth("dlq"); o != 2 || d != 4 {
		t.Errorf("after cancel: other %d dlq %d", o, d)
	}

	// Handles: one that does not decode, and a well-formed one naming no task.
	_, err = e.client.CancelMessageMoveTask(e.ctx, &awssqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("not a handle")})
	wantErrorMessage(t, err, "InvalidParameterValue", "Value for parameter TaskHandle is invalid.")
	wantHTTPStatus(t, err, 400)
	unknown := base64.StdEncoding.EncodeToString([]byte(`{"taskId":"0b9c3f1e-2d4a-4e6b-8f7a-1c2d3e4f5a6b","sourceArn":"` + arn("dlq") + `"}`))
	_, err = e.client.CancelMessageMoveTask(e.ctx, &awssqs.CancelMessageMoveTaskInput{TaskHandle: &unknown})
	var notFound *types.ResourceNotFoundException
	wantAPIError(t, err, "ResourceNotFoundException", &notFound)
	wantErrorMessage(t, err, "ResourceNotFoundException", "Task does not exist.")
	wantHTTPStatus(t, err, 404)
}

func TestSDKMoveTaskErrors(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("dlq", deadSource{"src", 1})
	var notFound *types.ResourceNotFoundException

	_, err := e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("src"))})
	wantErrorMessage(t, err, "InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.")
	wantHTTPStatus(t, err, 400)

	_, err = e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("missing"))})
	wantAPIError(t, err, "ResourceNotFoundException", &notFound)
	wantErrorMessage(t, err, "ResourceNotFoundException", "The resource that you specified for the SourceArn parameter doesn't exist.")
	wantHTTPStatus(t, err, 404)

	_, err = e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("dlq")), DestinationArn: aws.String(arn("missing"))})
	wantAPIError(t, err, "ResourceNotFoundException", &notFound)
	wantErrorMessage(t, err, "ResourceNotFoundException", "The resource that you specified for the DestinationArn parameter doesn't exist.")

	_, err = e.client.StartMessageMoveTask(e.ctx, &awssqs.StartMessageMoveTaskInput{SourceArn: aws.String(arn("dlq")), MaxNumberOfMessagesPerSecond: aws.Int32(501)})
	wantErrorMessage(t, err, "InvalidParameterValue", "Value 501 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500.")

	_, err = e.client.ListMessageMoveTasks(e.ctx, &awssqs.ListMessageMoveTasksInput{SourceArn: aws.String(arn("missing"))})
	wantAPIError(t, err, "ResourceNotFoundException", &notFound)
	wantHTTPStatus(t, err, 404)
	_, err = e.client.ListMessageMoveTasks(e.ctx, &awssqs.ListMessageMoveTasksInput{SourceArn: aws.String(arn("dlq")), MaxResults: aws.Int32(11)})
	wantErrorMessage(t, err, "InvalidParameterValue", "Value 11 for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided.")

	// No task yet: an empty listing. Nothing was started by the failures.
	if list := e.tasks(arn("dlq"), 10); len(list) != 0 {
		t.Errorf("listing before any task: %s", mustJSON(list))
	}
	if d := e.depth("dlq"); d != 1 {
		t.Errorf("dlq depth %d", d)
	}
}

// reTaskHandle matches the handle in a Query response.
var reTaskHandle = regexp.MustCompile(`<TaskHandle>([^<]+)</TaskHandle>`)

func TestQueryMoveTasksRaw(t *testing.T) {
	e := newEnv(t)
	e.deadLetter("dlq", deadSource{"src", 3})
	e.createQueue("other", nil)

	r := e.postForm("/", url.Values{"Action": {"StartMessageMoveTask"}, "Version": {"2012-11-05"}, "SourceArn": {arn("dlq")},
		"DestinationArn": {arn("other")}, "MaxNumberOfMessagesPerSecond": {"1"}})
	m := reTaskHandle.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("start: %d %s", r.status, r.body)
	}
	handle := m[1]
	r.expect(t, 200, xmlHead+`<StartMessageMoveTaskResponse`+xmlNS+`><StartMessageMoveTaskResult><TaskHandle>`+handle+
		`</TaskHandle></StartMessageMoveTaskResult>`+xmlMeta+`</StartMessageMoveTaskResponse>`)

	e.step()
	entry := func(head, status, moved, tail string) string {
		return `<ListMessageMoveTasksResultEntry>` + head + `<Status>` + status + `</Status><SourceArn>` + arn("dlq") + `</SourceArn>` +
			`<DestinationArn>` + arn("other") + `</DestinationArn><MaxNumberOfMessagesPerSecond>1</MaxNumberOfMessagesPerSecond>` +
			`<ApproximateNumberOfMessagesMoved>` + moved + `</ApproximateNumberOfMessagesMoved>` +
			`<ApproximateNumberOfMessagesToMove>3</ApproximateNumberOfMessagesToMove>` + tail + `</ListMessageMoveTasksResultEntry>`
	}
	started := `<StartedTimestamp>1700000000000</StartedTimestamp>`
	e.get("/?Action=ListMessageMoveTasks&SourceArn="+url.QueryEscape(arn("dlq"))).
		expect(t, 200, xmlHead+`<ListMessageMoveTasksResponse`+xmlNS+`><ListMessageMoveTasksResult>`+
			entry(`<TaskHandle>`+handle+`</TaskHandle>`, "RUNNING", "1", started)+
			`</ListMessageMoveTasksResult>`+xmlMeta+`</ListMessageMoveTasksResponse>`)

	e.postForm("/", url.Values{"Action": {"CancelMessageMoveTask"}, "TaskHandle": {handle}}).
		expect(t, 200, xmlHead+`<CancelMessageMoveTaskResponse`+xmlNS+`><CancelMessageMoveTaskResult>`+
			`<ApproximateNumberOfMessagesMoved>1</ApproximateNumberOfMessagesMoved>`+
			`</CancelMessageMoveTaskResult>`+xmlMeta+`</CancelMessageMoveTaskResponse>`)
	e.clk.Advance(time.Second)
	e.waitTask(arn("dlq"), "CANCELLED")

	// A second task from the clock's new second; both listed, newest first.
	e.postForm("/", url.Values{"Action": {"StartMessageMoveTask"}, "SourceArn": {arn("dlq")},
		"DestinationArn": {arn("other")}, "MaxNumberOfMessagesPerSecond": {"1"}})
	e.step()
	r = e.postForm("/", url.Values{"Action": {"ListMessageMoveTasks"}, "SourceArn": {arn("dlq")}, "MaxResults": {"2"}})
	m = reTaskHandle.FindStringSubmatch(r.body)
	if m == nil {
		t.Fatalf("list: %d %s", r.status, r.body)
	}
	r.expect(t, 200, xmlHead+`<ListMessageMoveTasksResponse`+xmlNS+`><ListMessageMoveTasksResult>`+
		`<ListMessageMoveTasksResultEntry><TaskHandle>`+m[1]+`</TaskHandle><Status>RUNNING</Status><SourceArn>`+arn("dlq")+`</SourceArn>`+
		`<DestinationArn>`+arn("other")+`</DestinationArn><MaxNumberOfMessagesPerSecond>1</MaxNumberOfMessagesPerSecond>`+
		`<ApproximateNumberOfMessagesMoved>1</ApproximateNumberOfMessagesMoved>`+
		`<ApproximateNumberOfMessagesToMove>2</ApproximateNumberOfMessagesToMove>`+
		`<StartedTimestamp>1700000001000</StartedTimestamp></ListMessageMoveTasksResultEntry>`+
		entry("", "CANCELLED", "1", started)+
		`</ListMessageMoveTasksResult>`+xmlMeta+`</ListMessageMoveTasksResponse>`)

	// Errors.
	e.postForm("/", url.Values{"Action": {"StartMessageMoveTask"}}).
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>MissingParameter</Code>`+
			`<Message>The request must contain the parameter SourceArn.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	e.postForm("/", url.Values{"Action": {"ListMessageMoveTasks"}, "SourceArn": {arn("missing")}}).
		expect(t, 404, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>ResourceNotFoundException</Code>`+
			`<Message>The resource that you specified for the SourceArn parameter doesn't exist.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
	e.postForm("/", url.Values{"Action": {"CancelMessageMoveTask"}, "TaskHandle": {"%%%"}}).
		expect(t, 400, xmlHead+`<ErrorResponse`+xmlNS+`><Error><Type>Sender</Type><Code>InvalidParameterValue</Code>`+
			`<Message>Value for parameter TaskHandle is invalid.</Message><Detail/></Error><RequestId>RID</RequestId></ErrorResponse>`)
}
