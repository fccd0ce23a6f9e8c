package sns_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

// A queue that is gone cannot receive: the message goes to the
// subscription's dead-letter queue as the queue would have received it
// (the envelope, or the raw body with its attributes), and without a
// RedrivePolicy it is counted as undeliverable.
func TestSQSDeadLetterQueue(t *testing.T) { onBothStores(t, checkSQSDeadLetterQueue) }

func checkSQSDeadLetterQueue(t *testing.T, e *env) {
	topic := e.topic("orders", nil)
	goneURL, goneARN := e.queue("gone", nil)
	rawGoneURL, rawGoneARN := e.queue("raw-gone", nil)
	plainGoneURL, plainGoneARN := e.queue("plain-gone", nil)
	dlqURL, dlqARN := e.queue("orders-dlq", nil)
	policy := `{"deadLetterTargetArn":"` + dlqARN + `"}`
	sub := e.subscribe(topic, goneARN, map[string]string{"RedrivePolicy": policy})
	e.subscribe(topic, rawGoneARN, map[string]string{"RedrivePolicy": policy, "RawMessageDelivery": "true"})
	e.subscribe(topic, plainGoneARN, nil)
	for _, u := range []string{goneURL, rawGoneURL, plainGoneURL} {
		if _, err := e.sqs.DeleteQueue(e.ctx, &awssqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
			t.Fatal(err)
		}
	}
	pub, err := e.sns.Publish(e.ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(`{"id":7}`),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("order")}}})
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.receive(dlqURL, 10)
	if len(msgs) != 2 {
		t.Fatalf("dead-letter queue got %d messages", len(msgs))
	}
	var envelope, raw int
	for _, m := range msgs {
		body := aws.ToString(m.Body)
		if body == `{"id":7}` {
			raw++
			if aws.ToString(m.MessageAttributes["kind"].StringValue) != "order" {
				t.Fatalf("raw dead letter lost its attributes: %+v", m.MessageAttributes)
			}
			continue
		}
		var n map[string]any
		if err := json.Unmarshal([]byte(body), &n); err != nil || n["MessageId"] != aws.ToString(pub.MessageId) || n["Message"] != `{"id":7}` ||
			!strings.HasSuffix(n["UnsubscribeURL"].(string), "SubscriptionArn="+sub) {
			t.Fatalf("dead letter = %s (%v)", body, err)
		}
		envelope++
	}
	if envelope != 1 || raw != 1 {
		t.Fatalf("dead letters: %d envelopes, %d raw", envelope, raw)
	}
	if st := e.svc.Stats(); st.DeadLettered != 2 || st.Undeliverable != 1 || st.Delivered != 0 {
		t.Fatalf("stats = %+v", st)
	}
}

func TestRedrivePolicyValidation(t *testing.T) { onBothStores(t, checkRedrivePolicyValidation) }

func checkRedrivePolicyValidation(t *testing.T, e *env) {
	topic := e.topic("t", nil)
	fifo := e.topic("t.fifo", map[string]string{"FifoTopic": "true"})
	_, qARN := e.queue("q", nil)
	_, fqARN := e.queue("q.fifo", map[string]string{"FifoQueue": "true"})
	dlq := "arn:aws:sqs:us-east-1:" + account + ":dlq"
	cases := []struct {
		topic, endpoint, policy, message string
	}{
		{topic, qARN, `{"deadLetterTargetArn":`, "Invalid parameter: RedrivePolicy: failed to parse JSON."},
		{topic, qARN, `{"deadLetterTargetArn":"nope"}`, "Invalid parameter: RedrivePolicy: deadLetterTargetArn is an invalid arn"},
		{topic, qARN, `{"deadLetterTargetArn":"` + dlq + `","maxReceiveCount":3}`, "Invalid parameter: RedrivePolicy: invalid JSON. Attribute maxReceiveCount is unknown."},
		{topic, qARN, `{"deadLetterTargetArn":"arn:aws:sqs:eu-west-1:` + account + `:dlq"}`, "Invalid parameter: RedrivePolicy: the dead-letter queue must be in the same region and account as the subscription"},
		{fifo, fqARN, `{"deadLetterTargetArn":"` + dlq + `"}`, "Invalid parameter: RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."},
		{topic, qARN, `{"deadLetterTargetArn":"` + dlq + `.fifo"}`, "Invalid parameter: RedrivePolicy: must use a standard queue as DLQ for a subscription to a standard topic."},
	}
	for _, c := range cases {
		_, err := e.sns.Subscribe(e.ctx, &awssns.SubscribeInput{TopicArn: aws.String(c.topic), Protocol: aws.String("sqs"),
			Endpoint: aws.String(c.endpoint), Attributes: map[string]string{"RedrivePolicy": c.policy}})
		wantCode(t, err, "InvalidParameter")
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorMessage() != c.message {
			t.Errorf("policy %s: message %q, want %q", c.policy, apiErr.ErrorMessage(), c.message)
		}
	}
	// SetSubscriptionAttributes validates too, and accepts a good policy.
	sub := e.subscribe(topic, qARN, nil)
	_, err := e.sns.SetSubscriptionAttributes(e.ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String(`[]`)})
	wantCode(t, err, "InvalidParameter")
	if _, err := e.sns.SetSubscriptionAttributes(e.ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("RedrivePolicy"), AttributeValue: aws.String(`{"deadLetterTargetArn":"` + dlq + `"}`)}); err != nil {
		t.Fatal(err)
	}
	fsub := e.subscribe(fifo, fqARN, map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + dlq + `.fifo"}`})
	sa, err := e.sns.GetSubscriptionAttributes(e.ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(fsub)})
	if err != nil || !strings.Contains(sa.Attributes["RedrivePolicy"], "dlq.fifo") {
		t.Fatalf("GetSubscriptionAttributes = %v %v", sa, err)
	}
}
