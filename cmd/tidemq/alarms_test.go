package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tidemq/tidemq/alarms"
)

// TestServeMetricsAndAlarms runs tidemq serve on disk with a fast alarm
// interval and a webhook, dead-letters a message, and checks the webhook
// call, /metrics, `tidemq alarms` and `tidemq alarms rules`.
func TestServeMetricsAndAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and runs a server")
	}
	calls := make(chan alarms.Payload, 10)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p alarms.Payload
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &p); err != nil {
			t.Errorf("webhook body %s: %v", body, err)
		}
		calls <- p
	}))
	defer hook.Close()
	bin := buildBinary(t)
	endpoint := startServer(t, bin, "--data-dir", t.TempDir(), "--alarm-interval", "100ms", "--alarm-webhook", hook.URL)
	sqsCall(t, endpoint, "CreateQueue", `{"QueueName":"orders-dlq"}`)
	sqsCall(t, endpoint, "CreateQueue", `{"QueueName":"orders","Attributes":{"VisibilityTimeout":"0","RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":\"1\"}"}}`)
	sqsCall(t, endpoint, "SendMessage", `{"QueueUrl":"`+endpoint+`/000000000000/orders","MessageBody":"hello"}`)
	sqsCall(t, endpoint, "ReceiveMessage", `{"QueueUrl":"`+endpoint+`/000000000000/orders"}`)
	sqsCall(t, endpoint, "ReceiveMessage", `{"QueueUrl":"`+endpoint+`/000000000000/orders"}`) // dead-letters it

	select {
	case p := <-calls:
		if p.Version != "4" || p.Status != "firing" || p.Alerts[0].Labels["alertname"] != "TidemqDeadLetterQueueNotEmpty" || p.Alerts[0].Labels["queue"] != "orders-dlq" {
			t.Errorf("webhook payload %+v", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook call")
	}

	resp, err := http.Get(endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`tidemq_messages_dead_lettered_total{dead_letter_queue="orders-dlq",queue="orders"} 1`,
		`tidemq_messages_visible{queue="orders-dlq"} 1`,
		`tidemq_alarm_firing{alarm="dlq_not_empty",queue="orders-dlq"} 1`,
		`tidemq_requests_total{action="ReceiveMessage",status="200"} 2`,
		`tidemq_message_size_bytes_sum{queue="orders"} 5`,
		`tidemq_storage_synced_commits_total `,
		"tidemq_queues 2\n",
		"tidemq_metrics_queues_omitted 0\n",
		`tidemq_storage_fsync_duration_seconds_count `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	out, err := exec.Command(bin, "alarms", "--endpoint", endpoint).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "FIRING  orders-dlq  dlq_not_empty") {
		t.Errorf("tidemq alarms: %v\n%s", err, out)
	}
	rules, err := exec.Command(bin, "alarms", "rules").Output()
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile("../../deploy/prometheus-rules.yml")
	if err != nil || string(rules) != string(shipped) {
		t.Errorf("tidemq alarms rules differs from deploy/prometheus-rules.yml (%v)", err)
	}
}

// TestPrintAlarms checks the table of `tidemq alarms`.
func TestPrintAlarms(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	var b strings.Builder
	err := printAlarms(&b, []alarms.Alarm{
		{Alarm: alarms.DLQNotEmpty, Queue: "orders-dlq", State: alarms.StateFiring, Since: now.Add(-90 * time.Second), Summary: "dead-letter queue orders-dlq holds 3 visible messages"},
		{Alarm: alarms.ConsumerGone, Queue: "orders", State: alarms.StateOK, Since: now.Add(-time.Hour), Summary: "0 visible messages and no receive for 2s (limit 15m0s)"},
	}, now, true)
	if err != nil {
		t.Fatal(err)
	}
	want := `STATE   QUEUE       ALARM          FOR     SUMMARY
FIRING  orders-dlq  dlq_not_empty  1m30s   dead-letter queue orders-dlq holds 3 visible messages
OK      orders      consumer_gone  1h0m0s  0 visible messages and no receive for 2s (limit 15m0s)
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	printAlarms(&b, nil, now, false)
	if b.String() != "no alarms firing\n" {
		t.Errorf("empty: %q", b.String())
	}
}
