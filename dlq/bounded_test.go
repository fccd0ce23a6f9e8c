package dlq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq/dlq"
)

// A consumer that fails every message at once, the moment the redrive
// sends it (issue 22, item 1): the redrive's client goes through
// bounceTransport, which runs the consumer synchronously after each send
// to the source queue (and after each look at a move task's progress), so the test is deterministic and needs no sleep.

type bounceTransport struct {
	next    http.RoundTripper
	source  string // queue URL whose sends trigger the consumer
	consume func()
	sends   atomic.Int64
}

func (b *bounceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := b.next.RoundTrip(req)
	target := req.Header.Get("X-Amz-Target")
	if err == nil && resp.StatusCode == 200 && (target == "AmazonSQS.SendMessage" && bytes.Contains(body, []byte(`"`+b.source+`"`)) ||
		target == "AmazonSQS.ListMessageMoveTasks") {
		// Let the response be read first, as the SDK would, then fail it.
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(data))
		if target == "AmazonSQS.SendMessage" {
			b.sends.Add(1)
		}
		b.consume()
	}
	return resp, err
}

// wrapped is a body in a hand-rolled {"Message": "<json>"} envelope.
func wrapped(inner string) string {
	b, _ := json.Marshal(map[string]string{"Message": inner})
	return string(b)
}

// bouncingTool is a dlq.Client whose sends to source are failed at once by
// consume.
func (e *env) bouncingTool(source string, consume func()) (*dlq.Client, *bounceTransport) {
	bt := &bounceTransport{next: http.DefaultTransport, source: source, consume: consume}
	tool := e.tool(dlq.ModeAuto)
	tool.SQS = awssqs.New(e.client.Options(), func(o *awssqs.Options) { o.HTTPClient = &http.Client{Transport: bt} })
	return tool, bt
}

// TestRedrivePassIsBoundedAgainstAFailingConsumer: seed 002's consumer
// sends a permanently failing message straight back to the DLQ
// (send_to_dlq: a new message, the same body), and a plain consumer lets it
// be dead-lettered again by maxReceiveCount (the same message). Either way
// a redrive used to move it back and forth until it was killed; now each
// message is moved once, the pass ends, and the summary names the ones
// that came back.
func TestRedrivePassIsBoundedAgainstAFailingConsumer(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts dlq.RedriveOptions
		// direct: the consumer sends the body to the DLQ itself; else it
		// lets maxReceiveCount dead-letter it.
		direct bool
	}{
		{"send_to_dlq, marked", dlq.RedriveOptions{Mark: true}, true},
		{"send_to_dlq, move task", dlq.RedriveOptions{}, true},
		{"maxReceiveCount, marked", dlq.RedriveOptions{Mark: true}, false},
		{"maxReceiveCount, move task", dlq.RedriveOptions{}, false},
		{"send_to_dlq, body-set", dlq.RedriveOptions{BodyEdits: parseEdits(t, "inner.eventDetail.dlq_redrive_count+=1")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			dlqURL := e.createQueue("loader_dlq", nil)
			src := e.source("loader", "loader_dlq", 1)
			e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(wrapped(seedEvent(1001, 2, "d-1")))})
			e.send(src, &awssqs.SendMessageInput{MessageBody: aws.String(wrapped(seedEvent(1001, 2, "d-2")))})
			e.deadLetterAll(src)
			// send_to_dlq, as seed 002 writes it: the body as received.
			direct := e.sendID(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String(wrapped(seedEvent(1001, 2, "d-3")))})

			consume := func() {
				out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(src), MaxNumberOfMessages: 10})
				if err != nil {
					t.Errorf("consumer: %v", err)
					return
				}
				for _, m := range out.Messages {
					if tc.direct {
						e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: m.Body})
						if _, err := e.client.DeleteMessage(e.ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(src), ReceiptHandle: m.ReceiptHandle}); err != nil {
							t.Errorf("consumer delete: %v", err)
						}
					}
				}
				if !tc.direct {
					e.deadLetterAll(src) // visibility 0, maxReceiveCount 1
				}
			}
			tool, bt := e.bouncingTool(src, consume)
			ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
			defer cancel()
			res, err := tool.Redrive(ctx, "loader_dlq", tc.opts)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("the redrive never ended: %d sends to the source", bt.sends.Load())
			}
			if err != nil {
				t.Fatalf("redrive: %v\n%s", err, e.out.String())
			}
			task := 0
			if res.Task != nil {
				task = int(res.Task.ApproximateNumberOfMessagesMoved)
			}
			if n := int(bt.sends.Load()) + task; n != 3 || res.Moved != 3 {
				t.Errorf("%d moved (%d by the task), want 3 (each message once)\n%s", res.Moved, task, e.out.String())
			}
			// A task's moves are the endpoint's: only the pass's own
			// moves can be recognised when they come back.
			if len(res.CameBack) != 3-task || !res.Partial() {
				t.Errorf("result %+v\n%s", res, e.out.String())
			}
			if d := e.depth(dlqURL); d != 3 {
				t.Errorf("DLQ depth %d after the pass, want the 3 that came back", d)
			}
			// The messages are visible again at once, for whoever looks.
			if a := e.attrs(dlqURL); a["ApproximateNumberOfMessages"] != "3" {
				t.Errorf("DLQ after the pass: %v", a)
			}
			out := e.out.String()
			if task == 0 && !strings.Contains(out, "came back to loader_dlq during this pass and were not moved again") {
				t.Errorf("summary does not say what came back:\n%s", out)
			}
			for _, cb := range res.CameBack {
				if !strings.Contains(out, "  "+cb.MessageID+": ") || cb.To != "loader" {
					t.Errorf("came back %+v not named:\n%s", cb, out)
				}
			}
			if tc.direct && tc.opts.Mark && !strings.Contains(out, direct) {
				t.Errorf("the directly sent message %s is not named:\n%s", direct, out)
			}
		})
	}
}

// TestRedrivePassStopsAtWhatTheDLQHeld: messages that keep arriving during
// a pass (with other bodies: not recognisable as came back) wait for the
// next pass; the pass handles only as many as the DLQ held when it started.
func TestRedrivePassStopsAtWhatTheDLQHeld(t *testing.T) {
	e := newEnv(t)
	dlqURL := e.createQueue("feed-dlq", nil)
	src := e.source("feed", "feed-dlq", 1)
	for range 4 {
		e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("old")})
	}
	n := 0
	// Each send to the source brings a brand-new failure into the DLQ.
	tool, bt := e.bouncingTool(src, func() {
		n++
		e.send(dlqURL, &awssqs.SendMessageInput{MessageBody: aws.String("new " + strings.Repeat("x", n))})
	})
	ctx, cancel := context.WithTimeout(e.ctx, 20*time.Second)
	defer cancel()
	res, err := tool.Redrive(ctx, "feed-dlq", dlq.RedriveOptions{Mark: true})
	if err != nil {
		t.Fatalf("redrive: %v (%d sends)\n%s", err, bt.sends.Load(), e.out.String())
	}
	if res.Moved != 4 || bt.sends.Load() != 4 {
		t.Errorf("moved %d (%d sends), want the 4 the DLQ held", res.Moved, bt.sends.Load())
	}
	if got := bodies(e.receiveAll(dlqURL)); len(got) != 4 || !strings.HasPrefix(got[0], "new ") {
		t.Errorf("DLQ holds %q, want the 4 new ones", got)
	}
	if !strings.Contains(e.out.String(), "stopped after the 4 messages feed-dlq held when the redrive started") {
		t.Errorf("output:\n%s", e.out.String())
	}
}

// TestRedriveRefusesAQueueThatIsNotADLQ: `tidemq dlq redrive scratch`
// (meant: scratch-dlq) used to receive the live queue's messages, and with
// maxReceiveCount 1 dead-letter each at its next receive, saying "was its
// source queue deleted?". Now it is refused with the reason and the queue
// probably meant, unless forced; DLQs whose source is gone stay redrivable.
func TestRedriveRefusesAQueueThatIsNotADLQ(t *testing.T) {
	e := newEnv(t)
	e.createQueue("scratch-dlq", nil)
	scratch := e.source("scratch", "scratch-dlq", 1)
	e.send(scratch, &awssqs.SendMessageInput{MessageBody: aws.String("live work")})
	plain := e.createQueue("inbox", nil)
	e.send(plain, &awssqs.SendMessageInput{MessageBody: aws.String("mail")})
	for _, mode := range []dlq.Mode{dlq.ModeAuto, dlq.ModeAWS} {
		for _, opts := range []dlq.RedriveOptions{{}, {Mark: true}, {To: "inbox"}, {DryRun: true, AllowReceive: true}} {
			tool := e.tool(mode)
			res, err := tool.Redrive(e.ctx, "scratch", opts)
			var refusal *dlq.NotADLQError
			if !errors.As(err, &refusal) || res != nil {
				t.Fatalf("mode %v %+v: redrive of a source queue: %+v %v", mode, opts, res, err)
			}
			if refusal.OwnDLQ != "scratch-dlq" || !strings.Contains(err.Error(), "scratch is not a dead-letter queue: no RedrivePolicy names it") ||
				!strings.Contains(err.Error(), "did you mean 'tidemq dlq redrive scratch-dlq'?") || !strings.Contains(err.Error(), "--force") ||
				strings.Contains(err.Error(), "deleted") {
				t.Errorf("refusal: %v", err)
			}
		}
		if _, err := e.tool(mode).Redrive(e.ctx, "inbox", dlq.RedriveOptions{To: "scratch"}); !errors.As(err, new(*dlq.NotADLQError)) {
			t.Errorf("mode %v: redrive of a plain queue: %v", mode, err)
		}
	}
	a := e.attrs(scratch)
	if a["ApproximateNumberOfMessages"] != "1" || a["ApproximateNumberOfMessagesNotVisible"] != "0" {
		t.Fatalf("the refused redrive touched scratch: %v", a)
	}
	if out, err := e.client.ReceiveMessage(e.ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(scratch), MessageSystemAttributeNames: []types.MessageSystemAttributeName{"ApproximateReceiveCount"}}); err != nil ||
		len(out.Messages) != 1 || out.Messages[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("the consumer's receive: %+v %v", out, err)
	}

	// Forced, with a destination, it moves (and says it was forced).
	tool := e.tool(dlq.ModeAuto)
	res, err := tool.Redrive(e.ctx, "inbox", dlq.RedriveOptions{To: "scratch-dlq", Force: true})
	if err != nil || res.Moved != 1 {
		t.Fatalf("forced redrive: %+v %v\n%s", res, err, e.out.String())
	}
	if !strings.Contains(e.errs.String(), "inbox is not a dead-letter queue; redriving it because of --force") {
		t.Errorf("stderr: %q", e.errs.String())
	}

	// A DLQ whose source was deleted, named like nothing in particular but
	// holding a dead-lettered message (tidemq), and one that declares its
	// sources in a RedriveAllowPolicy, are DLQs.
	e.createQueue("parking", nil)
	jobs := e.source("jobs", "parking", 1)
	e.send(jobs, &awssqs.SendMessageInput{MessageBody: aws.String("job")})
	e.deadLetterAll(jobs)
	e.deleteQueue(jobs)
	e.createQueue("jobs-replay", nil)
	if res, err := e.tool(dlq.ModeAuto).Redrive(e.ctx, "parking", dlq.RedriveOptions{To: "jobs-replay"}); err != nil || res.Moved != 1 {
		t.Errorf("redrive of an orphaned DLQ: %+v %v", res, err)
	}
	e.createQueue("holding", map[string]string{"RedriveAllowPolicy": `{"redrivePermission":"byQueue","sourceQueueArns":["` + arn("jobs") + `"]}`})
	if _, err := e.tool(dlq.ModeAWS).Redrive(e.ctx, "holding", dlq.RedriveOptions{To: "jobs-replay"}); err != nil {
		t.Errorf("redrive of a queue that allows sources: %v", err)
	}
}
