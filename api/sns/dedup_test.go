package sns_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/tidemq/tidemq/clocktest"
	"github.com/tidemq/tidemq/sns"
)

// A FIFO topic deduplicates by itself: a standard queue subscribed to it
// (which deduplicates nothing) receives each deduplication id once per
// 5 minutes, and the duplicate publish answers the original MessageId and
// SequenceNumber.
func TestFIFOTopicDeduplication(t *testing.T) {
	onBothStoresWith(t, func(t *testing.T, open func(func(*sns.Options)) *env) {
		clk := clocktest.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		checkFIFOTopicDeduplication(t, clk, open(func(o *sns.Options) { o.Clock = clk }))
	})
}

func checkFIFOTopicDeduplication(t *testing.T, clk *clocktest.Clock, e *env) {
	topic := e.topic("dedup.fifo", map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"})
	qURL, qARN := e.queue("dedup-audit", nil)
	e.subscribe(topic, qARN, map[string]string{"RawMessageDelivery": "true"})
	pub := func(msg, group, dedup string) *awssns.PublishOutput {
		t.Helper()
		in := &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(msg), MessageGroupId: aws.String(group)}
		if dedup != "" {
			in.MessageDeduplicationId = aws.String(dedup)
		}
		out, err := e.sns.Publish(e.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	bodies := func() []string {
		var out []string
		for _, m := range e.receive(qURL, 10) {
			out = append(out, aws.ToString(m.Body))
		}
		return out
	}

	first := pub("a", "g", "d1")
	again := pub("a-retry", "g", "d1") // same id, other body: a duplicate
	if aws.ToString(again.MessageId) != aws.ToString(first.MessageId) || aws.ToString(again.SequenceNumber) != aws.ToString(first.SequenceNumber) {
		t.Fatalf("duplicate answered %v/%v, first %v/%v", aws.ToString(again.MessageId), aws.ToString(again.SequenceNumber),
			aws.ToString(first.MessageId), aws.ToString(first.SequenceNumber))
	}
	otherGroup := pub("a", "h", "d1") // FifoThroughputScope Topic: still a duplicate
	if aws.ToString(otherGroup.MessageId) != aws.ToString(first.MessageId) {
		t.Fatal("the topic-wide scope did not deduplicate across groups")
	}
	cb1 := pub("same body", "g", "") // content-based: SHA-256 of the body
	cb2 := pub("same body", "g", "")
	if aws.ToString(cb1.MessageId) != aws.ToString(cb2.MessageId) {
		t.Fatal("content-based deduplication did not apply")
	}
	if got := bodies(); len(got) != 2 {
		t.Fatalf("queue got %v, want [a, same body]", got)
	}

	clk.Advance(sns.DedupWindow - time.Second)
	if out := pub("a", "g", "d1"); aws.ToString(out.MessageId) != aws.ToString(first.MessageId) {
		t.Fatal("forgot the id within the window")
	}
	clk.Advance(time.Second)
	later := pub("a-later", "g", "d1")
	if aws.ToString(later.MessageId) == aws.ToString(first.MessageId) || aws.ToString(later.SequenceNumber) <= aws.ToString(first.SequenceNumber) {
		t.Fatalf("after the window: %v/%v", aws.ToString(later.MessageId), aws.ToString(later.SequenceNumber))
	}
	if got := bodies(); len(got) != 1 || got[0] != "a-later" {
		t.Fatalf("queue got %v after the window", got)
	}

	// Duplicates inside one PublishBatch, and the MessageGroup scope.
	out, err := e.sns.PublishBatch(e.ctx, &awssns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("1"), Message: aws.String("b1"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("b")},
		{Id: aws.String("2"), Message: aws.String("b2"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("b")},
	}})
	if err != nil || len(out.Successful) != 2 || aws.ToString(out.Successful[0].MessageId) != aws.ToString(out.Successful[1].MessageId) {
		t.Fatalf("PublishBatch = %+v %v", out, err)
	}
	if _, err := e.sns.SetTopicAttributes(e.ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(topic),
		AttributeName: aws.String("FifoThroughputScope"), AttributeValue: aws.String("MessageGroup")}); err != nil {
		t.Fatal(err)
	}
	pub("c", "g1", "c")
	pub("c", "g2", "c") // another group: not a duplicate now
	pub("c", "g2", "c")
	if got := bodies(); len(got) != 3 {
		t.Fatalf("queue got %v, want [b1 c c]", got)
	}
	if st := e.svc.Stats(); st.Duplicates != 6 {
		t.Fatalf("stats = %+v", st)
	}
}
