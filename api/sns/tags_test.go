package sns_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
)

func TestTopicTags(t *testing.T) { onBothStores(t, checkTopicTags) }

func checkTopicTags(t *testing.T, e *env) {
	out, err := e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String("tagged"),
		Tags: []snstypes.Tag{{Key: aws.String("team"), Value: aws.String("orders")}}})
	if err != nil {
		t.Fatal(err)
	}
	topic := aws.ToString(out.TopicArn)
	list := func() string {
		t.Helper()
		lt, err := e.sns.ListTagsForResource(e.ctx, &awssns.ListTagsForResourceInput{ResourceArn: aws.String(topic)})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, tag := range lt.Tags {
			s += aws.ToString(tag.Key) + "=" + aws.ToString(tag.Value) + ";"
		}
		return s
	}
	if got := list(); got != "team=orders;" {
		t.Fatalf("tags = %s", got)
	}

	// CreateTopic stays idempotent with the same (or a subset of the)
	// tags, and refuses different ones.
	if _, err := e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String("tagged"),
		Tags: []snstypes.Tag{{Key: aws.String("team"), Value: aws.String("orders")}}}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String("tagged"),
		Tags: []snstypes.Tag{{Key: aws.String("team"), Value: aws.String("billing")}}})
	wantCode(t, err, "InvalidParameter")

	if _, err := e.sns.TagResource(e.ctx, &awssns.TagResourceInput{ResourceArn: aws.String(topic), Tags: []snstypes.Tag{
		{Key: aws.String("env"), Value: aws.String("ci")}, {Key: aws.String("team"), Value: aws.String("billing")},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "env=ci;team=billing;" {
		t.Fatalf("after TagResource: %s", got)
	}
	if _, err := e.sns.UntagResource(e.ctx, &awssns.UntagResourceInput{ResourceArn: aws.String(topic), TagKeys: []string{"team", "absent"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(); got != "env=ci;" {
		t.Fatalf("after UntagResource: %s", got)
	}

	// 50 tags at most.
	var many []snstypes.Tag
	for i := range 50 {
		many = append(many, snstypes.Tag{Key: aws.String(fmt.Sprintf("k%02d", i)), Value: aws.String("v")})
	}
	_, err = e.sns.TagResource(e.ctx, &awssns.TagResourceInput{ResourceArn: aws.String(topic), Tags: many})
	wantCode(t, err, "TagLimitExceeded")
	var tle *snstypes.TagLimitExceededException
	if !errors.As(err, &tle) {
		t.Fatalf("want a TagLimitExceededException, got %T", err)
	}
	if _, err := e.sns.TagResource(e.ctx, &awssns.TagResourceInput{ResourceArn: aws.String(topic), Tags: many[:49]}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.CreateTopic(e.ctx, &awssns.CreateTopicInput{Name: aws.String("crowded"), Tags: append(many, snstypes.Tag{Key: aws.String("x"), Value: aws.String("y")})})
	wantCode(t, err, "TagLimitExceeded")

	// Errors: a missing topic, a malformed ARN, bad keys.
	missing := "arn:aws:sns:us-east-1:" + account + ":nope"
	_, err = e.sns.ListTagsForResource(e.ctx, &awssns.ListTagsForResourceInput{ResourceArn: aws.String(missing)})
	wantCode(t, err, "ResourceNotFound")
	var rnf *snstypes.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("want a ResourceNotFoundException, got %T", err)
	}
	_, err = e.sns.TagResource(e.ctx, &awssns.TagResourceInput{ResourceArn: aws.String(missing), Tags: many[:1]})
	wantCode(t, err, "ResourceNotFound")
	_, err = e.sns.UntagResource(e.ctx, &awssns.UntagResourceInput{ResourceArn: aws.String("nope"), TagKeys: []string{"a"}})
	wantCode(t, err, "InvalidParameter")
	_, err = e.sns.TagResource(e.ctx, &awssns.TagResourceInput{ResourceArn: aws.String(topic), Tags: []snstypes.Tag{{Key: aws.String(""), Value: aws.String("v")}}})
	wantCode(t, err, "InvalidParameter")
}
