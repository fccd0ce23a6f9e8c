package sqs_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/tidemq/tidemq"
	"github.com/tidemq/tidemq/api/sqs"
	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/storage/mem"
)

const partner = "111122223333"

// keyAccounts is Config.CallerAccount for the test: AKIDPARTNER is of the
// partner account, every other key of the server's.
func keyAccounts(key string) string {
	if key == "AKIDPARTNER" {
		return partner
	}
	return ""
}

// everyoneButCrossAccount allows every call within the caller's account
// and refuses every cross-account one, as a server without queue
// policies does.
type everyoneButCrossAccount struct{}

func (everyoneButCrossAccount) Authorize(_ *http.Request, key, action, resource string) error {
	a, _ := tidemq.ParseARN(resource)
	caller := keyAccounts(key)
	if caller == "" {
		caller = account
	}
	if a.Account != caller {
		return tidemq.Errorf(tidemq.ErrAccessDenied, "User: %s is not authorized to perform: %s on resource: %s", key, action, resource)
	}
	return nil
}

func (e everyoneButCrossAccount) Allowed(r *http.Request, key, action, resource string) bool {
	return e.Authorize(r, key, action, resource) == nil
}

func clientAs(endpoint, key string) *awssqs.Client {
	return awssqs.New(awssqs.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(key, "secret", ""),
		Retryer:      retry.AddWithMaxAttempts(retry.NewStandard(), 1),
	})
}

// Two accounts on one server, through the official SDK: the same queue
// name in each is two queues; URLs and ARNs carry the account; ListQueues
// lists the caller's account; GetQueueUrl with QueueOwnerAWSAccountId
// names the other account's queue; a queue URL of another account is a
// cross-account call, decided by the Authorizer with that account's ARN.
func TestAccountsURLsAndARNs(t *testing.T) {
	clk := clocktest.New(time.Unix(1_700_000_000, 0))
	eng, err := engine.Open(engine.Options{Store: mem.New(), Clock: clk, Region: "us-east-1", AccountID: account, SweepInterval: -1,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sqs.NewHandler(sqs.Config{Broker: eng, CallerAccount: keyAccounts, Authorizer: everyoneButCrossAccount{},
		Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(func() {
		srv.Close()
		_ = eng.Close()
	})
	ctx := context.Background()
	home, other := clientAs(srv.URL, "AKIDHOME"), clientAs(srv.URL, "AKIDPARTNER")

	create := func(c *awssqs.Client, name string) string {
		t.Helper()
		out, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
		return aws.ToString(out.QueueUrl)
	}
	homeURL, partnerURL := create(home, "orders"), create(other, "orders")
	if homeURL != srv.URL+"/"+account+"/orders" || partnerURL != srv.URL+"/"+partner+"/orders" {
		t.Fatalf("queue URLs %q and %q", homeURL, partnerURL)
	}
	arn := func(c *awssqs.Client, url string) string {
		t.Helper()
		out, err := c.GetQueueAttributes(ctx, &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{"QueueArn"}})
		if err != nil {
			t.Fatalf("GetQueueAttributes %s: %v", url, err)
		}
		return out.Attributes["QueueArn"]
	}
	if got := arn(other, partnerURL); got != "arn:aws:sqs:us-east-1:"+partner+":orders" {
		t.Fatalf("the partner's QueueArn %q", got)
	}
	if got := arn(home, homeURL); got != "arn:aws:sqs:us-east-1:"+account+":orders" {
		t.Fatalf("the home QueueArn %q", got)
	}
	// No collision: a message sent to one is not in the other.
	if _, err := other.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(partnerURL), MessageBody: aws.String("partner")}); err != nil {
		t.Fatal(err)
	}
	// A bare queue name is the caller's own queue.
	if _, err := other.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String("orders"), MessageBody: aws.String("partner 2")}); err != nil {
		t.Fatal(err)
	}
	got, err := home.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(homeURL), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 0 {
		t.Fatalf("the home queue got the partner's messages: %v %v", got, err)
	}
	got, err = other.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(partnerURL), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 2 {
		t.Fatalf("the partner's queue: %v %v", got, err)
	}
	// ListQueues: the caller's account only.
	create(other, "only-partner")
	list := func(c *awssqs.Client) []string {
		t.Helper()
		out, err := c.ListQueues(ctx, &awssqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		return out.QueueUrls
	}
	if l := list(home); len(l) != 1 || l[0] != homeURL {
		t.Fatalf("the home account lists %v", l)
	}
	if l := list(other); len(l) != 2 || l[1] != partnerURL || !strings.HasSuffix(l[0], "/"+partner+"/only-partner") {
		t.Fatalf("the partner lists %v", l)
	}
	// GetQueueUrl: the caller's account, or QueueOwnerAWSAccountId's.
	url, err := other.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	if err != nil || aws.ToString(url.QueueUrl) != partnerURL {
		t.Fatalf("the partner's GetQueueUrl: %v %v", url, err)
	}
	url, err = other.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("only-partner"), QueueOwnerAWSAccountId: aws.String(partner)})
	if err != nil || aws.ToString(url.QueueUrl) != srv.URL+"/"+partner+"/only-partner" {
		t.Fatalf("GetQueueUrl naming the caller's own account: %v %v", url, err)
	}
	_, err = home.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("only-partner")})
	wantAPIError[*types.QueueDoesNotExist](t, err, "AWS.SimpleQueueService.NonExistentQueue", nil)
	_, err = home.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String(partner)})
	wantAPIError[error](t, err, "AccessDenied", nil) // cross-account: the Authorizer refuses
	_, err = home.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders"), QueueOwnerAWSAccountId: aws.String("12")})
	wantAPIError[*types.QueueDoesNotExist](t, err, "AWS.SimpleQueueService.NonExistentQueue", nil)
	// Without a QueueName, the request is refused as such, whatever the owner.
	_, err = home.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String(""), QueueOwnerAWSAccountId: aws.String(partner)})
	wantAPIError[error](t, err, "MissingParameter", nil)
	// A queue URL naming the other account is a cross-account call.
	_, err = home.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(partnerURL), MessageBody: aws.String("x")})
	wantAPIError[error](t, err, "AccessDenied", nil)
	_, err = home.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(srv.URL + "/12345/orders"), MessageBody: aws.String("x")})
	wantAPIError[*types.QueueDoesNotExist](t, err, "AWS.SimpleQueueService.NonExistentQueue", nil)
	// CreateQueue refuses a colon: it would name another account.
	_, err = home.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(partner + ":sneaky")})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)
	// A RedrivePolicy naming the other account's queue: AWS's refusal.
	_, err = home.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("src"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:` + partner + `:orders","maxReceiveCount":3}`}})
	wantAPIError[error](t, err, "InvalidParameterValue", nil)
	if err == nil || !strings.Contains(err.Error(), "Dead-letter target owner should be same as the source.") {
		t.Fatalf("the cross-account RedrivePolicy: %v", err)
	}
}
