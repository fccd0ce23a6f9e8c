package dlq_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/tidemq/tidemq/dlq"
)

// TestDelayedMessagesArePeekedAndExported: seed 002's backoff sends a
// failed message back with a delay. peek did not show it, nor when it
// becomes receivable, and export skipped it ("exported 0"). Both show it
// now, with its delay and the time it becomes receivable; a dry run says
// the redrive cannot receive it yet.
func TestDelayedMessagesArePeekedAndExported(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("loader_dlq", nil)
	e.source("loader", "loader_dlq", 1)
	sent := e.clk.Now()
	for _, d := range []int32{120, 300} {
		e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(`{"retry_count": 1}`), DelaySeconds: d})
	}
	e.clk.Advance(20 * time.Second)

	tool := e.tool(dlq.ModeAuto)
	if err := tool.Peek(e.ctx, "loader_dlq", dlq.PeekOptions{}); err != nil {
		t.Fatal(err)
	}
	out := e.out.String()
	for _, want := range []string{
		"message 1 of 2", "message 2 of 2",
		"  delayed      2m00s: receivable at " + sent.Add(120*time.Second).UTC().Format(time.RFC3339) + " (in 1m40s)",
		"  delayed      5m00s: receivable at " + sent.Add(300*time.Second).UTC().Format(time.RFC3339) + " (in 4m40s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("peek lacks %q:\n%s", want, out)
		}
	}

	var buf bytes.Buffer
	tool = e.tool(dlq.ModeAuto)
	n, err := tool.Export(e.ctx, "loader_dlq", &buf, dlq.ExportOptions{})
	if err != nil || n != 2 {
		t.Fatalf("export: %d, %v", n, err)
	}
	var recs []dlq.Record
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var r dlq.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if recs[0].DelaySeconds != 120 || recs[0].VisibleAt != sent.Add(120*time.Second).UTC().Format("2006-01-02T15:04:05.000Z") ||
		recs[1].DelaySeconds != 300 {
		t.Errorf("export records %+v", recs)
	}
	if !strings.Contains(e.errs.String(), "exported 2 messages from loader_dlq") {
		t.Errorf("stderr %q", e.errs.String())
	}

	tool = e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "loader_dlq", dlq.RedriveOptions{DryRun: true})
	if err != nil || res.Moved != 0 || !strings.Contains(e.out.String(), "would wait for "+recs[0].MessageID+": delayed until ") {
		t.Errorf("dry run %+v %v\n%s", res, err, e.out.String())
	}

	// Once the delay is over they are plain visible messages.
	e.clk.Advance(5 * time.Minute)
	tool = e.tool(dlq.ModeAuto)
	if err := tool.Peek(e.ctx, "loader_dlq", dlq.PeekOptions{}); err != nil || strings.Contains(e.out.String(), "delayed") {
		t.Errorf("peek after the delay: %v\n%s", err, e.out.String())
	}
}
