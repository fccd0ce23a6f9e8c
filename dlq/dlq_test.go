package dlq_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/dlq"
)

// snsBody is a real SNS notification envelope around a JSON message, with
// unicode in it.
const snsBody = `{"Type":"Notification","MessageId":"6f1c0a52-1f7e-4b7e-9e7a-3d1b2c4d5e6f","TopicArn":"arn:aws:sns:us-east-1:000000000000:orders","Subject":"order failed","Message":"{\"orderId\":42,\"customer\":\"Zoë Ångström\",\"note\":\"日本語 ✓\"}","Timestamp":"2023-11-14T22:13:20.000Z","SignatureVersion":"1"}`

// wrappedBody is the hand-rolled double encoding: {"Message": "<json string>"}.
const wrappedBody = `{"Message": "{\"caseId\": 1001, \"eventType\": \"DOCUMENT_PROCESSED\", \"eventDetail\": \"{\\\"retry_count\\\": 2}\"}"}`

// TestPeekTellsTheStoryOfADeadLetter: a message received twice, by two
// different clients (access key and User-Agent), then dead-lettered on the
// third receive attempt. Peek shows its history and why it died, and
// changes nothing about it.
func TestPeekTellsTheStoryOfADeadLetter(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("orders-dlq", nil)
	src := e.createQueue("orders", map[string]string{"VisibilityTimeout": "30",
		"RedrivePolicy": `{"deadLetterTargetArn":"` + arn("orders-dlq") + `","maxReceiveCount":2}`})
	e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(snsBody),
		MessageAttributes: map[string]types.MessageAttributeValue{"tenant": str("acme")}})

	alpha := newClient(e.srv.URL, "AKIDALPHA", "billing-worker")
	bravo := newClient(e.srv.URL, "AKIDBRAVO", "audit-worker")
	for i, c := range []*awssqs.Client{alpha, bravo, alpha} {
		out, err := c.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(src)})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 1, 1: 1, 2: 0}[i]; len(out.Messages) != want {
			t.Fatalf("receive %d returned %d messages, want %d", i+1, len(out.Messages), want)
		}
		e.clk.Advance(31 * time.Second) // the visibility timeout ends
	}
	if d := e.depth(dlqURL); d != 1 {
		t.Fatalf("DLQ depth %d", d)
	}

	tool := e.tool(dlq.ModeAuto)
	if err := tool.Peek(e.ctx, "orders-dlq", dlq.PeekOptions{}); err != nil {
		t.Fatal(err)
	}
	got := e.out.String()
	t.Logf("peek:\n%s", got)
	for _, want := range []string{
		"orders-dlq  message 1 of 1",
		"receives     2",
		"source       orders (arn:aws:sqs:us-east-1:000000000000:orders)",
		"tenant (String) = acme",
		"SNS notification from arn:aws:sns:us-east-1:000000000000:orders, subject \"order failed\"",
		"      \"customer\": \"Zoë Ångström\",", // the inner message, unwrapped and indented
		"received           orders         receive 1, visibility timeout 30s; by key AKIDALPHA",
		"received           orders         receive 2, visibility timeout 30s; by key AKIDBRAVO",
		"app/billing-worker", "app/audit-worker",
		"dead-lettered      orders         maxReceiveCount 2 reached",
		"why          dead-lettered from orders at 2023-11-14T22:14:22Z after 2 receive(s) by AKIDALPHA (billing-worker), AKIDBRAVO (audit-worker): maxReceiveCount 2 reached",
		"(1m33s ago)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("peek output lacks %q", want)
		}
	}
	// Peek is not a receive: a second peek shows the same count, and the
	// message is still visible.
	first := got
	tool = e.tool(dlq.ModeAuto)
	if err := tool.Peek(e.ctx, "orders-dlq", dlq.PeekOptions{}); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != first {
		t.Errorf("a second peek differs:\n%s", e.out.String())
	}
	if a := e.attrs(dlqURL); a["ApproximateNumberOfMessages"] != "1" || a["ApproximateNumberOfMessagesNotVisible"] != "0" {
		t.Errorf("after peeking: %v", a)
	}
}

// TestPeekOnAWSTakesAReceive: without the extension, peek refuses unless
// allowed, warns, and the receive count goes up; the messages are visible
// again afterwards.
func TestPeekOnAWSTakesAReceive(t *testing.T) {
	e := newEnv(t)
	q := e.createQueue("plain", nil)
	e.send(q, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)})
	e.send(q, &awssqs.SendMessageInput{MessageBody: aws.String("not json at all")})

	tool := e.tool(dlq.ModeAWS)
	if err := tool.Peek(e.ctx, q, dlq.PeekOptions{}); !errors.Is(err, dlq.ErrNeedsReceive) {
		t.Fatalf("peek on AWS without --allow-receive: %v", err)
	}
	if err := tool.Peek(e.ctx, q, dlq.PeekOptions{AllowReceive: true}); err != nil {
		t.Fatal(err)
	}
	out := e.out.String()
	for _, want := range []string{"message 1 of 2", "message 2 of 2", "receives     1",
		`{"Message": <JSON string>} envelope`, `"eventType": "DOCUMENT_PROCESSED"`, "not json at all"} {
		if !strings.Contains(out, want) {
			t.Errorf("peek output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "history") {
		t.Errorf("no history on AWS:\n%s", out)
	}
	if !strings.Contains(e.errs.String(), "receive count of every message shown goes up by one") {
		t.Errorf("no warning: %q", e.errs.String())
	}
	if a := e.attrs(q); a["ApproximateNumberOfMessages"] != "2" {
		t.Errorf("messages not released: %v", a)
	}
}

func TestDetectsTidemqAndAWS(t *testing.T) {
	e := newEnv(t)
	if ok, err := e.tool(dlq.ModeAuto).IsTidemq(e.ctx); !ok || err != nil {
		t.Fatalf("tidemq not detected: %v %v", ok, err)
	}
	// An endpoint that answers unknown targets as AWS does.
	aws404 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"__type":"com.amazon.coral.service#UnknownOperationException","message":null}`))
	}))
	defer aws404.Close()
	tool := &dlq.Client{SQS: newClient(aws404.URL, "AKID", "")}
	if ok, err := tool.IsTidemq(e.ctx); ok || err != nil {
		t.Fatalf("AWS taken for tidemq: %v %v", ok, err)
	}
}

// TestRedriveWithMarkers: receive → send → delete back to each message's
// own source, body bytes and attributes kept, markers added and counted up
// on a second pass.
func TestRedriveWithMarkers(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("jobs-dlq", nil)
	a := e.source("jobs-a", "jobs-dlq", 1)
	b := e.source("jobs-b", "jobs-dlq", 1)
	e.send(a, &awssqs.SendMessageInput{MessageBody: aws.String(snsBody), MessageAttributes: map[string]types.MessageAttributeValue{"tenant": str("acme")}})
	e.send(b, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)})
	e.deadLetterAll(a)
	e.deadLetterAll(b)

	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "jobs-dlq", dlq.RedriveOptions{Mark: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != 2 || res.Task != nil || e.depth(dlqURL) != 0 {
		t.Fatalf("redrive: %+v, DLQ depth %d", res, e.depth(dlqURL))
	}
	if !strings.Contains(e.out.String(), "jobs-dlq: moved 2 (marked tidemq.redriven)") {
		t.Errorf("summary: %q", e.out.String())
	}
	check := func(url, body string, count string, extra map[string]string) {
		t.Helper()
		msgs := e.receiveAll(url)
		if len(msgs) != 1 {
			t.Fatalf("%s holds %d messages", url, len(msgs))
		}
		m := msgs[0]
		if aws.ToString(m.Body) != body {
			t.Errorf("body changed:\n%s\n%s", aws.ToString(m.Body), body)
		}
		if v := aws.ToString(m.MessageAttributes["tidemq.redriven"].StringValue); v != "true" {
			t.Errorf("tidemq.redriven = %q", v)
		}
		if v := m.MessageAttributes["tidemq.redrive-count"]; aws.ToString(v.StringValue) != count || aws.ToString(v.DataType) != "Number" {
			t.Errorf("tidemq.redrive-count = %v %v, want %s", aws.ToString(v.DataType), aws.ToString(v.StringValue), count)
		}
		for k, v := range extra {
			if got := aws.ToString(m.MessageAttributes[k].StringValue); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
		// Put it back so it can fail again.
		in := &awssqs.SendMessageInput{MessageBody: m.Body, MessageAttributes: m.MessageAttributes}
		e.send(url, in)
	}
	check(a, snsBody, "1", map[string]string{"tenant": "acme"})
	check(b, wrappedBody, "1", nil)

	// They fail again; the second pass counts up and marks the final pass.
	e.deadLetterAll(a)
	e.deadLetterAll(b)
	tool = e.tool(dlq.ModeAuto)
	if _, err := tool.Redrive(e.ctx, "jobs-dlq", dlq.RedriveOptions{Mark: true, FinalPass: true}); err != nil {
		t.Fatal(err)
	}
	check(a, snsBody, "2", map[string]string{"tenant": "acme", "tidemq.final-pass": "true"})
}

// TestRedriveMoveTask: with nothing asked but a destination, a redrive is a
// message move task, followed to its end.
func TestRedriveMoveTask(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("mail-dlq", nil)
	src := e.source("mail", "mail-dlq", 1)
	for i := range 5 {
		e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String("mail " + string(rune('a'+i)))})
	}
	e.deadLetterAll(src)
	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "mail-dlq", dlq.RedriveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Task == nil || aws.ToString(res.Task.Status) != "COMPLETED" || res.Moved != 5 {
		t.Fatalf("move task result %+v", res)
	}
	if e.depth(dlqURL) != 0 || e.depth(src) != 5 {
		t.Errorf("after the task: DLQ %d, source %d", e.depth(dlqURL), e.depth(src))
	}
	want := "started a message move task: mail-dlq → each message's source queue\nmove task COMPLETED: moved 5 of 5 messages\n"
	if e.out.String() != want {
		t.Errorf("output %q", e.out.String())
	}
	// To another queue.
	e.deadLetterAll(src)
	other := e.createQueue("mail-replay", nil)
	tool = e.tool(dlq.ModeAuto)
	if _, err := tool.Redrive(e.ctx, dlqURL, dlq.RedriveOptions{To: "mail-replay"}); err != nil {
		t.Fatal(err)
	}
	if e.depth(other) != 5 {
		t.Errorf("mail-replay holds %d", e.depth(other))
	}
}

// TestRedriveFIFOWithFilterAndDryRun: a filter moves only what it matches,
// in group order, with the group kept and a fresh deduplication id; a dry
// run moves nothing.
func TestRedriveFIFOWithFilterAndDryRun(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("crm-dlq.fifo", map[string]string{"FifoQueue": "true"})
	src := e.source("crm.fifo", "crm-dlq.fifo", 1)
	for i, tenant := range []string{"acme", "globex", "acme", "acme"} {
		group := "seller-1"
		if i == 3 {
			group = "seller-2"
		}
		e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(`{"n":` + string(rune('0'+i)) + `,"tenant":"` + tenant + `"}`),
			MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String("d" + string(rune('0'+i))),
			MessageAttributes: map[string]types.MessageAttributeValue{"tenant": str(tenant)}})
	}
	e.deadLetterAll(src)
	if e.depth(dlqURL) != 4 {
		t.Fatalf("DLQ depth %d", e.depth(dlqURL))
	}
	filter, err := dlq.ParseFilter(`attr.tenant == "acme" && json.n != 2`)
	if err != nil {
		t.Fatal(err)
	}

	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "crm-dlq.fifo", dlq.RedriveOptions{Filter: filter, Mark: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != 2 || res.Skipped != 2 || e.depth(dlqURL) != 4 {
		t.Fatalf("dry run %+v, depth %d", res, e.depth(dlqURL))
	}
	out := e.out.String()
	if strings.Count(out, "would move ") != 2 || !strings.Contains(out, "→ crm.fifo (group seller-1) with tidemq.redrive-count=1") ||
		!strings.Contains(out, "dry run: 2 would move, 2 do not match the filter; nothing was moved") {
		t.Errorf("dry run output:\n%s", out)
	}

	tool = e.tool(dlq.ModeAuto)
	res, err = tool.Redrive(e.ctx, "crm-dlq.fifo", dlq.RedriveOptions{Filter: filter, Mark: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved != 2 || res.Skipped != 2 {
		t.Fatalf("redrive %+v\n%s", res, e.out.String())
	}
	// The two that did not match are still in the DLQ, visible again.
	if a := e.attrs(dlqURL); a["ApproximateNumberOfMessages"] != "2" {
		t.Errorf("DLQ after the filtered redrive: %v", a)
	}
	moved := e.receiveAll(src)
	if len(moved) != 2 {
		t.Fatalf("source holds %d", len(moved))
	}
	groups := map[string]string{}
	for _, m := range moved {
		groups[aws.ToString(m.Body)] = m.Attributes["MessageGroupId"]
		if d := m.Attributes["MessageDeduplicationId"]; d == "" || strings.HasPrefix(d, "d") && len(d) == 2 {
			t.Errorf("dedup id %q is not fresh", d)
		}
		if aws.ToString(m.MessageAttributes["tidemq.redrive-count"].StringValue) != "1" {
			t.Errorf("no marker on %s", aws.ToString(m.Body))
		}
	}
	if groups[`{"n":0,"tenant":"acme"}`] != "seller-1" || groups[`{"n":3,"tenant":"acme"}`] != "seller-2" {
		t.Errorf("moved %v", groups)
	}
	// --limit 1 moves one.
	tool = e.tool(dlq.ModeAuto)
	if res, err = tool.Redrive(e.ctx, "crm-dlq.fifo", dlq.RedriveOptions{Limit: 1}); err != nil || res.Moved != 1 {
		t.Fatalf("limit: %+v %v", res, err)
	}
	if e.depth(dlqURL) != 1 {
		t.Errorf("DLQ depth after --limit 1: %d", e.depth(dlqURL))
	}
}

// TestRedriveDirectToDLQ: messages sent to the DLQ directly (no
// DeadLetterQueueSourceArn) go to the DLQ's only source.
func TestRedriveDirectToDLQ(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("loader_dlq", nil)
	src := e.source("loader", "loader_dlq", 1)
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(wrappedBody)})
	tool := e.tool(dlq.ModeAuto)
	if _, err := tool.Redrive(e.ctx, "loader_dlq", dlq.RedriveOptions{Mark: true}); err != nil {
		t.Fatal(err)
	}
	if got := e.receiveAll(src); len(got) != 1 || aws.ToString(got[0].Body) != wrappedBody {
		t.Fatalf("source got %v", got)
	}
	// With two sources and no --to, the message stays, and says why.
	e.source("loader-2", "loader_dlq", 1)
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("x")})
	tool = e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "loader_dlq", dlq.RedriveOptions{Mark: true})
	if err != nil || res.NoTarget != 1 || len(res.NotRedriven) != 1 || !res.Partial() || e.depth(dlqURL) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(e.out.String(), "2 queues name loader_dlq in their RedrivePolicy (loader, loader-2), so which one it came from is unknown: choose with --to") {
		t.Errorf("output %q", e.out.String())
	}
}

// TestExportImportRoundTrip: export is non-destructive on tidemq, and an
// import of the file recreates every message byte for byte, attributes
// (string, number, binary, with custom types) and FIFO groups included.
func TestExportImportRoundTrip(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		name := map[bool]string{false: "standard", true: "fifo"}[fifo]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			suffix, attrs := "", map[string]string(nil)
			if fifo {
				suffix, attrs = ".fifo", map[string]string{"FifoQueue": "true"}
			}
			from := e.createQueue("from"+suffix, attrs)
			to := e.createQueue("to"+suffix, attrs)
			bodies := []string{snsBody, wrappedBody, "plain text with \"quotes\", <tags> & tabs\t and emoji 🐳 and \u2028 separators", "  {\"not\": \"trimmed\"}  \n"}
			for i, b := range bodies {
				in := &awssqs.SendMessageInput{MessageBody: aws.String(b), MessageAttributes: map[string]types.MessageAttributeValue{
					"tenant":  str("acme ✓"),
					"count":   {DataType: aws.String("Number.int"), StringValue: aws.String("00" + string(rune('1'+i)))},
					"payload": {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 2, 0xff, byte(i)}},
				}}
				if fifo {
					in.MessageGroupId = aws.String("g" + string(rune('0'+i%2)))
					in.MessageDeduplicationId = aws.String("dedup-" + string(rune('0'+i)))
				}
				e.send(from, in)
			}
			var file bytes.Buffer
			tool := e.tool(dlq.ModeAuto)
			n, err := tool.Export(e.ctx, "from"+suffix, &file, dlq.ExportOptions{})
			if err != nil || n != len(bodies) {
				t.Fatalf("export: %d %v", n, err)
			}
			if e.depth(from) != len(bodies) || e.attrs(from)["ApproximateNumberOfMessagesNotVisible"] != "0" {
				t.Fatalf("export consumed messages")
			}
			lines := strings.Split(strings.TrimSpace(file.String()), "\n")
			if len(lines) != len(bodies) {
				t.Fatalf("%d lines", len(lines))
			}
			var rec dlq.Record
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || rec.Body != snsBody || len(rec.History) == 0 {
				t.Fatalf("line 1: %+v %v", rec, err)
			}
			if fifo && (rec.MessageGroupID != "g0" || rec.MessageDeduplicationID != "dedup-0") {
				t.Errorf("FIFO ids not exported: %+v", rec)
			}

			tool = e.tool(dlq.ModeAuto)
			if n, err := tool.Import(e.ctx, "to"+suffix, bytes.NewReader(file.Bytes()), dlq.ImportOptions{}); err != nil || n != len(bodies) {
				t.Fatalf("import: %d %v", n, err)
			}
			orig, copies := e.receiveAll(from), e.receiveAll(to)
			if len(copies) != len(orig) {
				t.Fatalf("%d copies of %d", len(copies), len(orig))
			}
			for i := range orig {
				o, c := orig[i], copies[i]
				if !bytes.Equal([]byte(aws.ToString(o.Body)), []byte(aws.ToString(c.Body))) {
					t.Errorf("body %d differs:\n%q\n%q", i, aws.ToString(o.Body), aws.ToString(c.Body))
				}
				if aws.ToString(o.MD5OfMessageAttributes) != aws.ToString(c.MD5OfMessageAttributes) {
					t.Errorf("attributes %d differ: %v vs %v", i, o.MessageAttributes, c.MessageAttributes)
				}
				if o.Attributes["MessageGroupId"] != c.Attributes["MessageGroupId"] {
					t.Errorf("group %d: %q vs %q", i, o.Attributes["MessageGroupId"], c.Attributes["MessageGroupId"])
				}
			}
			// A second export, of the copies, is the same file but for ids,
			// timestamps and history.
		})
	}
}

func TestPurgeConfirmation(t *testing.T) {
	e := newEnv(t)
	q := e.createQueue("trash-dlq", nil)
	e.send(q, &awssqs.SendMessageInput{MessageBody: aws.String("x")})
	tool := e.tool(dlq.ModeAuto)
	err := tool.Purge(e.ctx, "trash-dlq", dlq.PurgeOptions{In: strings.NewReader("trash-dlq\n")})
	if err == nil || !strings.Contains(err.Error(), "not a terminal; pass --yes") {
		t.Fatalf("purge without a terminal: %v", err)
	}
	if err := tool.Purge(e.ctx, "trash-dlq", dlq.PurgeOptions{Interactive: true, In: strings.NewReader("y\n")}); !errors.Is(err, dlq.ErrNotConfirmed) {
		t.Fatalf("purge answered y: %v", err)
	}
	if e.depth(q) != 1 {
		t.Fatal("purged without confirmation")
	}
	if !strings.Contains(e.out.String(), "Purge trash-dlq? Its 1 visible messages") {
		t.Errorf("prompt %q", e.out.String())
	}
	if err := tool.Purge(e.ctx, "trash-dlq", dlq.PurgeOptions{Interactive: true, In: strings.NewReader("trash-dlq\n")}); err != nil {
		t.Fatal(err)
	}
	if e.depth(q) != 0 {
		t.Fatal("not purged")
	}
	e.clk.Advance(61 * time.Second) // PurgeQueue's cooldown
	e.send(q, &awssqs.SendMessageInput{MessageBody: aws.String("y")})
	if err := tool.Purge(e.ctx, "trash-dlq", dlq.PurgeOptions{Yes: true}); err != nil || e.depth(q) != 0 {
		t.Fatalf("--yes: %v", err)
	}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("orders-dlq", nil)
	e.source("orders", "orders-dlq", 1)
	e.source("refunds", "orders-dlq", 3)
	e.createQueue("mail-dlq", nil)
	e.source("mail", "mail-dlq", 5)
	e.createQueue("unrelated", nil)
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("a")})
	e.clk.Advance(90 * time.Second)
	e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("b"), DelaySeconds: 60})

	tool := e.tool(dlq.ModeAuto)
	if err := tool.List(e.ctx, ""); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"DLQ         DEPTH  VISIBLE  IN FLIGHT  DELAYED  OLDEST  RETENTION  SOURCES (maxReceiveCount)\n" +
		"mail-dlq    0      0        0          0        empty   4d00h      mail (5)\n" +
		"orders-dlq  2      1        0          1        1m30s   4d00h      orders (1), refunds (3)\n"
	if e.out.String() != want {
		t.Errorf("tidemq list:\n%s\nwant:\n%s", e.out.String(), want)
	}
	tool = e.tool(dlq.ModeAWS)
	if err := tool.List(e.ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if got := e.out.String(); !strings.Contains(got, "orders-dlq  2      1        0          1        -       4d00h      orders (1), refunds (3)") ||
		!strings.Contains(got, "ApproximateAgeOfOldestMessage") || strings.Contains(got, "mail-dlq") {
		t.Errorf("AWS list:\n%s", got)
	}
}

// Importing into a queue that does not exist says so plainly.
func TestImportIntoMissingQueue(t *testing.T) {
	e := newEnv(t)
	_, err := e.tool(dlq.ModeAuto).Import(e.ctx, "nowhere", strings.NewReader(`{"Body":"x"}`+"\n"), dlq.ImportOptions{})
	if !errors.Is(err, dlq.ErrNoSuchQueue) || !strings.Contains(err.Error(), "queue nowhere does not exist") {
		t.Fatalf("import into a missing queue: %v", err)
	}
}
