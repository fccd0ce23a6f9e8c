package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"
)

// A team and an application of a partner's account, which may publish
// into the team's topics as far as its own policy goes.
const teamAndPartner = `principals:
  - name: team-a
    keys: ["AKIATEAMA:secret-a"]
    policy: {Statement: [{Effect: Allow, Action: "sns:*", Resource: "arn:aws:sns:*:000000000000:a-*"}]}
  - name: partner-app
    account: "111122223333"
    keys: ["AKIAPARTNERAPP:secret-p"]
    policy: {Statement: [{Effect: Allow, Action: "sns:Publish", Resource: "arn:aws:sns:*:000000000000:a-*"}]}
`

// TestAddPermissionIsEvaluated: SNS AddPermission grants another account
// an action on a topic, and under access control the grant is what lets
// that account's principal in (across accounts both sides must allow);
// RemovePermission takes it back with the next call.
func TestAddPermissionIsEvaluated(t *testing.T) {
	ctx := context.Background()
	client := topicPolicyServer(t, teamAndPartner)
	team, partner := client("AKIATEAMA", "secret-a"), client("AKIAPARTNERAPP", "secret-p")
	out, err := team.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("a-orders")})
	if err != nil {
		t.Fatal(err)
	}
	topic := aws.ToString(out.TopicArn)
	publish := func() error {
		_, err := partner.Publish(ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
		return err
	}
	denied := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "AuthorizationError" {
			t.Errorf("%s: %v, want AuthorizationError", what, err)
		}
	}
	denied("the partner publishing under the default policy", publish())
	if _, err := team.AddPermission(ctx, &awssns.AddPermissionInput{TopicArn: aws.String(topic), Label: aws.String("partner"),
		AWSAccountId: []string{"111122223333"}, ActionName: []string{"Publish"}}); err != nil {
		t.Fatal(err)
	}
	if err := publish(); err != nil {
		t.Errorf("the partner publishing after AddPermission: %v", err)
	}
	_, err = partner.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	denied("the partner reading the topic's attributes (not granted)", err)
	if _, err := team.RemovePermission(ctx, &awssns.RemovePermissionInput{TopicArn: aws.String(topic), Label: aws.String("partner")}); err != nil {
		t.Fatal(err)
	}
	denied("the partner publishing after RemovePermission", publish())
}
