package topology

import (
	"strings"
	"testing"

	"github.com/tidemq/tidemq/authz"
)

// The permissions rules with the real evaluator (package authz): a thief's
// trigger on another team's queue, a subscription the queue's policy
// refuses next to one it allows, and a DLQ nobody may redrive next to one
// its team may.
func TestLintAccess(t *testing.T) {
	c, _, err := Load("testdata/access.tidemq.yaml", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := authz.LoadFile("testdata/access.principals.yaml", "000000000000")
	if err != nil {
		t.Fatal(err)
	}
	fs := LintWith(c, LintOptions{Permissions: authz.Offline{Dir: dir, Account: "000000000000"}, Region: "us-east-1", AccountID: "000000000000"})
	got := map[string]bool{}
	for _, f := range fs {
		if f.Rule == RuleTriggerAccess || f.Rule == RuleSubscriptionPolicy || f.Rule == RuleDLQRedrive {
			got[f.Rule+" "+f.Resource] = true
			if f.Line == 0 || f.Hint == "" {
				t.Errorf("finding without a line or a fix: %v", f)
			}
		}
	}
	want := []string{
		"TQ019 triggers[b-thief.team-a-orders]",
		"TQ020 topics[team-b-events].subscriptions[sqs:team-a-orders]",
		"TQ021 queues[shared-dlq]",
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("missing finding %s; got %v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want exactly %v (the allowed trigger, subscription and DLQ pass)", got, want)
	}
	// Without a permissions file, none of these rules runs.
	for _, f := range Lint(c) {
		if strings.HasPrefix(f.Rule, "TQ019") || f.Rule == RuleSubscriptionPolicy || f.Rule == RuleDLQRedrive {
			t.Errorf("permission finding without permissions: %v", f)
		}
	}
}

// A queue or topic policy the server cannot evaluate (it does not parse,
// or it has an unsupported condition) is an error with a permissions file.
func TestLintResourcePolicy(t *testing.T) {
	c, err := Parse([]byte(`version: 1
queues:
  - name: ok
    redrivePolicy: {deadLetterQueue: ok-dlq, maxReceiveCount: 3}
    policy: '{"Statement":[{"Effect":"Allow","Principal":{"AWS":"111122223333"},"Action":"sqs:SendMessage"}]}'
  - name: ok-dlq
  - name: broken
    redrivePolicy: {deadLetterQueue: ok-dlq, maxReceiveCount: 3}
    policy: '{"Statement":'
topics:
  - name: https-only
    policy: '{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sns:Subscribe","Condition":{"StringEquals":{"sns:Protocol":"https"}}}]}'
`))
	if err != nil {
		t.Fatal(err)
	}
	dir, err := authz.LoadFile("testdata/access.principals.yaml", "000000000000")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range LintWith(c, LintOptions{Permissions: authz.Offline{Dir: dir, Account: "000000000000"}, Region: "us-east-1", AccountID: "000000000000"}) {
		if f.Rule == RuleResourcePolicy {
			got = append(got, f.Resource)
			if f.Line == 0 {
				t.Errorf("finding without a line: %v", f)
			}
		}
	}
	if len(got) != 2 || !strings.Contains(got[0]+got[1], "broken") || !strings.Contains(got[0]+got[1], "https-only") {
		t.Fatalf("TQ022 findings on %v, want the broken queue and the https-only topic", got)
	}
	for _, f := range Lint(c) {
		if f.Rule == RuleResourcePolicy {
			t.Errorf("TQ022 without permissions: %v", f)
		}
	}
}
