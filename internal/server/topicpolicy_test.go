package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go"

	"github.com/tidemq/tidemq/authz"
	"github.com/tidemq/tidemq/engine"
	"github.com/tidemq/tidemq/internal/server"
	topicstore "github.com/tidemq/tidemq/sns"
	"github.com/tidemq/tidemq/storage/mem"
)

const twoTeams = `principals:
  - name: team-a
    keys: ["AKIATEAMA:secret-a"]
    policy: {Statement: [{Effect: Allow, Action: "sns:*", Resource: "arn:aws:sns:*:000000000000:a-*"}]}
  - name: team-b
    keys: ["AKIATEAMB:secret-b"]
    policy: {Statement: [{Effect: Allow, Action: "sns:*", Resource: "arn:aws:sns:*:000000000000:b-*"}]}
`

// Two principals over the SDK, in-process: a topic's policy lets team B
// publish into team A's topic while it says so (the grant and its removal
// take effect with the next call), an explicit deny in it stops its own
// team, and ListTopics lists each team's own topics (and a topic whose
// policy lets it list it).
func TestTopicPoliciesOverTheSDK(t *testing.T) {
	ctx := context.Background()
	client := topicPolicyServer(t, twoTeams)
	teamA, teamB := client("AKIATEAMA", "secret-a"), client("AKIATEAMB", "secret-b")
	denied := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != "AuthorizationError" {
			t.Errorf("%s: %v, want AuthorizationError", what, err)
		}
	}
	create := func(c *awssns.Client, name string) string {
		t.Helper()
		out, err := c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String(name)})
		if err != nil {
			t.Fatalf("CreateTopic %s: %v", name, err)
		}
		return aws.ToString(out.TopicArn)
	}
	orders, news := create(teamA, "a-orders"), create(teamB, "b-news")
	_, err := teamB.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("a-stolen")})
	denied("team B creating an a- topic", err)
	publish := func(c *awssns.Client, topic string) error {
		_, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
		return err
	}
	setPolicy := func(policy string) {
		t.Helper()
		if _, err := teamA.SetTopicAttributes(ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(orders),
			AttributeName: aws.String("Policy"), AttributeValue: aws.String(policy)}); err != nil {
			t.Fatalf("SetTopicAttributes Policy: %v", err)
		}
	}
	listed := func(c *awssns.Client) []string {
		t.Helper()
		out, err := c.ListTopics(ctx, &awssns.ListTopicsInput{})
		if err != nil {
			t.Fatalf("ListTopics: %v", err)
		}
		var arns []string
		for _, tp := range out.Topics {
			arns = append(arns, aws.ToString(tp.TopicArn))
		}
		sort.Strings(arns)
		return arns
	}
	// The default topic policy lets nobody in by itself.
	denied("team B publishing into team A's topic", publish(teamB, orders))
	if got := listed(teamA); len(got) != 1 || got[0] != orders {
		t.Errorf("team A lists %v, want only %s", got, orders)
	}
	if got := listed(teamB); len(got) != 1 || got[0] != news {
		t.Errorf("team B lists %v, want only %s", got, news)
	}
	// Team A's topic grants team B Publish and ListTopics.
	setPolicy(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/team-b"},` +
		`"Action":["sns:Publish","sns:ListTopics"],"Resource":"` + orders + `"}]}`)
	if err := publish(teamB, orders); err != nil {
		t.Errorf("team B publishing with the grant: %v", err)
	}
	_, err = teamB.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: aws.String(orders), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:b-in")})
	denied("team B subscribing (not granted)", err)
	if got := listed(teamB); len(got) != 2 {
		t.Errorf("team B with the grant lists %v, want its topic and team A's", got)
	}
	// An explicit deny beats team A's own identity policy.
	setPolicy(`{"Statement":[{"Sid":"KeepIt","Effect":"Deny","Principal":"*","Action":"sns:DeleteTopic","Resource":"` + orders + `"}]}`)
	_, err = teamA.DeleteTopic(ctx, &awssns.DeleteTopicInput{TopicArn: aws.String(orders)})
	denied("team A deleting its topic under a deny", err)
	// The grant is gone with the policy that held it: at once.
	denied("team B publishing after the grant's removal", publish(teamB, orders))
	if err := publish(teamA, orders); err != nil {
		t.Errorf("team A publishing into its own topic: %v", err)
	}
	setPolicy("") // back to the default policy
	if _, err := teamA.DeleteTopic(ctx, &awssns.DeleteTopicInput{TopicArn: aws.String(orders)}); err != nil {
		t.Errorf("team A deleting its topic without the deny: %v", err)
	}
}

// topicPolicyServer serves the SQS and SNS protocols in-process under
// access control, for the principals file principals (YAML), on the
// embedded engine, and gives an SNS client for a key and its secret (no
// retries: a refusal is seen as it is).
func topicPolicyServer(t *testing.T, principals string) func(key, secret string) *awssns.Client {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	path := filepath.Join(t.TempDir(), "principals.yaml")
	if err := os.WriteFile(path, []byte(principals), 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := authz.NewStore(path, "000000000000", nil, log)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Open(engine.Options{Store: mem.New(), Region: "us-east-1", AccountID: "000000000000", SweepInterval: -1, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := topicstore.Open(topicstore.Options{Broker: eng, Region: "us-east-1", AccountID: "000000000000", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	a := &authz.Authorizer{Store: store, Account: "000000000000", Region: "us-east-1", Logger: log,
		TopicPolicy: func(_ context.Context, arn string) (string, error) { return svc.TopicPolicy(arn) }}
	srv := httptest.NewServer(server.Protocols(server.ProtocolOptions{Broker: eng, Topics: svc, Region: "us-east-1",
		AccountID: "000000000000", Auth: &authz.Authenticator{Store: store, Services: []string{"sqs"}}, Authorizer: a, Logger: log}))
	t.Cleanup(func() {
		srv.Close()
		_ = svc.Close()
		_ = eng.Close()
	})
	return func(key, secret string) *awssns.Client {
		return awssns.New(awssns.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), Retryer: retry.AddWithMaxAttempts(retry.NewStandard(), 1)})
	}
}
