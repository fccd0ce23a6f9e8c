package authz

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/tidemq/tidemq"
)

const topicPrincipals = `principals:
  - name: team-a
    keys: ["AKIDA:secret-a"]
    policy: {Statement: [{Effect: Allow, Action: "sns:*", Resource: "arn:aws:sns:*:000000000000:a-*"}]}
  - name: team-c                 # the same account, no SNS rights of its own
    keys: ["AKIDC:secret-c"]
    policy: {Statement: [{Effect: Allow, Action: "sqs:*", Resource: "arn:aws:sqs:*:000000000000:c-*"}]}
  - name: team-b                 # another account
    account: "222222222222"
    keys: ["AKIDB:secret-b"]
    policy: {Statement: [{Effect: Allow, Action: "sns:Publish", Resource: "*"}]}
  - name: ops
    root: true
    keys: ["AKIDOPS:secret-ops"]
`

// defaultTopicPolicy is AWS's default topic policy (sns.Service writes it
// for a topic without a Policy of its own).
func defaultTopicPolicy(arn string) string {
	return `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},` +
		`"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],` +
		`"Resource":"` + arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"000000000000"}}}]}`
}

func topicARN(name string) string { return "arn:aws:sns:us-east-1:" + account + ":" + name }

// A topic's policy decides calls on it as a queue's does: an allow for a
// principal its own policy does not allow, an explicit deny that beats
// every allow (the root user's too), an account named by AddPermission
// that lets another account's principal in when its own policy allows,
// and AWS's default topic policy, which grants a principal nothing by
// itself (aws:SourceOwner is absent from a principal's own call).
func TestTopicPolicies(t *testing.T) {
	s, err := NewStore(writeFile(t, t.TempDir(), topicPrincipals), account, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{
		"a-default": defaultTopicPolicy(topicARN("a-default")),
		"a-open-to-c": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/team-c"},` +
			`"Action":["sns:Publish","sns:Subscribe"],"Resource":"` + topicARN("a-open-to-c") + `"}]}`,
		"a-public": `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sns:Subscribe"}]}`,
		"a-no-delete": `{"Statement":[{"Sid":"Keep","Effect":"Deny","Principal":"*","Action":"sns:DeleteTopic"},` +
			`{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sns:*"}]}`,
		// As AddPermission writes it (account 222222222222, Publish).
		"a-to-b": `{"Statement":[{"Sid":"grant-b","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::222222222222:root"]},` +
			`"Action":["SNS:Publish"],"Resource":"` + topicARN("a-to-b") + `"}]}`,
		"a-source-account": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sns:Publish",` +
			`"Condition":{"StringEquals":{"aws:SourceAccount":"000000000000"}}}]}`,
		"a-source-account-ifexists": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:user/team-c"},"Action":"sns:Publish",` +
			`"Condition":{"StringEqualsIfExists":{"aws:SourceAccount":"000000000000"}}}]}`,
		"a-https-only": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sns:Subscribe",` +
			`"Condition":{"StringEquals":{"sns:Protocol":"https"}}}]}`,
		"a-broken": `{"Statement":`,
	}
	reads := 0
	a := &Authorizer{Store: s, Account: account, Region: "us-east-1",
		TopicPolicy: func(_ context.Context, arn string) (string, error) {
			reads++
			name := arn[len(topicARN("")):]
			if p, ok := policies[name]; ok {
				return p, nil
			}
			return "", &tidemq.Error{Code: tidemq.ErrSNSNotFound, Message: "Topic does not exist"}
		}}
	r := httptest.NewRequest("POST", "/", nil)
	for _, c := range []struct {
		key, action, topic string
		ok                 bool
	}{
		// The default policy: the principals' own policies decide.
		{"AKIDA", "sns:Publish", "a-default", true},
		{"AKIDC", "sns:Publish", "a-default", false},
		{"AKIDB", "sns:Publish", "a-default", false}, // cross-account: the topic does not allow it
		{"AKIDOPS", "sns:DeleteTopic", "a-default", true},
		// An allow naming a principal of the account suffices.
		{"AKIDC", "sns:Publish", "a-open-to-c", true},
		{"AKIDC", "sns:Subscribe", "a-open-to-c", true},
		{"AKIDC", "sns:DeleteTopic", "a-open-to-c", false},
		{"AKIDC", "sns:Subscribe", "a-public", true},
		{"AKIDC", "sns:Publish", "a-public", false},
		// An explicit deny wins over the identity policy, the root user and
		// the topic's own allow.
		{"AKIDA", "sns:DeleteTopic", "a-no-delete", false},
		{"AKIDOPS", "sns:DeleteTopic", "a-no-delete", false},
		{"AKIDC", "sns:DeleteTopic", "a-no-delete", false},
		{"AKIDC", "sns:Publish", "a-no-delete", true},
		// Another account: its own policy and the topic's must allow.
		{"AKIDB", "sns:Publish", "a-to-b", true},
		{"AKIDB", "sns:Subscribe", "a-to-b", false},
		{"AKIDC", "sns:Publish", "a-to-b", false}, // the account's root, not its users
		// aws:SourceAccount is set when a service acts for a resource, never
		// in a principal's own call: an equality on it does not hold, its
		// IfExists form does.
		{"AKIDC", "sns:Publish", "a-source-account", false},
		{"AKIDC", "sns:Publish", "a-source-account-ifexists", true},
		// A condition tidemq cannot evaluate denies, as a policy that does
		// not parse does; neither stops what it is not about.
		{"AKIDC", "sns:Subscribe", "a-https-only", false},
		{"AKIDA", "sns:Subscribe", "a-broken", false},
		// No such topic: no policy, the identity policy decides (and the
		// call then fails as it would).
		{"AKIDA", "sns:Publish", "a-gone", true},
		{"AKIDC", "sns:Publish", "a-gone", false},
	} {
		err := a.Authorize(r, c.key, c.action, topicARN(c.topic))
		if (err == nil) != c.ok {
			t.Errorf("%s %s %s: %v, want allowed %v", c.key, c.action, c.topic, err, c.ok)
		}
		if err != nil && !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
			t.Errorf("%s %s %s: a refusal is not AccessDenied: %v", c.key, c.action, c.topic, err)
		}
	}
	// A listing's resource (every topic) has no policy to read; another
	// account's topic is a topic of this server too (topics per account),
	// whose policy is read.
	reads = 0
	_ = a.Authorize(r, "AKIDA", "sns:ListTopics", topicARN("*"))
	if reads != 0 {
		t.Errorf("%d topic policies read for a listing, want 0", reads)
	}
	_ = a.Authorize(r, "AKIDB", "sns:Publish", "arn:aws:sns:us-east-1:222222222222:b-own")
	if reads != 1 {
		t.Errorf("%d topic policies read for another account's topic, want 1", reads)
	}
	// A policy that cannot be read fails the call, retryably.
	a.TopicPolicy = func(context.Context, string) (string, error) { return "", errors.New("the store is down") }
	if err := a.Authorize(r, "AKIDA", "sns:Publish", topicARN("a-default")); !tidemq.HasCode(err, tidemq.ErrServiceUnavailable) {
		t.Errorf("the topic's policy unreadable: %v, want ServiceUnavailable", err)
	}
}
