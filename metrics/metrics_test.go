package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/metrics"
	"github.com/tidemq/tidemq/storage/mem"
)

var start = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// rig is an engine on a fake clock behind the SQS handler, with metrics.
type rig struct {
	t   *testing.T
	clk *clocktest.Clock
	eng *engine.Engine
	m   *metrics.Metrics
	h   http.Handler
}

func newRig(t *testing.T) *rig {
	t.Helper()
	clk := clocktest.New(start)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	m := metrics.New(metrics.Options{Snapshots: eng.Snapshot, NoRuntime: true})
	h := sqs.NewHandler(sqs.Config{Broker: m.Broker(eng), Logger: log, Observe: m.ObserveRequest})
	return &rig{t: t, clk: clk, eng: eng, m: m, h: h}
}

// call sends one AWS JSON request and returns the status.
func (r *rig) call(action, body string) int {
	r.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://localhost:9324/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	return rec.Code
}

func (r *rig) ok(action, body string) {
	r.t.Helper()
	if code := r.call(action, body); code != 200 {
		r.t.Fatalf("%s %s: status %d", action, body, code)
	}
}

const url = "http://localhost:9324/000000000000/"

// receiptOf receives up to n messages from a queue and returns their receipt handles.
func (r *rig) receive(queue string, n int) []string {
	r.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://localhost:9324/",
		strings.NewReader(fmt.Sprintf(`{"QueueUrl":%q,"MaxNumberOfMessages":%d,"WaitTimeSeconds":0}`, url+queue, n)))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	var out struct {
		Messages []struct{ ReceiptHandle string }
	}
	if err := jsonUnmarshal(rec.Body.Bytes(), &out); err != nil || rec.Code != 200 {
		r.t.Fatalf("receive: %d %s", rec.Code, rec.Body)
	}
	var hs []string
	for _, m := range out.Messages {
		hs = append(hs, m.ReceiptHandle)
	}
	return hs
}

// TestScriptedTraffic drives a queue with a dead-letter queue through
// sends, receives, a delete, a redelivery that dead-letters, a purge and an
// expiry, and checks every per-queue value exactly.
func TestScriptedTraffic(t *testing.T) {
	r := newRig(t)
	r.ok("CreateQueue", `{"QueueName":"orders-dlq"}`)
	r.ok("CreateQueue", `{"QueueName":"orders","Attributes":{"VisibilityTimeout":"30","MessageRetentionPeriod":"600",
		"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":\"1\"}"}}`)
	r.ok("CreateQueue", `{"QueueName":"audit"}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`orders","MessageBody":"a"}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`orders","MessageBody":"bb","MessageAttributes":{"k":{"DataType":"String","StringValue":"v"}}}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`orders","MessageBody":"later","DelaySeconds":120}`)
	r.ok("SendMessageBatch", `{"QueueUrl":"`+url+`audit","Entries":[{"Id":"1","MessageBody":"x"},{"Id":"2","MessageBody":"`+strings.Repeat("y", 300)+`"}]}`)
	r.clk.Advance(10 * time.Second)

	hs := r.receive("orders", 10) // a and bb: in flight
	if len(hs) != 2 {
		t.Fatalf("received %d", len(hs))
	}
	r.ok("DeleteMessage", `{"QueueUrl":"`+url+`orders","ReceiptHandle":"`+hs[0]+`"}`)
	if n := len(r.receive("orders", 10)); n != 0 { // empty receive
		t.Fatalf("received %d", n)
	}
	r.clk.Advance(40 * time.Second) // the undeleted one is visible again, received once: dead-lettered on the next receive
	if n := len(r.receive("orders", 10)); n != 0 {
		t.Fatalf("received %d after the visibility timeout", n)
	}
	r.ok("PurgeQueue", `{"QueueUrl":"`+url+`audit"}`)
	r.call("GetQueueUrl", `{"QueueName":"missing"}`)
	r.clk.Advance(70 * time.Second) // 120 s: the delayed message becomes visible

	expected := `
# HELP tidemq_messages_visible Messages available for retrieval (ApproximateNumberOfMessagesVisible).
# TYPE tidemq_messages_visible gauge
tidemq_messages_visible{queue="audit"} 0
tidemq_messages_visible{queue="orders"} 1
tidemq_messages_visible{queue="orders-dlq"} 1
# HELP tidemq_messages_not_visible Messages received and not yet deleted or returned: in flight (ApproximateNumberOfMessagesNotVisible).
# TYPE tidemq_messages_not_visible gauge
tidemq_messages_not_visible{queue="audit"} 0
tidemq_messages_not_visible{queue="orders"} 0
tidemq_messages_not_visible{queue="orders-dlq"} 0
# HELP tidemq_messages_delayed Messages sent with a delay that has not passed yet (ApproximateNumberOfMessagesDelayed).
# TYPE tidemq_messages_delayed gauge
tidemq_messages_delayed{queue="audit"} 0
tidemq_messages_delayed{queue="orders"} 0
tidemq_messages_delayed{queue="orders-dlq"} 0
# HELP tidemq_messages_sent_total Messages accepted by SendMessage and SendMessageBatch, duplicates excluded (NumberOfMessagesSent).
# TYPE tidemq_messages_sent_total counter
tidemq_messages_sent_total{queue="audit"} 2
tidemq_messages_sent_total{queue="orders"} 3
tidemq_messages_sent_total{queue="orders-dlq"} 0
# HELP tidemq_messages_received_total Messages returned by ReceiveMessage (NumberOfMessagesReceived).
# TYPE tidemq_messages_received_total counter
tidemq_messages_received_total{queue="audit"} 0
tidemq_messages_received_total{queue="orders"} 2
tidemq_messages_received_total{queue="orders-dlq"} 0
# HELP tidemq_empty_receives_total ReceiveMessage calls that returned no message (NumberOfEmptyReceives).
# TYPE tidemq_empty_receives_total counter
tidemq_empty_receives_total{queue="audit"} 0
tidemq_empty_receives_total{queue="orders"} 2
tidemq_empty_receives_total{queue="orders-dlq"} 0
# HELP tidemq_messages_deleted_total Messages deleted by receipt handle (NumberOfMessagesDeleted).
# TYPE tidemq_messages_deleted_total counter
tidemq_messages_deleted_total{queue="audit"} 0
tidemq_messages_deleted_total{queue="orders"} 1
tidemq_messages_deleted_total{queue="orders-dlq"} 0
# HELP tidemq_messages_dead_lettered_total Messages moved out of this (source) queue to its dead-letter queue after maxReceiveCount receives.
# TYPE tidemq_messages_dead_lettered_total counter
tidemq_messages_dead_lettered_total{dead_letter_queue="orders-dlq",queue="orders"} 1
# HELP tidemq_messages_purged_total Messages removed by PurgeQueue.
# TYPE tidemq_messages_purged_total counter
tidemq_messages_purged_total{queue="audit"} 2
tidemq_messages_purged_total{queue="orders"} 0
tidemq_messages_purged_total{queue="orders-dlq"} 0
# HELP tidemq_messages_moved_in_total Messages that arrived by a dead-letter move, a message move task or a redrive.
# TYPE tidemq_messages_moved_in_total counter
tidemq_messages_moved_in_total{queue="audit"} 0
tidemq_messages_moved_in_total{queue="orders"} 0
tidemq_messages_moved_in_total{queue="orders-dlq"} 1
# HELP tidemq_queue_is_dead_letter_queue 1 for a dead-letter queue: a RedrivePolicy names it, it holds dead-lettered messages, or it is named like one (-dlq, _dlq, ...).
# TYPE tidemq_queue_is_dead_letter_queue gauge
tidemq_queue_is_dead_letter_queue{queue="audit"} 0
tidemq_queue_is_dead_letter_queue{queue="orders"} 0
tidemq_queue_is_dead_letter_queue{queue="orders-dlq"} 1
# HELP tidemq_last_receive_timestamp_seconds When a consumer last asked this queue for messages (Unix time), 0 if never since start.
# TYPE tidemq_last_receive_timestamp_seconds gauge
tidemq_last_receive_timestamp_seconds{queue="audit"} 0
tidemq_last_receive_timestamp_seconds{queue="orders"} 1.74083045e+09
tidemq_last_receive_timestamp_seconds{queue="orders-dlq"} 0
# HELP tidemq_oldest_message_age_seconds Age of the oldest message in the queue, 0 when empty (ApproximateAgeOfOldestMessage).
# TYPE tidemq_oldest_message_age_seconds gauge
tidemq_oldest_message_age_seconds{queue="audit"} 0
tidemq_oldest_message_age_seconds{queue="orders"} 120
tidemq_oldest_message_age_seconds{queue="orders-dlq"} 120
`
	names := []string{"tidemq_messages_visible", "tidemq_messages_not_visible", "tidemq_messages_delayed",
		"tidemq_messages_sent_total", "tidemq_messages_received_total", "tidemq_empty_receives_total",
		"tidemq_messages_deleted_total", "tidemq_messages_dead_lettered_total", "tidemq_messages_purged_total",
		"tidemq_messages_moved_in_total", "tidemq_queue_is_dead_letter_queue", "tidemq_last_receive_timestamp_seconds",
		"tidemq_oldest_message_age_seconds"}
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(expected), names...); err != nil {
		t.Error(err)
	}

	requests := `
# HELP tidemq_requests_total SQS and SNS API requests answered, by action (SNS's as SNS.<Action>) and HTTP status.
# TYPE tidemq_requests_total counter
tidemq_requests_total{action="CreateQueue",status="200"} 3
tidemq_requests_total{action="DeleteMessage",status="200"} 1
tidemq_requests_total{action="GetQueueUrl",status="400"} 1
tidemq_requests_total{action="PurgeQueue",status="200"} 1
tidemq_requests_total{action="ReceiveMessage",status="200"} 3
tidemq_requests_total{action="SendMessage",status="200"} 3
tidemq_requests_total{action="SendMessageBatch",status="200"} 1
# HELP tidemq_request_errors_total SQS and SNS API requests answered with an error, by action and error code.
# TYPE tidemq_request_errors_total counter
tidemq_request_errors_total{action="GetQueueUrl",code="QueueDoesNotExist"} 1
# HELP tidemq_message_size_bytes Size of accepted messages (body and message attributes, as SQS counts it), by queue (SentMessageSize).
# TYPE tidemq_message_size_bytes histogram
tidemq_message_size_bytes_bucket{queue="audit",le="64"} 1
tidemq_message_size_bytes_bucket{queue="audit",le="256"} 1
tidemq_message_size_bytes_bucket{queue="audit",le="1024"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="4096"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="16384"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="65536"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="262144"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="1.048576e+06"} 2
tidemq_message_size_bytes_bucket{queue="audit",le="+Inf"} 2
tidemq_message_size_bytes_sum{queue="audit"} 301
tidemq_message_size_bytes_count{queue="audit"} 2
tidemq_message_size_bytes_bucket{queue="orders",le="64"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="256"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="1024"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="4096"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="16384"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="65536"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="262144"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="1.048576e+06"} 3
tidemq_message_size_bytes_bucket{queue="orders",le="+Inf"} 3
tidemq_message_size_bytes_sum{queue="orders"} 16
tidemq_message_size_bytes_count{queue="orders"} 3
`
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(requests),
		"tidemq_requests_total", "tidemq_request_errors_total", "tidemq_message_size_bytes"); err != nil {
		t.Error(err)
	}
	// One latency observation per request, by action.
	if n := testutil.CollectAndCount(r.m.Registry(), "tidemq_request_duration_seconds"); n != 7 {
		t.Errorf("%d latency series, want 7 (one per action)", n)
	}
}

// TestExpiryAndRetention checks the expiry counter and the retention gauge.
func TestExpiryAndRetention(t *testing.T) {
	r := newRig(t)
	r.ok("CreateQueue", `{"QueueName":"short","Attributes":{"MessageRetentionPeriod":"60"}}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`short","MessageBody":"a"}`)
	r.ok("SendMessage", `{"QueueUrl":"`+url+`short","MessageBody":"b"}`)
	r.clk.Advance(61 * time.Second)
	expected := `
# HELP tidemq_messages_expired_total Messages that reached the end of the retention period.
# TYPE tidemq_messages_expired_total counter
tidemq_messages_expired_total{queue="short"} 2
# HELP tidemq_queue_retention_seconds The queue's MessageRetentionPeriod.
# TYPE tidemq_queue_retention_seconds gauge
tidemq_queue_retention_seconds{queue="short"} 60
`
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(expected),
		"tidemq_messages_expired_total", "tidemq_queue_retention_seconds"); err != nil {
		t.Error(err)
	}
}

// TestUnknownActionBounded checks that made-up actions share one label.
func TestUnknownActionBounded(t *testing.T) {
	r := newRig(t)
	r.call("NoSuchThing", `{}`)
	r.call("AnotherMadeUp", `{}`)
	expected := `
# HELP tidemq_request_errors_total SQS and SNS API requests answered with an error, by action and error code.
# TYPE tidemq_request_errors_total counter
tidemq_request_errors_total{action="unknown",code="InvalidAction"} 2
`
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(expected), "tidemq_request_errors_total"); err != nil {
		t.Error(err)
	}
}

// TestExtensionActionsLabelled: the action label comes from the SQS
// handler's action table, so tidemq's extension actions have their own
// label (they were "unknown" while metrics kept a list of its own), and a
// made-up extension is still "unknown".
func TestExtensionActionsLabelled(t *testing.T) {
	r := newRig(t)
	ext := func(name string) int {
		req := httptest.NewRequest(http.MethodPost, "http://localhost:9324/", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "TidemqExtensions."+name)
		rec := httptest.NewRecorder()
		r.h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := ext("ListQueueStats"); code != 200 {
		t.Fatalf("ListQueueStats: status %d", code)
	}
	ext("NoSuchExtension")
	expected := `
# HELP tidemq_requests_total SQS and SNS API requests answered, by action (SNS's as SNS.<Action>) and HTTP status.
# TYPE tidemq_requests_total counter
tidemq_requests_total{action="TidemqExtensions.ListQueueStats",status="200"} 1
tidemq_requests_total{action="unknown",status="400"} 1
`
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(expected), "tidemq_requests_total"); err != nil {
		t.Error(err)
	}
	expected = `
# HELP tidemq_request_errors_total SQS and SNS API requests answered with an error, by action and error code.
# TYPE tidemq_request_errors_total counter
tidemq_request_errors_total{action="unknown",code="InvalidAction"} 1
`
	if err := testutil.GatherAndCompare(r.m.Registry(), strings.NewReader(expected), "tidemq_request_errors_total"); err != nil {
		t.Error(err)
	}
}

// TestStorageAndAlarms checks the storage histogram's exact buckets and the
// alarm gauge.
func TestStorageAndAlarms(t *testing.T) {
	m := metrics.New(metrics.Options{
		NoRuntime: true,
		Storage: func() metrics.StorageStats {
			return metrics.StorageStats{SyncedCommits: 30, Fsyncs: 10, FsyncSeconds: 0.012,
				FsyncBuckets: metrics.Rebucket(map[float64]uint64{0.0004: 2, 0.0009: 7, 0.003: 9, 0.02: 10}, []float64{0.001, 0.01})}
		},
		Alarms: func() []metrics.AlarmState {
			return []metrics.AlarmState{{Alarm: "dlq_not_empty", Queue: "orders-dlq", Firing: true}, {Alarm: "consumer_gone", Queue: "orders"},
				{Alarm: "trigger_errors", Queue: "orders", Trigger: "orders-fn", Firing: true}, {Alarm: "trigger_errors", Queue: "orders", Trigger: "audit-fn"}}
		},
	})
	expected := `
# HELP tidemq_alarm_firing 1 while the server-evaluated alarm fires on the queue, 0 while it is OK.
# TYPE tidemq_alarm_firing gauge
tidemq_alarm_firing{alarm="consumer_gone",queue="orders"} 0
tidemq_alarm_firing{alarm="dlq_not_empty",queue="orders-dlq"} 1
# HELP tidemq_alarms_firing Alarms firing now, by alarm, over every queue and trigger.
# TYPE tidemq_alarms_firing gauge
tidemq_alarms_firing{alarm="consumer_gone"} 0
tidemq_alarms_firing{alarm="dlq_not_empty"} 1
tidemq_alarms_firing{alarm="trigger_errors"} 1
# HELP tidemq_trigger_alarm_firing 1 while the server-evaluated alarm fires on the trigger, 0 while it is OK.
# TYPE tidemq_trigger_alarm_firing gauge
tidemq_trigger_alarm_firing{alarm="trigger_errors",queue="orders",trigger="audit-fn"} 0
tidemq_trigger_alarm_firing{alarm="trigger_errors",queue="orders",trigger="orders-fn"} 1
# HELP tidemq_storage_fsync_duration_seconds Time taken by the write-ahead log's fsyncs.
# TYPE tidemq_storage_fsync_duration_seconds histogram
tidemq_storage_fsync_duration_seconds_bucket{le="0.0009"} 7
tidemq_storage_fsync_duration_seconds_bucket{le="0.003"} 9
tidemq_storage_fsync_duration_seconds_bucket{le="+Inf"} 10
tidemq_storage_fsync_duration_seconds_sum 0.012
tidemq_storage_fsync_duration_seconds_count 10
# HELP tidemq_storage_fsyncs_total Write-ahead log fsyncs.
# TYPE tidemq_storage_fsyncs_total counter
tidemq_storage_fsyncs_total 10
# HELP tidemq_storage_synced_commits_total Batches committed with a sync, one per durable write; divided by tidemq_storage_fsyncs_total it is the mean group-commit size.
# TYPE tidemq_storage_synced_commits_total counter
tidemq_storage_synced_commits_total 30
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(expected)); err != nil {
		t.Error(err)
	}
}

// TestHandler checks that /metrics serves the text format.
func TestHandler(t *testing.T) {
	r := newRig(t)
	r.ok("CreateQueue", `{"QueueName":"q"}`)
	rec := httptest.NewRecorder()
	r.m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `tidemq_messages_visible{queue="q"} 0`) {
		t.Errorf("%d %s", rec.Code, rec.Body)
	}
}

var _ tidemq.Broker = (*engine.Engine)(nil)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestBrokerForwards checks that the size-observing wrapper is the whole
// broker to its readers: Snapshot, Healthy and RecordFailure reach the
// engine (a trigger records failures through it).
func TestBrokerForwards(t *testing.T) {
	r := newRig(t)
	w := r.m.Broker(r.eng)
	ctx := context.Background()
	if _, err := w.CreateQueue(ctx, tidemq.CreateQueueParams{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SendMessages(ctx, tidemq.SendMessagesParams{Queue: "q", Entries: []tidemq.SendEntry{{ID: "1", Body: "b"}}}); err != nil {
		t.Fatal(err)
	}
	if s := w.Snapshot(); len(s) != 1 || s[0].Name != "q" || s[0].Visible != 1 {
		t.Errorf("Snapshot through the wrapper = %+v", s)
	}
	if err := w.Healthy(); err != nil {
		t.Errorf("Healthy through the wrapper = %v", err)
	}
	msgs, err := w.ReceiveMessages(ctx, tidemq.ReceiveMessagesParams{Queue: "q", MaxNumberOfMessages: new(1)})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(msgs))
	}
	errs, err := w.RecordFailure(ctx, tidemq.RecordFailureParams{Queue: "q", ReceiptHandles: []string{msgs[0].ReceiptHandle}, Detail: "boom"})
	if err != nil || len(errs) != 1 || errs[0] != nil {
		t.Fatalf("RecordFailure through the wrapper: %v %v", err, errs)
	}
	peek, err := r.eng.PeekMessages(ctx, tidemq.PeekMessagesParams{Queue: "q", Max: new(1), IncludeInflight: true})
	if err != nil || len(peek) != 1 {
		t.Fatalf("peek: %v", err)
	}
	found := false
	for _, ev := range peek[0].History {
		found = found || ev.Kind == tidemq.HistoryConsumerFailed && strings.Contains(ev.Detail, "boom")
	}
	if !found {
		t.Errorf("the failure recorded through the wrapper is not in the history: %+v", peek[0].History)
	}
}
