package authz

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/tidemq/tidemq"
)

// Several accounts on one server: each account's queues are named
// "<account>:<name>" by the broker (tidemq.AccountQueueName) and their ARNs
// carry the account. Team B (222222222222, allowed sqs:SendMessage on "*")
// is another account than the server's: its own queues are its own, a
// queue of account 000000000000 needs both policies, as AWS evaluates
// cross-account access.
func TestAccountsTable(t *testing.T) {
	const b = "222222222222"
	policies := map[string]string{
		// Account 0's queue allowing account B to send.
		"a-shared": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},"Action":"sqs:SendMessage"}]}`,
		// Account 0's queue allowing team B by its user ARN, but denying everyone receives.
		"a-user": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:user/team-b"},"Action":["sqs:SendMessage","sqs:ReceiveMessage"]},` +
			`{"Effect":"Deny","Principal":"*","Action":"sqs:ReceiveMessage"}]}`,
		// B's queue allowing team-a of account 0 everything.
		b + ":b-open": `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"000000000000"},"Action":"sqs:*"}]}`,
		// Broken policies, in both accounts.
		"a-broken":          `{"Statement":`,
		b + ":b-broken":     `not json`,
		b + ":b-unreadable": `{"Statement":[{"Effect":"Deny","Principal":"*","Action":"sqs:*","Condition":{"NoSuchOperator":{"aws:SourceArn":"x"}}}]}`,
	}
	a, _ := newAuthorizer(t, policies)
	r := httptest.NewRequest("POST", "/", nil)
	q0 := func(name string) string { return tidemq.QueueARN("us-east-1", account, name) }
	qb := func(name string) string { return tidemq.QueueARN("us-east-1", b, name) }
	for _, c := range []struct {
		why                   string
		key, action, resource string
		ok                    bool
	}{
		{"B in its own account: its identity policy", "AKIDB", "sqs:SendMessage", qb("b-own"), true},
		{"B in its own account: nothing else allowed", "AKIDB", "sqs:ReceiveMessage", qb("b-own"), false},
		{"cross-account, no queue policy", "AKIDB", "sqs:SendMessage", q0("a-private"), false},
		{"cross-account, the queue policy names B's account", "AKIDB", "sqs:SendMessage", q0("a-shared"), true},
		{"cross-account, allowed by the queue policy but not by B's identity", "AKIDB", "sqs:ReceiveMessage", q0("a-user"), false},
		{"cross-account, the queue policy names B's user", "AKIDB", "sqs:SendMessage", q0("a-user"), true},
		{"team-a into B: B's queue allows account 0 but team-a's identity does not name b-open", "AKIDA", "sqs:SendMessage", qb("b-open"), false},
		{"team-a into B: a queue named a-* in B is not team-a's (the ARN's account differs)", "AKIDA", "sqs:SendMessage", qb("a-x"), false},
		{"account 0's root into B: B's policy allows account 0", "AKIDOPS", "sqs:ReceiveMessage", qb("b-open"), true},
		{"account 0's root into B: no policy, not its account", "AKIDOPS", "sqs:DeleteQueue", qb("b-own"), false},
		{"account 0's root in its own account", "AKIDOPS", "sqs:DeleteQueue", q0("a-private"), true},
		// A policy nobody can parse: its own account's root and repairs go on.
		{"broken: the owner's root may do anything", "AKIDOPS", "sqs:ReceiveMessage", q0("a-broken"), true},
		{"broken: the owner's principal may repair it", "AKIDA", "sqs:SetQueueAttributes", q0("a-broken"), true},
		{"broken: the owner's principal may read it", "AKIDA", "sqs:GetQueueAttributes", q0("a-broken"), true},
		{"broken: but not use the queue", "AKIDA", "sqs:ReceiveMessage", q0("a-broken"), false},
		{"broken: another account gets nothing", "AKIDB", "sqs:SendMessage", q0("a-broken"), false},
		{"broken in B: account 0's root gets nothing", "AKIDOPS", "sqs:SetQueueAttributes", qb("b-broken"), false},
		{"broken in B: B's principal may not use it", "AKIDB", "sqs:SendMessage", qb("b-broken"), false},
		{"an unsupported operator in B: denies a cross-account caller", "AKIDOPS", "sqs:GetQueueAttributes", qb("b-unreadable"), false},
	} {
		err := a.Authorize(r, c.key, c.action, c.resource)
		if (err == nil) != c.ok {
			t.Errorf("%s: %s %s %s: %v, want allowed %v", c.why, c.key, c.action, c.resource, err, c.ok)
		}
		if err != nil && !tidemq.HasCode(err, tidemq.ErrAccessDenied) {
			t.Errorf("%s: a refusal is not AccessDenied: %v", c.why, err)
		}
	}
	if got := a.CallerAccount("AKIDB"); got != b {
		t.Errorf("CallerAccount(AKIDB) = %q, want %q", got, b)
	}
	if got := a.CallerAccount("AKIDA"); got != account {
		t.Errorf("CallerAccount(AKIDA) = %q, want the server's %q", got, account)
	}
	if got := a.CallerAccount("AKIDGONE"); got != "" {
		t.Errorf("CallerAccount(AKIDGONE) = %q, want none", got)
	}
	// SNS of another account's topic into account 0's queue: the queue's
	// policy decides, by the topic's ARN.
	a.QueuePolicy = func(_ context.Context, q string) (string, error) {
		if q == "a-in" {
			return `{"Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Condition":{"ArnEquals":{"aws:SourceArn":"arn:aws:sns:us-east-1:222222222222:t"}}}]}`, nil
		}
		return "", nil
	}
	if err := a.DeliveryCheck(context.Background(), "arn:aws:sns:us-east-1:222222222222:t", q0("a-in")); err != nil {
		t.Errorf("B's topic into account 0's queue that allows it: %v", err)
	}
	if err := a.DeliveryCheck(context.Background(), "arn:aws:sns:us-east-1:000000000000:t", q0("a-in")); err == nil {
		t.Error("account 0's topic of the same name was let in: the ARN's account was not compared")
	}
}
