package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chromedp/chromedp"
)

// TestConsoleShowsDelayAndExactBodyAndDropsADialogOnNavigation (issue 22,
// the console): a delayed message (seed 002's backoff) shows with its delay
// and when it becomes receivable; "body as sent" is the exact bytes, not
// the pretty-printed JSON; and a redrive confirmation left open when the
// URL changes closes, so that its button cannot act on the queue the page
// no longer shows.
func TestConsoleShowsDelayAndExactBodyAndDropsADialogOnNavigation(t *testing.T) {
	b := newBrowser(t)
	s := startServer(t)
	c := sqsClient(s, "AKIDCONSOLE", "whatever")
	src, dlq := queueWithDLQ(t, c, "loader", 1)
	raw := `{"b":1,   "a":[1,2],"z":"\u00e9"}`
	deadLetter(t, c, src, dlq, raw)
	if _, err := c.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(dlq),
		MessageBody: aws.String(`{"retry_count": 3}`), DelaySeconds: 600}); err != nil {
		t.Fatal(err)
	}

	b.do("open the DLQ", chromedp.Navigate(s.url+"/console/#/queue/loader-dlq"),
		chromedp.WaitVisible(chromedp.CSS(`#queue-page[data-queue="loader-dlq"] #redrive`)))
	b.waitFor("both messages, the delayed one included", `document.querySelectorAll('article.message').length === 2`)
	content := func(sel string) string {
		s, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`(document.querySelector(`+"`"+sel+"`"+`) || {}).textContent || ''`))
		return s
	}
	if facts := content(`article.message:nth-of-type(2) dl.facts`); !containsAll(facts, "delayed", "10m", "receivable at") {
		t.Errorf("the delayed message's facts read %q", facts)
	}
	if badge := content(`article.message:nth-of-type(2) .badge.delayed`); !containsAll(badge, "delayed until") {
		t.Errorf("the delayed message's badge reads %q", badge)
	}
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('article.message pre.body.raw').textContent`))
	if err != nil || got != raw {
		t.Errorf("body as sent shows %q, want the exact bytes %q (%v)", got, raw, err)
	}

	b.do("ask to redrive", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open]`)))
	b.do("go to another queue", chromedp.Evaluate[chromedp.Void](`location.hash = '#/queue/loader'`))
	b.waitFor("the dialog to close with the page", `!document.getElementById('confirm').open && document.querySelector('#queue-page[data-queue="loader"]') !== null`)
	if n := depth(t, c, dlq); n != 1 {
		t.Errorf("after navigating away from a redrive question the DLQ holds %d visible messages, want 1", n)
	}
	b.checkClean()
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
