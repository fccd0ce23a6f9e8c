package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"

	"github.com/tidemq/tidemq/internal/pgtest"
)

// queuesIn lists the queues a PostgreSQL database holds.
func queuesIn(t *testing.T, dsn string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT name FROM queues ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// One node, two PostgreSQL clusters (--store and --queue-store): queues
// spread over both, each on one; an SDK client sees one set of queues
// (ListQueues over both), sends, receives and deletes on either, a long
// poll on the second cluster is woken by a send, an SNS topic (in the
// home database) delivers to queues on both, and a dead-letter queue on
// the other cluster is refused with InvalidParameterValue, and a trigger
// runs on a queue of the second cluster (the leader's fenced receives and
// deletes there checked against the home database). A second node
// started with the same flags serves the same queues from the same
// placements.
func TestServeQueuesOverTwoPostgreSQLClusters(t *testing.T) {
	t.Parallel()
	home, _ := pgtest.Isolated(t)
	other := pgtest.Separate(t) // a second cluster
	dir := t.TempDir()
	flags := []string{"--store", home, "--queue-store", other, "--no-alarms"}
	nodeA := startServer(t, append(flags, "--data-dir", filepath.Join(dir, "a"))...)
	a := sdkClient(nodeA)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var names []string
	urls := map[string]string{}
	for i := 0; i < 6; i++ {
		n := fmt.Sprintf("spread-%d", i)
		out, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(n)})
		if err != nil {
			t.Fatalf("CreateQueue %s: %v", n, err)
		}
		names, urls[n] = append(names, n), aws.ToString(out.QueueUrl)
	}
	onHome, onOther := queuesIn(t, home), queuesIn(t, other)
	t.Logf("home cluster: %v; second cluster: %v", onHome, onOther)
	if len(onHome) != 3 || len(onOther) != 3 {
		t.Fatalf("queues: %v on the home cluster, %v on the second; want 3 and 3", onHome, onOther)
	}
	listed, err := a.ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil || len(listed.QueueUrls) != 6 {
		t.Fatalf("ListQueues: %v %v", listed, err)
	}
	var pages []string
	var token *string
	for {
		p, err := a.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(4), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p.QueueUrls...)
		if token = p.NextToken; token == nil {
			break
		}
	}
	if len(pages) != 6 || !sort.StringsAreSorted(pages) {
		t.Fatalf("ListQueues in pages of 4: %v", pages)
	}

	for _, n := range names {
		if _, err := a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls[n]), MessageBody: aws.String("to " + n)}); err != nil {
			t.Fatalf("SendMessage %s: %v", n, err)
		}
		r, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[n]), WaitTimeSeconds: 1})
		if err != nil || len(r.Messages) != 1 || aws.ToString(r.Messages[0].Body) != "to "+n {
			t.Fatalf("ReceiveMessage %s: %v %v", n, r, err)
		}
		if _, err := a.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(urls[n]), ReceiptHandle: r.Messages[0].ReceiptHandle}); err != nil {
			t.Fatalf("DeleteMessage %s: %v", n, err)
		}
	}

	// A second node, same flags: same queues, and a long poll on it for a
	// queue of the second cluster is woken by a send on the first node.
	nodeB := startServer(t, append(flags, "--data-dir", filepath.Join(dir, "b"))...)
	b := sdkClient(nodeB)
	far := onOther[0]
	done := make(chan *sqs.ReceiveMessageOutput, 1)
	go func() {
		r, _ := b.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[far]), WaitTimeSeconds: 20})
		done <- r
	}()
	time.Sleep(time.Second)
	sentAt := time.Now()
	if _, err := a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(urls[far]), MessageBody: aws.String("wake")}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r == nil || len(r.Messages) != 1 {
			t.Fatalf("the long poll on B: %v", r)
		}
		t.Logf("a long poll on node B for %s (second cluster) woken %v after the send on A", far, time.Since(sentAt))
	case <-time.After(15 * time.Second):
		t.Fatal("the long poll on B was not woken")
	}

	// SNS in the home database, delivering to a queue on each cluster
	// (subscribed and published on one node: another node's copy of the
	// subscriptions follows within milliseconds, README).
	topic := xmlValues(nodeA.snsCall(t, "CreateTopic", "Name", "fanout"), "TopicArn")[0]
	near := onHome[0]
	for _, q := range []string{near, far} {
		nodeA.snsCall(t, "Subscribe", "TopicArn", topic, "Protocol", "sqs",
			"Endpoint", "arn:aws:sqs:us-east-1:000000000000:"+q, "Attributes.entry.1.key", "RawMessageDelivery", "Attributes.entry.1.value", "true")
	}
	nodeA.snsCall(t, "Publish", "TopicArn", topic, "Message", "fanned")
	for _, q := range []string{near, far} {
		r, err := b.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(urls[q]), WaitTimeSeconds: 2, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, m := range r.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
		}
		if !strings.Contains(strings.Join(bodies, ","), "fanned") {
			t.Fatalf("queue %s got %v from the topic", q, bodies)
		}
	}

	// A dead-letter queue on the other cluster: refused, saying why.
	_, err = b.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(urls[near]), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:` + far + `","maxReceiveCount":3}`}})
	if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "another PostgreSQL cluster") {
		t.Fatalf("a dead-letter queue on the other cluster: %v", err)
	}
	// Created after its dead-letter queue, a source goes with it.
	if _, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("src-of-far"), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:` + far + `","maxReceiveCount":3}`}}); err != nil {
		t.Fatalf("CreateQueue with a RedrivePolicy: %v", err)
	}
	if got := queuesIn(t, other); !strings.Contains(strings.Join(got, ","), "src-of-far") {
		t.Fatalf("src-of-far is not with its dead-letter queue on the second cluster: %v", got)
	}

	// A trigger on a queue of the second cluster: the leader's receives
	// and deletes there carry its fence, checked against the home
	// database; each message is delivered, then deleted.
	fn, calls := fnTarget(t)
	jobs, err := a.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("src-of-far")})
	if err != nil {
		t.Fatal(err)
	}
	nodeA.adminJSON(t, "POST", "/tidemq/triggers", `{"Name":"far-fn","Queue":"src-of-far","Timeout":2,"BatchSize":1,
		"Target":{"URL":"`+fn.URL+`/far"}}`, 201)
	for _, body := range []string{"job one", "job two"} {
		if _, err := b.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: jobs.QueueUrl, MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
		nextInvocation(t, calls, body)
	}
	eventuallyE2E(t, "the trigger's deletes on the second cluster", func() bool {
		d := nodeB.depth(t, aws.ToString(jobs.QueueUrl))
		return d == [3]string{"0", "0", "0"}
	})
}
