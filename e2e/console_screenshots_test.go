package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/chromedp/chromedp"
)

// TestConsoleScreenshots renders the web console over a small but real
// topology and writes docs/console/*.png, the README's pictures:
//
//	go test ./e2e -run 'TestConsole(Screenshots|SignInWithAuth)' -update-screenshots
//
// Without -update-screenshots it is skipped. The sign-in page is taken by
// TestConsoleSignInWithAuth.
func TestConsoleScreenshots(t *testing.T) {
	if !*updateScreenshots {
		t.Skip("run with -update-screenshots to rewrite docs/console/*.png")
	}
	b := newBrowser(t)
	s := startServer(t, "--alarm-interval", "1s")
	c := sqsClient(s, "AKIDDOCS", "docs")
	ctx := context.Background()

	// A worker that rejects every order (so orders dead-letter with a
	// story), and a mailer that fails one call in four.
	var calls atomic.Int64
	fn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/orders") {
			http.Error(w, "payment service unavailable", http.StatusBadGateway)
			return
		}
		if calls.Add(1)%4 == 0 {
			http.Error(w, "smtp timeout", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer fn.Close()

	orders, ordersDLQ := queueWithDLQ(t, c, "orders", 2)
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(orders),
		Attributes: map[string]string{"VisibilityTimeout": "1"}}); err != nil {
		t.Fatal(err)
	}
	emails := s.createQueue(t, "emails", nil)
	ingest := s.createQueue(t, "ingest-events", nil)
	queueWithDLQ(t, c, "payments", 5)
	_ = emails
	ordersARN := queueARN(t, c, orders)

	sn := sns.New(sns.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.url),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDDOCS", "docs", "")})
	topic, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("order-events")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(ordersARN)}); err != nil {
		t.Fatal(err)
	}
	audit := s.createQueue(t, "audit", nil)
	if _, err := sn.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN(t, c, audit)),
		Attributes: map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"type":["refund"]}`}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("user-signups")}); err != nil {
		t.Fatal(err)
	}

	for _, trig := range []string{
		fmt.Sprintf(`{"Name":"orders-worker","Queue":"orders","Target":{"URL":%q},"BatchSize":5,"Timeout":0.5}`, fn.URL+"/orders"),
		fmt.Sprintf(`{"Name":"mailer","Queue":"emails","Target":{"URL":%q},"BatchSize":1}`, fn.URL+"/mail"),
	} {
		if status, body := rawRequest(t, http.MethodPost, s.url+"/tidemq/triggers", "application/json", trig); status != http.StatusCreated {
			t.Fatalf("create trigger: %d %s", status, body)
		}
	}
	for i, kind := range []string{"created", "refund", "created", "paid"} {
		msg := fmt.Sprintf(`{"orderId":"ord-%04d","customer":"c-%d","type":%q,"total":{"amount":%d.50,"currency":"EUR"},"items":[{"sku":"TIDE-%d","qty":%d}]}`,
			1041+i, 77+i, kind, 20+i*7, 100+i, 1+i%3)
		if _, err := sn.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(msg), Subject: aws.String("order " + kind),
			MessageAttributes: nil}); err != nil {
			t.Fatal(err)
		}
	}
	waitDepth(t, c, ordersDLQ, 4)

	// Traffic while the page polls, for the sparklines.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(250 * time.Millisecond):
			}
			c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(ingest), MessageBody: aws.String(fmt.Sprintf(`{"event":%d}`, i))})
			if i%3 == 0 {
				c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(emails), MessageBody: aws.String(fmt.Sprintf(`{"to":"user%d@example.com"}`, i))})
			}
		}
	}()
	b.do("open the console", chromedp.Navigate(s.url+"/console/"), chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="orders-dlq"]`)))
	b.waitFor("the DLQ alarm", `document.querySelector('tr[data-queue="orders-dlq"] .badge.firing') !== null`)
	time.Sleep(16 * time.Second) // eight polls of history
	close(stop)
	<-done
	b.screenshot("queues")

	b.do("open the DLQ", chromedp.Navigate(s.url+"/console/#/queue/orders-dlq"),
		chromedp.WaitVisible(chromedp.CSS(`article.message .explain`)))
	time.Sleep(2500 * time.Millisecond) // a few chart samples
	b.screenshot("dlq")
	b.do("ask to redrive", chromedp.Click(chromedp.ID("redrive")), chromedp.WaitVisible(chromedp.CSS(`#confirm[open]`)))
	shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	writeDoc(t, "redrive-confirm", shot)
	b.do("cancel", chromedp.Click(chromedp.ID("confirm-cancel")))

	b.do("topics", chromedp.Navigate(s.url+"/console/#/topics"), chromedp.WaitVisible(chromedp.CSS(`[data-topic="order-events"]`)))
	b.screenshot("topics")
	b.do("triggers", chromedp.Navigate(s.url+"/console/#/triggers"), chromedp.WaitVisible(chromedp.CSS(`[data-trigger="mailer"]`)))
	b.screenshot("triggers")
	b.checkClean()
}

func queueARN(t *testing.T, c *sqs.Client, url string) string {
	t.Helper()
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Attributes["QueueArn"]
}

// waitDepth waits until a queue has at least n visible messages.
func waitDepth(t *testing.T, c *sqs.Client, url string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for depth(t, c, url) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d messages, want %d", url, depth(t, c, url), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
