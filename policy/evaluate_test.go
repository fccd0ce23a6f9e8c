package policy

import (
	"strings"
	"testing"
)

const (
	acctA = "111111111111"
	acctB = "222222222222"
	queue = "arn:aws:sqs:us-east-1:111111111111:orders"
	topic = "arn:aws:sns:us-east-1:222222222222:events"
)

var (
	alice = Principal{ARN: "arn:aws:iam::111111111111:user/alice", Account: acctA}
	bob   = Principal{ARN: "arn:aws:iam::111111111111:user/bob", Account: acctA}
	carol = Principal{ARN: "arn:aws:iam::222222222222:user/carol", Account: acctB}
	rootA = Principal{ARN: "arn:aws:iam::111111111111:root", Account: acctA, Root: true}
	sns   = Principal{Service: "sns.amazonaws.com"}
)

func mustParse(t *testing.T, s string) *Document {
	t.Helper()
	if s == "" {
		return nil
	}
	d, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

// The cases follow the IAM User Guide's policy evaluation logic: the
// single-account rule (either policy allows), the cross-account rule
// (both must), explicit deny over any allow, the implicit deny, and the
// condition rules (a missing key fails a positive operator and satisfies
// a negated one; IfExists holds when the key is absent).
func TestDecide(t *testing.T) {
	allowAll := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"sqs:*","Resource":"*"}}`
	ordersOnly := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:SendMessage","sqs:Receive*"],"Resource":"arn:aws:sqs:*:111111111111:ord?rs"}]}`
	denyPurge := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"},{"Sid":"NoPurge","Effect":"Deny","Action":"sqs:PurgeQueue","Resource":"*"}]}`
	grantBob := `{"Version":"2012-10-17","Statement":[{"Sid":"b","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111111111111:user/bob"},"Action":"sqs:SendMessage","Resource":"` + queue + `"}]}`
	grantAcctB := `{"Version":"2008-10-17","Id":"x/SQSDefaultPolicy","Statement":[{"Sid":"lbl","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},"Action":"SQS:SendMessage","Resource":"` + queue + `"}]}`
	grantCarol := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam::222222222222:user/carol"]},"Action":"sqs:SendMessage"}]}`
	denyAnyone := `{"Statement":[{"Sid":"Lock","Effect":"Deny","Principal":"*","Action":"sqs:DeleteQueue"}]}`
	denyAcctA := `{"Statement":[{"Effect":"Deny","Principal":{"AWS":"111111111111"},"Action":"sqs:*"}]}`
	snsTopic := `{"Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + queue + `","Condition":{"ArnEquals":{"aws:SourceArn":"` + topic + `"}}}]}`
	snsStar := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"SQS:SendMessage","Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:sns:*:222222222222:*"}}}]}`
	notAction := `{"Statement":[{"Effect":"Allow","NotAction":["sqs:DeleteQueue","sqs:Purge*"],"Resource":"*"}]}`
	notResource := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","NotResource":"arn:aws:sqs:*:*:payments*"}]}`
	negated := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"StringNotEquals":{"aws:SourceAccount":"999999999999"}}}]}`
	positive := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"StringEquals":{"aws:SourceAccount":"222222222222"}}}]}`
	ifExists := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"StringEqualsIfExists":{"aws:SourceAccount":"222222222222"}}}]}`
	nullCheck := `{"Statement":[{"Effect":"Deny","Action":"sqs:*","Resource":"*","Condition":{"Null":{"aws:SourceArn":"false"}}},{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}`
	ipRange := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"IpAddress":{"aws:SourceIp":["10.0.0.0/8","192.168.1.7"]}}}]}`
	twoKeys := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"StringEquals":{"aws:SourceAccount":"222222222222","aws:SourceArn":"` + topic + `"}}}]}`
	unsupportedKey := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"},{"Effect":"Deny","Action":"sqs:PurgeQueue","Resource":"*","Condition":{"StringEquals":{"aws:PrincipalTag/team":"a"}}}]}`
	unsupportedOp := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"DateLessThan":{"aws:CurrentTime":"2030-01-01T00:00:00Z"}}}]}`
	unsupportedSet := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*","Condition":{"ForAnyValue:StringEquals":{"aws:SourceAccount":["1"]}}}]}`
	unsupportedElsewhere := `{"Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"},{"Effect":"Deny","Action":"sns:*","Resource":"*","Condition":{"DateLessThan":{"aws:CurrentTime":"x"}}}]}`

	send := func(p Principal) Request {
		return Request{Principal: p, Action: "sqs:SendMessage", Resource: queue, ResourceAccount: acctA}
	}
	with := func(r Request, action string, ctx map[string]string) Request {
		if action != "" {
			r.Action = action
		}
		r.Context = ctx
		return r
	}
	onQueue := func(r Request, arn string) Request { r.Resource = arn; return r }
	fromTopic := map[string]string{KeySourceArn: topic, KeySourceAccount: acctB}

	cases := []struct {
		name               string
		identity, resource string
		req                Request
		allowed            bool
		reason             string // a part of Decision.Reason
	}{
		{"implicit deny: no policy at all", "", "", send(alice), false, "no identity-based policy"},
		{"identity allows, same account", allowAll, "", send(alice), true, ""},
		{"wildcards in action and resource", ordersOnly, "", with(send(alice), "sqs:ReceiveMessage", nil), true, ""},
		{"action outside the wildcard", ordersOnly, "", with(send(alice), "sqs:DeleteMessage", nil), false, ""},
		{"resource outside the wildcard", ordersOnly, "", onQueue(send(alice), "arn:aws:sqs:us-east-1:111111111111:orders-dlq"), false, ""},
		{"actions ignore case", `{"Statement":{"Effect":"Allow","Action":"SQS:sendmessage","Resource":"*"}}`, "", send(alice), true, ""},
		{"resources do not ignore case", `{"Statement":{"Effect":"Allow","Action":"sqs:*","Resource":"arn:aws:sqs:*:*:Orders"}}`, "", send(alice), false, ""},
		{"explicit deny in the identity policy wins", denyPurge, "", with(send(alice), "sqs:PurgeQueue", nil), false, "explicit deny in an identity-based policy (NoPurge)"},
		{"the deny leaves other actions allowed", denyPurge, "", send(alice), true, ""},
		{"same account: the resource policy alone allows the named user", "", grantBob, send(bob), true, ""},
		{"same account: not another user", "", grantBob, send(alice), false, ""},
		{"same account: the resource policy's deny beats the identity allow", allowAll, denyAnyone, with(send(alice), "sqs:DeleteQueue", nil), false, "explicit deny in a resource-based policy (Lock)"},
		{"a deny naming the account covers its users", allowAll, denyAcctA, send(alice), false, "explicit deny"},
		{"the root user is allowed in its account", "", "", send(rootA), true, ""},
		{"the root user is not above an explicit deny", "", denyAnyone, with(send(rootA), "sqs:DeleteQueue", nil), false, "explicit deny"},
		{"cross-account: the resource policy alone is not enough", "", grantAcctB, send(carol), false, "no identity-based policy"},
		{"cross-account: the identity policy alone is not enough", allowAll, "", send(carol), false, "no resource-based policy"},
		{"cross-account: both allow (AddPermission's account grant)", allowAll, grantAcctB, send(carol), true, ""},
		{"cross-account: both allow (the user named)", allowAll, grantCarol, send(carol), true, ""},
		{"cross-account: the grant is for SendMessage only", allowAll, grantAcctB, with(send(carol), "sqs:ReceiveMessage", nil), false, "no resource-based policy"},
		{"service principal with the topic's ARN", "", snsTopic, with(send(sns), "", fromTopic), true, ""},
		{"service principal from another topic", "", snsTopic, with(send(sns), "", map[string]string{KeySourceArn: topic + "2"}), false, "no resource-based policy"},
		{"service principal without a source", "", snsTopic, send(sns), false, ""},
		{"service principal ignores identity policies", allowAll, "", with(send(sns), "", fromTopic), false, ""},
		{"Principal AWS * with ArnLike covers SNS", "", snsStar, with(send(sns), "", fromTopic), true, ""},
		{"NotAction allows what it does not name", notAction, "", send(alice), true, ""},
		{"NotAction does not allow what it names", notAction, "", with(send(alice), "sqs:PurgeQueue", nil), false, ""},
		{"NotResource", notResource, "", onQueue(send(alice), "arn:aws:sqs:us-east-1:111111111111:payments-dlq"), false, ""},
		{"NotResource elsewhere", notResource, "", send(alice), true, ""},
		{"negated operator holds when the key is missing", negated, "", send(alice), true, ""},
		{"positive operator fails when the key is missing", positive, "", send(alice), false, ""},
		{"positive operator with the key", positive, "", with(send(alice), "", fromTopic), true, ""},
		{"IfExists holds when the key is missing", ifExists, "", send(alice), true, ""},
		{"IfExists checks a present key", ifExists, "", with(send(alice), "", map[string]string{KeySourceAccount: "3"}), false, ""},
		{"Null false denies when the key is present", nullCheck, "", with(send(alice), "", fromTopic), false, "explicit deny"},
		{"Null false does not apply when absent", nullCheck, "", send(alice), true, ""},
		{"IpAddress in the block", ipRange, "", with(send(alice), "", map[string]string{KeySourceIP: "10.1.2.3"}), true, ""},
		{"IpAddress the one address", ipRange, "", with(send(alice), "", map[string]string{KeySourceIP: "192.168.1.7"}), true, ""},
		{"IpAddress outside", ipRange, "", with(send(alice), "", map[string]string{KeySourceIP: "192.168.1.8"}), false, ""},
		{"keys of one operator: AND", twoKeys, "", with(send(alice), "", map[string]string{KeySourceAccount: acctB}), false, ""},
		{"keys of one operator: both hold", twoKeys, "", with(send(alice), "", fromTopic), true, ""},
		{"unsupported key denies, even in a deny statement", unsupportedKey, "", with(send(alice), "sqs:PurgeQueue", nil), false, "aws:PrincipalTag/team is not supported"},
		{"unsupported key in a statement that does not apply", unsupportedKey, "", send(alice), true, ""},
		{"unsupported operator denies", unsupportedOp, "", send(alice), false, "DateLessThan is not supported"},
		{"set qualifiers deny", unsupportedSet, "", send(alice), false, "set qualifiers"},
		{"unsupported condition on another service is not consulted", unsupportedElsewhere, "", send(alice), true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(mustParse(t, c.identity), mustParse(t, c.resource), c.req)
			if d.Allowed != c.allowed {
				t.Fatalf("Allowed = %v, want %v (reason: %s)", d.Allowed, c.allowed, d.Reason)
			}
			if c.reason != "" && !strings.Contains(d.Reason, c.reason) {
				t.Fatalf("Reason = %q, want it to contain %q", d.Reason, c.reason)
			}
			if strings.Contains(c.name, "unsupported") && !c.allowed && !d.Unsupported {
				t.Fatalf("Unsupported not set: %+v", d)
			}
		})
	}
}

func TestLike(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"*", "abc", true}, {"a*c", "abc", true}, {"a*c", "ac", true},
		{"a*c", "abd", false}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"*b*", "abc", true},
		{"a*b*c", "aXbYbZc", true}, {"a*b*c", "aXbYbZ", false}, {"", "", true}, {"", "a", false},
		{strings.Repeat("*a", 30), strings.Repeat("a", 29) + "b", false}, // no exponential backtracking
	} {
		if got := Like(c.p, c.s); got != c.want {
			t.Errorf("Like(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
	if matchARN("arn:aws:sqs:*:111111111111:*", "arn:aws:sqs:us-east-1:111111111111:a:b") != true {
		t.Error("the resource part may hold colons")
	}
	if !matchARN("arn:aws:sqs:*", "arn:aws:sqs:us-east-1:1:q") {
		t.Error("a pattern of fewer parts is matched as a whole")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"Statement":[]}`, "no Statement"},
		{`{"Version":"2020-01-01","Statement":{"Effect":"Allow","Action":"*"}}`, "Version"},
		{`{"Statement":{"Effect":"Maybe","Action":"*"}}`, "Effect"},
		{`{"Statement":{"Effect":"Allow"}}`, "exactly one of Action and NotAction"},
		{`{"Statement":{"Effect":"Allow","Action":"SendMessage"}}`, "service:Action"},
		{`{"Statement":{"Effect":"Allow","Action":"*","Resource":"*","NotResource":"*"}}`, "not both"},
		{`{"Statement":{"Effect":"Allow","Action":"*","NotPrincipal":"*"}}`, "NotPrincipal"},
		{`{"Statement":{"Effect":"Allow","Action":"*","Principal":{"Federated":"x"}}}`, "Federated"},
		{`{"Statement":{"Effect":"Allow","Action":"*","Principal":"alice"}}`, "Principal"},
		{`{"Statement":{"Sid":"S1","Effect":"Allow","Action":"*","Condition":{"StringEquals":{"aws:SourceArn":{"x":1}}}}}`, "statement 1 (S1)"},
		{`{"Statement":{"Effect":"Allow","Action":"*"},"Extra":1}`, "unknown field"},
	} {
		if _, err := Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", c.doc, err, c.want)
		}
	}
	d, err := Parse([]byte(`{"Statement":{"Sid":"T","Effect":"Allow","Action":"*","Resource":"*","Condition":{"StringLike":{"aws:PrincipalTag/x":"y"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), "statement 1 (T)") {
		t.Errorf("Check = %v, want the unsupported key named with its statement", err)
	}
}
