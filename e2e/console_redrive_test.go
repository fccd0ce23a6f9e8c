package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chromedp/chromedp"
)

// seed002Fixture reads seed 002's message before and after its own Python
// redrive (dlq/testdata, written by json.dumps).
func seed002Fixture(t *testing.T) (in, out string) {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, "dlq", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return read("seed002-in.json"), read("seed002-out.json")
}

// receiveMarked receives n messages of a queue with their message
// attributes (deleting none).
func receiveMarked(t *testing.T, c *sqs.Client, url string, n int) []map[string]string {
	t.Helper()
	var out []map[string]string
	deadline := time.Now().Add(15 * time.Second)
	for len(out) < n && time.Now().Before(deadline) {
		res, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, VisibilityTimeout: 60, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Messages {
			got := map[string]string{"body": aws.ToString(m.Body)}
			for k, v := range m.MessageAttributes {
				got[k] = aws.ToString(v.StringValue)
			}
			out = append(out, got)
		}
	}
	return out
}

// Seed 002's redrive from the console: its DLQ holds a dead-lettered
// message and one its consumer sent there directly (send_to_dlq); the
// dialog says so, the operator ticks "mark" and types the team's body
// markers, and both arrive in the source queue with the body byte for
// byte what the team's Python writes and the marker attributes set.
func TestConsoleRedriveWithBodyMarkers(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	c := sqsClient(s, "AKIDCONSOLE", "whatever")
	in, want := seed002Fixture(t)
	src, dlq := queueWithDLQ(t, c, "stack_doc_loader_1001_7", 1)
	deadLetter(t, c, src, dlq, in)
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String(in)}); err != nil {
		t.Fatal(err)
	}

	b.do("open the DLQ", chromedp.Navigate(s.url+"/console/#/queue/stack_doc_loader_1001_7-dlq"),
		chromedp.WaitVisible(chromedp.CSS(`#queue-page #redrive`)))
	b.waitFor("two messages", `document.querySelectorAll('article.message').length === 2`)
	b.do("open the redrive dialog", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open] #redrive-bodyset`)))
	if warn := b.text("#redrive-direct"); !strings.Contains(warn, "1 of the messages shown were sent to stack_doc_loader_1001_7-dlq directly") {
		t.Errorf("the dialog's note on direct messages reads %q", warn)
	}
	b.do("mark, with seed 002's body markers",
		chromedp.Click(chromedp.ID("redrive-mark")),
		chromedp.SetValue(chromedp.ID("redrive-bodyset"),
			"inner.dlq_redriven=true\ninner.eventDetail.retry_count=0\ninner.eventDetail.dlq_redrive_count+=1\ninner.eventDetail.dlq_final_pass=false"),
		chromedp.Click(chromedp.ID("confirm-ok")))
	b.waitFor("the redrive to start", `document.getElementById('action-result').textContent.includes('message by message')`)
	b.waitFor("the redrive to complete", `document.querySelector('#tasks tr.job-completed') !== null`)

	got := receiveMarked(t, c, src, 2)
	if len(got) != 2 {
		t.Fatalf("the source queue gave %d messages, want 2", len(got))
	}
	for _, m := range got {
		if m["body"] != want {
			t.Errorf("redriven body\n got %s\nwant %s", m["body"], want)
		}
		if m["tidemq.redriven"] != "true" || m["tidemq.redrive-count"] != "1" {
			t.Errorf("marker attributes %v", m)
		}
	}
	if n := depth(t, c, dlq); n != 0 {
		t.Errorf("the DLQ still holds %d messages", n)
	}
	b.checkClean()
}

// A DLQ whose source queue was deleted (no RedrivePolicy names it): the
// dialog says so and offers no "back to the sources"; the operator picks a
// queue and the messages, dead-lettered ones and one sent directly, go
// there.
func TestConsoleRedriveOrphanedDLQ(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	c := sqsClient(s, "AKIDCONSOLE", "whatever")
	src, dlq := queueWithDLQ(t, c, "billing", 1)
	deadLetter(t, c, src, dlq, `{"invoice":1}`)
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlq), MessageBody: aws.String(`{"invoice":2}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(src)}); err != nil {
		t.Fatal(err)
	}
	v2, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("billing-v2")})
	if err != nil {
		t.Fatal(err)
	}

	b.do("open the DLQ", chromedp.Navigate(s.url+"/console/#/queue/billing-dlq"),
		chromedp.WaitVisible(chromedp.CSS(`#queue-page #redrive`)))
	b.waitFor("two messages", `document.querySelectorAll('article.message').length === 2`)
	b.do("open the redrive dialog", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open] #redrive-to`)))
	if warn := b.text("#redrive-orphan"); !strings.Contains(warn, "No RedrivePolicy names billing-dlq") {
		t.Errorf("the dialog's note on the orphaned DLQ reads %q", warn)
	}
	// Confirming without a choice is refused, and says why.
	b.do("confirm without a destination", chromedp.Click(chromedp.ID("confirm-ok")))
	b.waitFor("the refusal", `document.getElementById('action-result').textContent.includes('choose a destination')`)
	b.do("choose billing-v2", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open] #redrive-to`)),
		chromedp.SetValue(chromedp.ID("redrive-to"), "billing-v2"), chromedp.Click(chromedp.ID("confirm-ok")))
	b.waitFor("the redrive to complete", `document.querySelector('#tasks tr.job-completed') !== null`)
	if to := b.text(`#tasks tr.job-completed td:nth-child(3)`); to != "billing-v2" {
		t.Errorf("the job's destination reads %q", to)
	}

	got := receiveAll(t, c, aws.ToString(v2.QueueUrl), 2)
	if want := []string{`{"invoice":1}`, `{"invoice":2}`}; !slices.Equal(got, want) {
		t.Errorf("billing-v2 holds %q, want %q", got, want)
	}
	b.checkClean()
}
