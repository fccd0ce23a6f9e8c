package sqs

import (
	"context"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/tidemq/tidemq"
)

// moveTaskBroker remembers the move-task parameters the handler passed on.
type moveTaskBroker struct {
	stubBroker
	start  tidemq.StartMoveTaskParams
	list   tidemq.ListMoveTasksParams
	cancel tidemq.CancelMoveTaskParams
}

func (b *moveTaskBroker) StartMessageMoveTask(ctx context.Context, p tidemq.StartMoveTaskParams) (string, error) {
	b.start = p
	return b.stubBroker.StartMessageMoveTask(ctx, p)
}

func (b *moveTaskBroker) ListMessageMoveTasks(ctx context.Context, p tidemq.ListMoveTasksParams) ([]tidemq.MessageMoveTask, error) {
	b.list = p
	return b.stubBroker.ListMessageMoveTasks(ctx, p)
}

func (b *moveTaskBroker) CancelMessageMoveTask(ctx context.Context, p tidemq.CancelMoveTaskParams) (int64, error) {
	b.cancel = p
	return b.stubBroker.CancelMessageMoveTask(ctx, p)
}

// deref shows an optional number.
func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

const (
	dlqARN  = "arn:aws:sqs:us-east-1:000000000000:dlq"
	destARN = "arn:aws:sqs:us-east-1:000000000000:dest"
)

func TestMoveTaskInputsBothProtocols(t *testing.T) {
	b := &moveTaskBroker{}
	h := NewHandler(Config{Broker: b, Logger: slog.New(slog.DiscardHandler)})
	wantStart := tidemq.StartMoveTaskParams{SourceARN: dlqARN, DestinationARN: destARN, MaxNumberOfMessagesPerSecond: new(7)}
	wantList := tidemq.ListMoveTasksParams{SourceARN: dlqARN, MaxResults: new(10)}

	for _, proto := range []string{"json", "query"} {
		*b = moveTaskBroker{}
		if proto == "json" {
			serve(h, jsonRequest("/", "StartMessageMoveTask", `{"SourceArn":"`+dlqARN+`","DestinationArn":"`+destARN+`","MaxNumberOfMessagesPerSecond":7}`))
			serve(h, jsonRequest("/", "ListMessageMoveTasks", `{"SourceArn":"`+dlqARN+`","MaxResults":10}`))
			serve(h, jsonRequest("/", "CancelMessageMoveTask", `{"TaskHandle":"th-1"}`))
		} else {
			serve(h, formRequest("/", url.Values{"Action": {"StartMessageMoveTask"}, "SourceArn": {dlqARN}, "DestinationArn": {destARN}, "MaxNumberOfMessagesPerSecond": {"7"}}))
			serve(h, formRequest("/", url.Values{"Action": {"ListMessageMoveTasks"}, "SourceArn": {dlqARN}, "MaxResults": {"10"}}))
			serve(h, formRequest("/", url.Values{"Action": {"CancelMessageMoveTask"}, "TaskHandle": {"th-1"}}))
		}
		if !reflect.DeepEqual(b.start, wantStart) || !reflect.DeepEqual(b.list, wantList) || b.cancel.TaskHandle != "th-1" {
			t.Errorf("%s: start %+v (rate %v) list %+v (max %v) cancel %q", proto, b.start, deref(b.start.MaxNumberOfMessagesPerSecond),
				b.list, deref(b.list.MaxResults), b.cancel.TaskHandle)
		}
	}

	// Left out: no rate, the broker's default MaxResults (nil, not 0).
	*b = moveTaskBroker{}
	serve(h, jsonRequest("/", "StartMessageMoveTask", `{"SourceArn":"`+dlqARN+`"}`))
	serve(h, formRequest("/", url.Values{"Action": {"ListMessageMoveTasks"}, "SourceArn": {dlqARN}}))
	if b.start != (tidemq.StartMoveTaskParams{SourceARN: dlqARN}) || b.list != (tidemq.ListMoveTasksParams{SourceARN: dlqARN}) {
		t.Errorf("defaults: start %+v list %+v", b.start, b.list)
	}
}

func TestMoveTaskOutputShapes(t *testing.T) {
	h := quietHandler()
	// JSON: the FAILED task's handle and the RUNNING task's failure reason
	// are not shown; StartedTimestamp is epoch ms as a number.
	for _, tt := range []struct{ action, body, want string }{
		{"StartMessageMoveTask", `{"SourceArn":"` + dlqARN + `"}`, `{"TaskHandle":"th-1"}`},
		{"CancelMessageMoveTask", `{"TaskHandle":"th-1"}`, `{"ApproximateNumberOfMessagesMoved":3}`},
		{"ListMessageMoveTasks", `{"SourceArn":"` + dlqARN + `","MaxResults":2}`, `{"Results":[` +
			`{"TaskHandle":"th-1","Status":"RUNNING","SourceArn":"` + dlqARN + `","DestinationArn":"` + destARN + `",` +
			`"MaxNumberOfMessagesPerSecond":5,"ApproximateNumberOfMessagesMoved":2,"ApproximateNumberOfMessagesToMove":5,"StartedTimestamp":1700000000123},` +
			`{"Status":"FAILED","SourceArn":"` + dlqARN + `","ApproximateNumberOfMessagesMoved":1,"ApproximateNumberOfMessagesToMove":4,` +
			`"FailureReason":"AWS.SimpleQueueService.NonExistentQueue","StartedTimestamp":1699999000000}]}`},
	} {
		rec := serve(h, jsonRequest("/", tt.action, tt.body))
		if rec.Code != 200 || rec.Body.String() != tt.want {
			t.Errorf("%s: %d %s\nwant %s", tt.action, rec.Code, rec.Body.String(), tt.want)
		}
	}

	// Query: flattened <ListMessageMoveTasksResultEntry>, members in model order.
	for _, tt := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"Action": {"StartMessageMoveTask"}, "SourceArn": {dlqARN}},
			`<StartMessageMoveTaskResult><TaskHandle>th-1</TaskHandle></StartMessageMoveTaskResult>`},
		{url.Values{"Action": {"CancelMessageMoveTask"}, "TaskHandle": {"th-1"}},
			`<CancelMessageMoveTaskResult><ApproximateNumberOfMessagesMoved>3</ApproximateNumberOfMessagesMoved></CancelMessageMoveTaskResult>`},
		{url.Values{"Action": {"ListMessageMoveTasks"}, "SourceArn": {dlqARN}},
			`<ListMessageMoveTasksResult><ListMessageMoveTasksResultEntry><TaskHandle>th-1</TaskHandle><Status>RUNNING</Status>` +
				`<SourceArn>` + dlqARN + `</SourceArn><DestinationArn>` + destARN + `</DestinationArn>` +
				`<MaxNumberOfMessagesPerSecond>5</MaxNumberOfMessagesPerSecond><ApproximateNumberOfMessagesMoved>2</ApproximateNumberOfMessagesMoved>` +
				`<ApproximateNumberOfMessagesToMove>5</ApproximateNumberOfMessagesToMove><StartedTimestamp>1700000000123</StartedTimestamp>` +
				`</ListMessageMoveTasksResultEntry><ListMessageMoveTasksResultEntry><Status>FAILED</Status><SourceArn>` + dlqARN + `</SourceArn>` +
				`<ApproximateNumberOfMessagesMoved>1</ApproximateNumberOfMessagesMoved><ApproximateNumberOfMessagesToMove>4</ApproximateNumberOfMessagesToMove>` +
				`<FailureReason>AWS.SimpleQueueService.NonExistentQueue</FailureReason><StartedTimestamp>1699999000000</StartedTimestamp>` +
				`</ListMessageMoveTasksResultEntry></ListMessageMoveTasksResult>`},
	} {
		rec := serve(h, formRequest("/", tt.form))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), tt.want) {
			t.Errorf("%s: %d %s\nwant %s", tt.form.Get("Action"), rec.Code, rec.Body.String(), tt.want)
		}
	}
}

func TestMoveTaskParameterChecks(t *testing.T) {
	h := quietHandler()
	for _, tt := range []struct {
		action, body, code, msg string
	}{
		{"StartMessageMoveTask", `{}`, "MissingParameter", "The request must contain the parameter SourceArn."},
		{"StartMessageMoveTask", `{"SourceArn":""}`, "MissingParameter", "The request must contain the parameter SourceArn."},
		{"StartMessageMoveTask", `{"SourceArn":"` + dlqARN + `","MaxNumberOfMessagesPerSecond":501}`, "InvalidParameterValue",
			"Value 501 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500."},
		{"StartMessageMoveTask", `{"SourceArn":"` + dlqARN + `","MaxNumberOfMessagesPerSecond":0}`, "InvalidParameterValue",
			"Value 0 for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be between 1 and 500."},
		{"StartMessageMoveTask", `{"SourceArn":"` + dlqARN + `","MaxNumberOfMessagesPerSecond":"7"}`, "InvalidParameterValue",
			"Value for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: expected an integer, found a JSON string."},
		{"ListMessageMoveTasks", `{}`, "MissingParameter", "The request must contain the parameter SourceArn."},
		{"ListMessageMoveTasks", `{"SourceArn":"` + dlqARN + `","MaxResults":0}`, "InvalidParameterValue",
			"Value 0 for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided."},
		{"ListMessageMoveTasks", `{"SourceArn":"` + dlqARN + `","MaxResults":11}`, "InvalidParameterValue",
			"Value 11 for parameter MaxResults is invalid. Reason: Must be between 1 and 10, if provided."},
		{"CancelMessageMoveTask", `{}`, "MissingParameter", "The request must contain the parameter TaskHandle."},
		{"CancelMessageMoveTask", `{"TaskHandle":"other"}`, "ResourceNotFoundException", "Task does not exist."},
	} {
		rec := serve(h, jsonRequest("/", tt.action, tt.body))
		e := decodeJSONError(t, rec)
		if !strings.HasPrefix(rec.Header().Get("X-Amzn-Query-Error"), tt.code+";") || e.Message != tt.msg {
			t.Errorf("%s %s: %d %s %+v", tt.action, tt.body, rec.Code, rec.Header().Get("X-Amzn-Query-Error"), e)
		}
	}
	rec := serve(h, formRequest("/", url.Values{"Action": {"StartMessageMoveTask"}, "SourceArn": {dlqARN}, "MaxNumberOfMessagesPerSecond": {"fast"}}))
	if rec.Code != 400 || !strings.Contains(rec.Body.String(),
		`<Code>InvalidParameterValue</Code><Message>Value fast for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: Must be an integer.</Message>`) {
		t.Errorf("Query rate not an integer: %d %s", rec.Code, rec.Body.String())
	}
	rec = serve(h, formRequest("/", url.Values{"Action": {"CancelMessageMoveTask"}, "TaskHandle": {"other"}}))
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), `<Code>ResourceNotFoundException</Code><Message>Task does not exist.</Message>`) {
		t.Errorf("Query unknown task: %d %s", rec.Code, rec.Body.String())
	}
}
